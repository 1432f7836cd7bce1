DROP INDEX listing_snapshots_time_idx;
DROP INDEX listings_last_seen_idx;
