-- Areas of every kind: the postcode directory's ward, MSOA, county and region of each postcode;
-- the ONS names and codes (a name for a GSS code of any kind); OS Open Names populated places;
-- the resolution-8 H3 cell of every address with a position (a derived step).
ALTER TABLE postcodes ADD COLUMN ward_code TEXT;
ALTER TABLE postcodes ADD COLUMN msoa_code TEXT;
ALTER TABLE postcodes ADD COLUMN county_code TEXT;
ALTER TABLE postcodes ADD COLUMN region_code TEXT;

CREATE TABLE area_names (
    code TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

CREATE TABLE places (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    name_alt TEXT,
    local_type TEXT NOT NULL,
    x DOUBLE NOT NULL,
    y DOUBLE NOT NULL,
    postcode_district TEXT,
    district_borough TEXT,
    county_unitary TEXT,
    region TEXT,
    country TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

CREATE TABLE address_h3 (
    uprn BIGINT PRIMARY KEY NOT NULL,
    cell TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX address_h3_cell ON address_h3 (cell);
