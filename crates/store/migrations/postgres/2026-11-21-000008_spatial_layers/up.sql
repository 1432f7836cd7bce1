-- Spatial layers for the risk report: planning.data.gov.uk designations, Environment Agency flood
-- layers, Coal Authority development high risk areas, electricity substations and the Renewable
-- Energy Planning Database, one row per feature. A polygon feature has its geometry as WKB (a
-- multipolygon in British National Grid metres); a point feature has x and y and no WKB.
-- The service builds its in-memory indices from this table.
CREATE TABLE spatial_features (
    id TEXT PRIMARY KEY NOT NULL,
    dataset TEXT NOT NULL,
    reference TEXT,
    name TEXT,
    category TEXT,
    status TEXT,
    value DOUBLE PRECISION,
    organisation TEXT,
    entry_date DATE,
    wkb BYTEA,
    x DOUBLE PRECISION,
    y DOUBLE PRECISION,
    min_x DOUBLE PRECISION NOT NULL,
    min_y DOUBLE PRECISION NOT NULL,
    max_x DOUBLE PRECISION NOT NULL,
    max_y DOUBLE PRECISION NOT NULL,
    attributes_json TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX spatial_features_dataset_idx ON spatial_features (dataset);

-- Which dataset is loaded for which local authority: a flag is not_checked where its dataset has
-- no row here for the property's authority, and false only where it has one and nothing matches.
CREATE TABLE layer_coverage (
    id TEXT PRIMARY KEY NOT NULL,
    dataset TEXT NOT NULL,
    lad_code TEXT NOT NULL,
    vintage DATE,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX layer_coverage_lad_idx ON layer_coverage (lad_code);
