DROP INDEX rating_list_entries_postcode_idx;
DROP INDEX summary_valuations_uarn_idx;
DROP TABLE summary_valuations;
