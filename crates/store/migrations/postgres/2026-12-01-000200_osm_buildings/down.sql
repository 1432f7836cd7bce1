DROP INDEX hmo_licences_uprn_idx;
DROP TABLE hmo_licences;
DROP INDEX osm_footprint_links_building_id_idx;
DROP TABLE osm_footprint_links;
DROP INDEX osm_buildings_min_x_idx;
DROP TABLE osm_buildings;
