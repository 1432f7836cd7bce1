-- The council tax valuation list, linked to UPRNs by the address matcher (score kept) or by the
-- list's own UPRN where it carries one.
CREATE TABLE council_tax (
    reference TEXT PRIMARY KEY NOT NULL,
    billing_authority TEXT,
    address TEXT NOT NULL,
    postcode TEXT,
    band TEXT NOT NULL,
    uprn BIGINT,
    match_method TEXT,
    match_score DOUBLE PRECISION,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX council_tax_uprn_idx ON council_tax (uprn);
CREATE INDEX council_tax_postcode_idx ON council_tax (postcode);
