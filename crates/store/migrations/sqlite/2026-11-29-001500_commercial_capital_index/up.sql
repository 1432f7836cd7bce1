-- The commercial capital index: quarterly repeat-sales levels per series (national, national by
-- sector, local authority), written by the derived build from Price Paid category B sales of
-- non-residential property (docs/METHODS.md, "Commercial capital index").
CREATE TABLE commercial_capital_index (
    point_key TEXT PRIMARY KEY NOT NULL,
    series_key TEXT NOT NULL,
    area_code TEXT NOT NULL,
    sector TEXT NOT NULL,
    quarter TEXT NOT NULL,
    level DOUBLE,
    log_se DOUBLE,
    n_pairs BIGINT NOT NULL,
    series_pairs BIGINT NOT NULL,
    base_quarter TEXT,
    withheld TEXT,
    pair_sources TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX commercial_capital_index_series_idx ON commercial_capital_index (series_key, quarter);
