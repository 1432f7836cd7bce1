DROP TABLE building_attributes;
DROP TABLE address_footprints;
