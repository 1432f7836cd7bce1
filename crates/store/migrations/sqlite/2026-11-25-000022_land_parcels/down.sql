DROP TABLE land_link_coverage;
DROP TABLE parcel_stats;
DROP TABLE parcel_titles;
DROP TABLE parcel_addresses;
DROP TABLE parcel_buildings;
DROP TABLE building_footprints;
DROP TABLE land_parcels;
