-- Market tables derived by `cargo xtask build` from the loaded sales and the address register:
-- monthly transaction volumes per district, postcode area, county and local authority; the
-- published house price index per geography (its points, forecasts included) and the record
-- of how each index was made. Rebuilt whole by each build; never written by a loader.
CREATE TABLE market_geographies (
    geography TEXT PRIMARY KEY NOT NULL,
    geo_kind TEXT NOT NULL,
    parent TEXT,
    residential_stock BIGINT,
    n_districts BIGINT,
    grain TEXT,
    base_period TEXT,
    index_method TEXT,
    index_decision TEXT,
    n_pairs BIGINT,
    n_sales BIGINT,
    last_settled TEXT,
    forecast_method TEXT,
    forecast_coverage TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX market_geographies_kind_idx ON market_geographies (geo_kind);

CREATE TABLE market_index_points (
    geography TEXT NOT NULL,
    period TEXT NOT NULL,
    level DOUBLE,
    log_se DOUBLE,
    lo DOUBLE,
    hi DOUBLE,
    n BIGINT,
    is_forecast BOOLEAN NOT NULL DEFAULT 0,
    PRIMARY KEY (geography, period, is_forecast)
);

CREATE TABLE market_volume (
    geography TEXT NOT NULL,
    month TEXT NOT NULL,
    txn_count BIGINT NOT NULL,
    txn_count_ppd_a BIGINT NOT NULL,
    txn_count_ppd_b BIGINT NOT NULL,
    txn_count_new_build BIGINT NOT NULL,
    txn_count_uprn_matched BIGINT NOT NULL,
    median_price DOUBLE,
    p25_price DOUBLE,
    p75_price DOUBLE,
    mean_price DOUBLE,
    PRIMARY KEY (geography, month)
);

-- The official UK House Price Index (full-file format), loaded as a reference to compare the
-- local authority series with (`cargo xtask validate index`); never served as Terrace's index.
CREATE TABLE hpi_reference (
    hpi_key TEXT PRIMARY KEY NOT NULL,
    area_code TEXT NOT NULL,
    region_name TEXT,
    month TEXT NOT NULL,
    hpi_index DOUBLE,
    average_price BIGINT,
    sales_volume BIGINT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX hpi_reference_area_idx ON hpi_reference (area_code);
