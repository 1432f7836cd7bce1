-- The Environment Agency LIDAR composite's DSM/DTM tile pairs, as the loader registered them
-- (their files, grids and survey year); the land build reads the cells from the files.
CREATE TABLE lidar_tiles (
    tile_key TEXT PRIMARY KEY NOT NULL,
    tile TEXT NOT NULL,
    dsm_path TEXT NOT NULL,
    dtm_path TEXT NOT NULL,
    min_x DOUBLE PRECISION NOT NULL,
    min_y DOUBLE PRECISION NOT NULL,
    max_x DOUBLE PRECISION NOT NULL,
    max_y DOUBLE PRECISION NOT NULL,
    cell_x DOUBLE PRECISION NOT NULL,
    cell_y DOUBLE PRECISION NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    dsm_nodata DOUBLE PRECISION NOT NULL,
    dtm_nodata DOUBLE PRECISION NOT NULL,
    survey_year INTEGER NOT NULL,
    dsm_bytes BIGINT NOT NULL,
    dtm_bytes BIGINT NOT NULL,
    dsm_modified BIGINT NOT NULL,
    dtm_modified BIGINT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
-- Each footprint's height and volume from the LIDAR surface models (the land build): the median
-- and the sum of DSM - DTM over the cells centred inside it, the valid cells counted, the survey
-- year and source; the note says why there is no height; lidar_built is the digest of the tile
-- set the row was computed against (null: not yet computed).
ALTER TABLE building_footprints ADD COLUMN lidar_height_m DOUBLE PRECISION;
ALTER TABLE building_footprints ADD COLUMN lidar_volume_m3 DOUBLE PRECISION;
ALTER TABLE building_footprints ADD COLUMN lidar_cells INTEGER;
ALTER TABLE building_footprints ADD COLUMN lidar_survey_year INTEGER;
ALTER TABLE building_footprints ADD COLUMN lidar_source TEXT;
ALTER TABLE building_footprints ADD COLUMN lidar_note TEXT;
ALTER TABLE building_footprints ADD COLUMN lidar_built TEXT;
CREATE INDEX building_footprints_min_x_idx ON building_footprints (min_x);
