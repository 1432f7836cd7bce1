DROP INDEX address_h3_cell;
DROP TABLE address_h3;
DROP TABLE places;
DROP TABLE area_names;
ALTER TABLE postcodes DROP COLUMN region_code;
ALTER TABLE postcodes DROP COLUMN county_code;
ALTER TABLE postcodes DROP COLUMN msoa_code;
ALTER TABLE postcodes DROP COLUMN ward_code;
