-- The operator's auction lot feed (OF-S, docs/DATA.md): one row per lot per auction, keyed by
-- house, date and lot number. uprn/match_method/match_score are the feed's own UPRN or the
-- address matcher's (derive step); property_key links the offers of one property across
-- auctions (same UPRN or same normalised address), set by the derive step.
CREATE TABLE auction_lots (
    lot_key TEXT PRIMARY KEY NOT NULL,
    auction_house TEXT NOT NULL,
    auction_date DATE NOT NULL,
    lot_number TEXT NOT NULL,
    address TEXT NOT NULL,
    postcode TEXT,
    district TEXT,
    lot_type TEXT NOT NULL,
    tenure TEXT,
    lease_years_remaining INTEGER,
    vacant BOOLEAN,
    rent_passing_pa BIGINT,
    guide_low BIGINT,
    guide_high BIGINT,
    outcome TEXT NOT NULL,
    hammer_price BIGINT,
    net_initial_yield_pct DOUBLE,
    source_url TEXT,
    description TEXT,
    uprn BIGINT,
    match_method TEXT,
    match_score DOUBLE,
    address_key TEXT NOT NULL,
    property_key TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX auction_lots_date ON auction_lots (auction_date, lot_key);
CREATE INDEX auction_lots_district ON auction_lots (district, auction_date);
CREATE INDEX auction_lots_uprn ON auction_lots (uprn);
CREATE INDEX auction_lots_property ON auction_lots (property_key);
CREATE INDEX auction_lots_address_key ON auction_lots (address_key);
