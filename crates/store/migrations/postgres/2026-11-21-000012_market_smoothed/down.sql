ALTER TABLE market_index_points DROP COLUMN filled;
ALTER TABLE market_index_points DROP COLUMN raw_level;
