-- Local Housing Allowance: the weekly rate of each broad rental market area (BRMA) and category
-- (shared accommodation, 1 to 4 bedrooms), and the postcode units, sectors or districts each
-- BRMA covers. Keys are composite texts so one loader path serves both tables.
CREATE TABLE lha_rates (
    rate_key TEXT PRIMARY KEY NOT NULL,
    brma TEXT NOT NULL,
    brma_code TEXT,
    category TEXT NOT NULL,
    weekly_rate_pence BIGINT NOT NULL,
    valid_from DATE,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX lha_rates_brma_idx ON lha_rates (brma);

CREATE TABLE brma_areas (
    area_key TEXT PRIMARY KEY NOT NULL,
    area TEXT NOT NULL,
    area_kind TEXT NOT NULL,
    brma TEXT NOT NULL,
    brma_code TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX brma_areas_area_idx ON brma_areas (area);
