-- The latest valuation vintage: one row per UPRN the build considered, valued or refused (a
-- refusal has no value and says why), with the blend's weights and the evidence counts.
CREATE TABLE valuations (
    uprn BIGINT PRIMARY KEY NOT NULL,
    model_version TEXT NOT NULL,
    as_of TEXT NOT NULL,
    district TEXT,
    property_type TEXT,
    tenure TEXT,
    floor_area DOUBLE,
    floor_area_source TEXT,
    value DOUBLE,
    lo DOUBLE,
    hi DOUBLE,
    coverage DOUBLE,
    evidence_class TEXT,
    weight_anchor DOUBLE,
    weight_comparables DOUBLE,
    weight_hedonic DOUBLE,
    estimate_anchor DOUBLE,
    estimate_comparables DOUBLE,
    estimate_hedonic DOUBLE,
    n_comparables BIGINT,
    n_comparables_fenced BIGINT,
    n_hedonic BIGINT,
    hedonic_pooled BOOLEAN,
    last_sale_price BIGINT,
    last_sale_date DATE,
    refusal TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX valuations_district_idx ON valuations (district);

-- One row per vintage built (the latest is the one `valuations` holds).
CREATE TABLE valuation_vintages (
    vintage_key TEXT PRIMARY KEY NOT NULL,
    model_version TEXT NOT NULL,
    as_of TEXT NOT NULL,
    n_valued BIGINT NOT NULL,
    n_refused BIGINT NOT NULL,
    n_calibration BIGINT NOT NULL,
    calibration_coverage DOUBLE,
    calibration_json TEXT NOT NULL,
    built_at TIMESTAMP NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

-- Forward-measured accuracy: per basis (replayed_vintage, live_vintage), model version, month,
-- asset class, property type (`all` for every type) and estimator (the model or a baseline).
CREATE TABLE valuation_accuracy (
    accuracy_key TEXT PRIMARY KEY NOT NULL,
    basis TEXT NOT NULL,
    model_version TEXT NOT NULL,
    month TEXT NOT NULL,
    asset_class TEXT NOT NULL,
    property_type TEXT NOT NULL,
    estimator TEXT NOT NULL,
    n BIGINT NOT NULL,
    mdape DOUBLE NOT NULL,
    ppe10 DOUBLE NOT NULL,
    ppe20 DOUBLE NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX valuation_accuracy_month_idx ON valuation_accuracy (month);
