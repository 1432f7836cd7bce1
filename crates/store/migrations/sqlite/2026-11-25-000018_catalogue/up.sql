-- The catalogue's derived tables, written by the build (`cargo xtask build`, and the manifest
-- loader the embedded default's first start runs), read by `GET /v1/areas/coverage` and
-- `GET /v1/catalogue/areas`.
--
-- coverage_register: one row per local authority district, the coverage register row of
-- specification part 2.8 as the build computed it (a JSON document: per-field shares, the
-- designation datasets checked, link shares, planning coverage, the listing sweep, every known
-- dataset loaded or not_loaded).
CREATE TABLE coverage_register (
    lad_code TEXT PRIMARY KEY NOT NULL,
    name TEXT,
    addresses BIGINT NOT NULL,
    register_json TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

-- catalogue_areas: the market areas the market build publishes (postcode areas, districts, local
-- authorities), keyed by area id (`district:EX1`, `lad:E07000041`), with their counts.
CREATE TABLE catalogue_areas (
    area_id TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    name TEXT,
    parent TEXT,
    addresses BIGINT NOT NULL,
    sales BIGINT NOT NULL,
    index_periods BIGINT NOT NULL,
    forecast_periods BIGINT NOT NULL,
    last_settled TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX catalogue_areas_kind_idx ON catalogue_areas (kind, area_id);
