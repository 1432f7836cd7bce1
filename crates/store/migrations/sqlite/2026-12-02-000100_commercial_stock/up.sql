-- The commercial stock: each entry of the newest loaded rating list placed in its local authority
-- (by the entry's postcode in the postcode directory) with its sector, written by the commercial
-- rent index build. Commercial sourcing reads one page of an authority's stock in UARN order from
-- here (one index range), where before it read the authority's entries in every list by postcode
-- (at 2,000,000 entries a list, seconds for an authority's first call; docs/BENCHMARKS.md).
CREATE TABLE commercial_stock (
    uarn BIGINT PRIMARY KEY NOT NULL,
    lad_code TEXT NOT NULL,
    sector TEXT NOT NULL,
    list_year INTEGER NOT NULL,
    rateable_value BIGINT,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX commercial_stock_lad_idx ON commercial_stock (lad_code, uarn);
CREATE INDEX commercial_stock_sector_idx ON commercial_stock (lad_code, sector, uarn);
