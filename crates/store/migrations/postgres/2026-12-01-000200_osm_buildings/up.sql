-- The OpenStreetMap extract's buildings and rooftop PV (ODbL, © OpenStreetMap contributors),
-- keyed by element ('way/123', 'relation/5', 'node/9'): kind 'building' or 'rooftop_pv', the
-- building=* value, a point (a building's centroid, a PV element's position) and box in BNG
-- metres, a building's outline (WKB) and area, the tags as read (height in metres, levels,
-- roof shape and material), and rooftop_pv: on a building the PV element marking it (itself when
-- the building is tagged as PV), on a PV element the building it stands on.
CREATE TABLE osm_buildings (
    osm_key TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    building TEXT,
    x DOUBLE PRECISION NOT NULL,
    y DOUBLE PRECISION NOT NULL,
    min_x DOUBLE PRECISION NOT NULL,
    min_y DOUBLE PRECISION NOT NULL,
    max_x DOUBLE PRECISION NOT NULL,
    max_y DOUBLE PRECISION NOT NULL,
    wkb BYTEA,
    area_m2 DOUBLE PRECISION,
    height_m DOUBLE PRECISION,
    levels INTEGER,
    roof_shape TEXT,
    roof_material TEXT,
    rooftop_pv TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX osm_buildings_min_x_idx ON osm_buildings (min_x);
-- Each OSM building linked to the footprint holding its centroid, else the one it overlaps most
-- (the land family's derive step; replaced whole on every build).
CREATE TABLE osm_footprint_links (
    osm_key TEXT PRIMARY KEY NOT NULL,
    building_id TEXT NOT NULL,
    method TEXT NOT NULL,
    overlap_share DOUBLE PRECISION NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX osm_footprint_links_building_id_idx ON osm_footprint_links (building_id);
-- The operator's HMO licence register feed, keyed by authority and licence number; the UPRN the
-- feed gave, or the address matcher found (method and score kept; unmatched rows stay, null).
CREATE TABLE hmo_licences (
    licence_key TEXT PRIMARY KEY NOT NULL,
    licence_number TEXT NOT NULL,
    authority TEXT NOT NULL,
    address TEXT NOT NULL,
    postcode TEXT,
    storeys INTEGER,
    max_occupants INTEGER,
    households INTEGER,
    licence_start DATE,
    licence_end DATE,
    uprn BIGINT,
    match_method TEXT,
    match_score DOUBLE PRECISION,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX hmo_licences_uprn_idx ON hmo_licences (uprn);
