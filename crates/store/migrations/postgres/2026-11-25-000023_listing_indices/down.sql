DROP TABLE listing_index_points;
DROP TABLE private_rents;
