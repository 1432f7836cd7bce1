-- HM Land Registry INSPIRE Index Polygons: one row per freehold title extent polygon, its
-- geometry a multipolygon in BNG metres (WKB), its bounding box, area and a WGS84 interior point;
-- lad_code is the local authority holding the interior point when boundaries were loaded.
CREATE TABLE land_parcels (
    inspire_id BIGINT PRIMARY KEY NOT NULL,
    gml_id TEXT,
    wkb BYTEA NOT NULL,
    min_x DOUBLE PRECISION NOT NULL,
    min_y DOUBLE PRECISION NOT NULL,
    max_x DOUBLE PRECISION NOT NULL,
    max_y DOUBLE PRECISION NOT NULL,
    area_m2 DOUBLE PRECISION NOT NULL,
    lat DOUBLE PRECISION,
    lon DOUBLE PRECISION,
    valid_from TIMESTAMP,
    lad_code TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX land_parcels_lad_idx ON land_parcels (lad_code, inspire_id);
-- OS Open Map Local building footprints (multipolygon in BNG metres, WKB).
CREATE TABLE building_footprints (
    building_id TEXT PRIMARY KEY NOT NULL,
    feature_code INTEGER,
    wkb BYTEA NOT NULL,
    min_x DOUBLE PRECISION NOT NULL,
    min_y DOUBLE PRECISION NOT NULL,
    max_x DOUBLE PRECISION NOT NULL,
    max_y DOUBLE PRECISION NOT NULL,
    area_m2 DOUBLE PRECISION NOT NULL,
    lad_code TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX building_footprints_lad_idx ON building_footprints (lad_code, building_id);
-- Derived by the build: a building standing on a parcel (footprint overlap).
CREATE TABLE parcel_buildings (
    id TEXT PRIMARY KEY NOT NULL,
    inspire_id BIGINT NOT NULL,
    building_id TEXT NOT NULL,
    overlap_m2 DOUBLE PRECISION NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    method TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX parcel_buildings_parcel_idx ON parcel_buildings (inspire_id);
CREATE INDEX parcel_buildings_building_idx ON parcel_buildings (building_id);
-- Derived by the build: the parcel an address point lies in.
CREATE TABLE parcel_addresses (
    uprn BIGINT PRIMARY KEY NOT NULL,
    inspire_id BIGINT NOT NULL,
    method TEXT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX parcel_addresses_parcel_idx ON parcel_addresses (inspire_id);
-- Derived by the build: a company-owned title whose linked address lies in a parcel.
CREATE TABLE parcel_titles (
    id TEXT PRIMARY KEY NOT NULL,
    title_number TEXT NOT NULL,
    inspire_id BIGINT NOT NULL,
    uprn BIGINT NOT NULL,
    method TEXT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX parcel_titles_title_idx ON parcel_titles (title_number);
CREATE INDEX parcel_titles_parcel_idx ON parcel_titles (inspire_id);
CREATE INDEX parcel_titles_uprn_idx ON parcel_titles (uprn);
-- Derived by the build: one row per parcel with what plot utilisation answers. footprint_m2 and
-- built_coverage are null where no footprint data covers the parcel's local authority.
CREATE TABLE parcel_stats (
    inspire_id BIGINT PRIMARY KEY NOT NULL,
    lad_code TEXT,
    lsoa_code TEXT,
    area_m2 DOUBLE PRECISION NOT NULL,
    n_buildings INTEGER NOT NULL,
    footprint_m2 DOUBLE PRECISION,
    built_coverage DOUBLE PRECISION,
    n_units_via_buildings INTEGER NOT NULL,
    address_count_residential INTEGER NOT NULL,
    address_count_commercial INTEGER NOT NULL,
    landuse_tier_a TEXT,
    landuse_tier_b TEXT,
    nlud_code TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX parcel_stats_lad_idx ON parcel_stats (lad_code, area_m2);
CREATE INDEX parcel_stats_lsoa_idx ON parcel_stats (lsoa_code, area_m2);
-- Derived by the build: the land links' coverage per local authority ('' where none is known).
CREATE TABLE land_link_coverage (
    lad_code TEXT PRIMARY KEY NOT NULL,
    parcels BIGINT NOT NULL,
    parcels_measured BIGINT NOT NULL,
    parcels_with_address BIGINT NOT NULL,
    addresses BIGINT NOT NULL,
    addresses_in_parcel BIGINT NOT NULL,
    buildings BIGINT NOT NULL,
    buildings_on_parcel BIGINT NOT NULL,
    titles_linked BIGINT NOT NULL,
    titles_on_parcel BIGINT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
