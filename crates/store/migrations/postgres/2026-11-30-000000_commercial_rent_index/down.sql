DROP INDEX summary_valuations_list_idx;
DROP INDEX rating_list_entries_list_idx;
DROP INDEX postcodes_lad_idx;
DROP TABLE commercial_rent_index;
