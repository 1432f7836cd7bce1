-- Every distinct (Date Proprietor Added, Price Paid) a company-owned title has shown across the
-- CCOD and OCOD snapshots loaded, kept when a later snapshot overwrites the title in `titles`:
-- the commercial capital index pairs a title's successive observations (docs/METHODS.md,
-- "Commercial capital index"). Written by the CCOD/OCOD loader; a snapshot loaded twice adds
-- nothing.
CREATE TABLE title_price_history (
    obs_key TEXT PRIMARY KEY NOT NULL,
    title_number TEXT NOT NULL,
    register TEXT NOT NULL,
    date_added DATE NOT NULL,
    price_paid BIGINT NOT NULL,
    first_seen_month TEXT,
    tenure TEXT,
    proprietorship_category TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX title_price_history_title_idx ON title_price_history (title_number, date_added);
-- The commercial capital index's local-authority series are shrunk toward the national series:
-- the weight of the authority's own estimate in each quarter (null where the series is not
-- shrunk).
ALTER TABLE commercial_capital_index ADD COLUMN own_weight DOUBLE;
