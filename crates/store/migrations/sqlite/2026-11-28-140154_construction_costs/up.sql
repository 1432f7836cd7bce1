-- Construction cost series (ONS output price indices, the implied construction deflator, average
-- weekly earnings in construction, and an operator's tender price index), the operator's regional
-- location factors and tender benchmarks (docs/DATA.md, "Construction costs").
CREATE TABLE cost_series_points (
    point_key TEXT PRIMARY KEY NOT NULL,
    basis TEXT NOT NULL,
    sector TEXT NOT NULL,
    freq TEXT NOT NULL,
    period TEXT NOT NULL,
    period_start DATE NOT NULL,
    value DOUBLE NOT NULL,
    unit TEXT NOT NULL,
    base_period TEXT,
    series_title TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX cost_series_points_series_idx ON cost_series_points (basis, sector, period_start);

CREATE TABLE cost_location_factors (
    region TEXT PRIMARY KEY NOT NULL,
    factor DOUBLE NOT NULL,
    period TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

CREATE TABLE cost_benchmarks (
    bench_key TEXT PRIMARY KEY NOT NULL,
    sector TEXT NOT NULL,
    period TEXT NOT NULL,
    period_start DATE NOT NULL,
    rate_low DOUBLE NOT NULL,
    rate_mid DOUBLE NOT NULL,
    rate_high DOUBLE NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX cost_benchmarks_sector_idx ON cost_benchmarks (sector, period_start);
