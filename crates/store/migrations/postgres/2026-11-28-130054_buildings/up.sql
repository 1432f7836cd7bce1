-- Each address point's building footprint (the land family's derive step): the smallest
-- footprint containing the point, with the share of candidates as the score.
CREATE TABLE address_footprints (
    uprn BIGINT PRIMARY KEY NOT NULL,
    building_id TEXT NOT NULL,
    method TEXT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX address_footprints_building_idx ON address_footprints (building_id);
-- The building-attributes operator feed (OF-L), one row per UPRN; a null is "not recorded".
CREATE TABLE building_attributes (
    uprn BIGINT PRIMARY KEY NOT NULL,
    floors INTEGER,
    basement BOOLEAN,
    green_roof BOOLEAN,
    construction_material TEXT,
    roof_shape TEXT,
    roof_material TEXT,
    solar_panels BOOLEAN,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
