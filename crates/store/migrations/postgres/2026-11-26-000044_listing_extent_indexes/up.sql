-- Every listings operation first asks when observation began (the earliest snapshot) and the
-- latest sighting: with these indexes each is one index probe, where both were a scan of every
-- snapshot and every listing per call (measured: 353 req/s on the asking index over 200,000
-- snapshots, falling with the feed's size).
CREATE INDEX listing_snapshots_time_idx ON listing_snapshots (time);
CREATE INDEX listings_last_seen_idx ON listings (last_seen);
