-- The comparable ledger of the latest vintage: one row per comparable the build's comparable
-- estimator considered for a UPRN (before and after the interquartile-range fence), with the
-- time and size/type adjustments it applied. Replaced with the vintage.
CREATE TABLE valuation_comparables (
    uprn BIGINT NOT NULL,
    line INTEGER NOT NULL,
    comp_uprn BIGINT,
    sale_month TEXT NOT NULL,
    price BIGINT NOT NULL,
    property_type TEXT NOT NULL,
    floor_area DOUBLE PRECISION,
    tier TEXT NOT NULL,
    index_geography TEXT NOT NULL,
    time_factor DOUBLE PRECISION NOT NULL,
    size_factor DOUBLE PRECISION NOT NULL,
    adjusted DOUBLE PRECISION NOT NULL,
    kept BOOLEAN NOT NULL,
    fence_lo DOUBLE PRECISION,
    fence_hi DOUBLE PRECISION,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (uprn, line)
);
CREATE INDEX valuation_comparables_comp_uprn_idx ON valuation_comparables (comp_uprn);
