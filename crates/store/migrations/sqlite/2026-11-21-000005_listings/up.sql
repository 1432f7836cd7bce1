-- Sale and rental listings from the append-only feed, their snapshots, and the append-only change
-- log (new listing, price reduction, price increase, status change) that changes-since reads by
-- event id. Snapshots and events name their listing without a foreign key: listings are
-- rewritten in place by each load (delete and insert by key), and the log must never lose a row.
CREATE TABLE listings (
    listing_id TEXT PRIMARY KEY NOT NULL,
    channel TEXT NOT NULL,
    address TEXT,
    postcode TEXT,
    uprn BIGINT,
    price BIGINT,
    bedrooms INTEGER,
    property_type TEXT,
    agent TEXT,
    first_seen TIMESTAMP NOT NULL,
    last_seen TIMESTAMP,
    last_status TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX listings_uprn_idx ON listings (uprn);
CREATE INDEX listings_postcode_idx ON listings (postcode);

CREATE TABLE listing_snapshots (
    listing_id TEXT NOT NULL,
    time TIMESTAMP NOT NULL,
    price BIGINT,
    status TEXT,
    PRIMARY KEY (listing_id, time)
);

CREATE TABLE listing_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    listing_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    time TIMESTAMP NOT NULL,
    price BIGINT,
    previous_price BIGINT,
    status TEXT,
    previous_status TEXT,
    UNIQUE (listing_id, event_type, time)
);
CREATE INDEX listing_events_listing_idx ON listing_events (listing_id);
