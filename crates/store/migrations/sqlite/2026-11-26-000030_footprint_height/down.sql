ALTER TABLE building_footprints DROP COLUMN height_m;
