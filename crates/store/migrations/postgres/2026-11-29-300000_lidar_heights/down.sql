DROP INDEX building_footprints_min_x_idx;
ALTER TABLE building_footprints DROP COLUMN lidar_built;
ALTER TABLE building_footprints DROP COLUMN lidar_note;
ALTER TABLE building_footprints DROP COLUMN lidar_source;
ALTER TABLE building_footprints DROP COLUMN lidar_survey_year;
ALTER TABLE building_footprints DROP COLUMN lidar_cells;
ALTER TABLE building_footprints DROP COLUMN lidar_volume_m3;
ALTER TABLE building_footprints DROP COLUMN lidar_height_m;
DROP TABLE lidar_tiles;
