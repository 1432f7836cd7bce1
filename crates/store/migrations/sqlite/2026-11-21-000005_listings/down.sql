DROP TABLE listing_events;
DROP TABLE listing_snapshots;
DROP TABLE listings;
