-- Issue 17: what the industry feeds (Rightmove BLM v3, the Real Time Data Feed) say about a
-- listing beyond the project's own feed: floor area, tenure and unexpired years, coordinates,
-- branch, new home, the feed it came in, the UPRN match's method and score, the last sighting's
-- removal and its reason; and on every snapshot the removal reason when the feed gave one.
ALTER TABLE listings ADD COLUMN floor_area_m2 DOUBLE;
ALTER TABLE listings ADD COLUMN tenure TEXT;
ALTER TABLE listings ADD COLUMN unexpired_years INTEGER;
ALTER TABLE listings ADD COLUMN latitude DOUBLE;
ALTER TABLE listings ADD COLUMN longitude DOUBLE;
ALTER TABLE listings ADD COLUMN branch TEXT;
ALTER TABLE listings ADD COLUMN new_home BOOLEAN;
ALTER TABLE listings ADD COLUMN feed TEXT;
ALTER TABLE listings ADD COLUMN uprn_method TEXT;
ALTER TABLE listings ADD COLUMN uprn_score DOUBLE;
ALTER TABLE listings ADD COLUMN removed_at TIMESTAMP;
ALTER TABLE listings ADD COLUMN removal_reason TEXT;
ALTER TABLE listing_snapshots ADD COLUMN removal_reason TEXT;
