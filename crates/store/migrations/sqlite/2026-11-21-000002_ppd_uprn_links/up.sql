-- HM Land Registry's transaction-to-UPRN lookup, kept apart from the sales so a sale loaded later
-- still finds its link.
CREATE TABLE ppd_uprn_links (
    transaction_id TEXT PRIMARY KEY NOT NULL,
    uprn BIGINT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX ppd_uprn_links_uprn_idx ON ppd_uprn_links (uprn);
CREATE INDEX price_paid_uprn_date_idx ON price_paid (uprn, date);
