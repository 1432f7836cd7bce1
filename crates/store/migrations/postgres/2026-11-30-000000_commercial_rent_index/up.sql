-- The commercial rent index: one row per list of each series (national and each local authority,
-- by sector), written by the derived build from the rating lists (docs/METHODS.md, "Commercial
-- rent index"), so that no call reads a whole list. The indexes let a call find its authority's
-- postcodes, a list's entries and a list's summary valuations without a scan.
CREATE TABLE commercial_rent_index (
    point_key TEXT PRIMARY KEY NOT NULL,
    series_key TEXT NOT NULL,
    area_code TEXT NOT NULL,
    sector TEXT NOT NULL,
    list_year INTEGER NOT NULL,
    index_level DOUBLE PRECISION,
    link_ratio DOUBLE PRECISION,
    n_constant BIGINT,
    n_entries BIGINT NOT NULL,
    median_rateable_value BIGINT,
    reason TEXT,
    measured BOOLEAN NOT NULL,
    n_measured BIGINT,
    median_rv_per_m2 DOUBLE PRECISION,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX commercial_rent_index_series_idx ON commercial_rent_index (series_key, list_year);
CREATE INDEX postcodes_lad_idx ON postcodes (lad_code, postcode);
CREATE INDEX rating_list_entries_list_idx ON rating_list_entries (list_year, uarn);
CREATE INDEX summary_valuations_list_idx ON summary_valuations (list_year);
