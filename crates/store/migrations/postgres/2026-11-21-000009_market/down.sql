DROP TABLE hpi_reference;
DROP TABLE market_volume;
DROP TABLE market_index_points;
DROP TABLE market_geographies;
