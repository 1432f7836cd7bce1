-- A building's height in metres where the footprint file gives one (OS Open Map Local does not).
ALTER TABLE building_footprints ADD COLUMN height_m DOUBLE;
