-- The sourcing build's one row per addressable unit (crates/sourcing, `build`): what the
-- strategies filter and rank on, gathered from the families once per build so a search is one
-- scan of an area; `detail_json` holds what is only shown. A null is "not known" (no
-- certificate, no linked title, no listing), never zero.
CREATE TABLE sourcing_features (
    uprn BIGINT PRIMARY KEY NOT NULL,
    building_uprn BIGINT NOT NULL,
    lad_code TEXT,
    district TEXT,
    x DOUBLE,
    y DOUBLE,
    parcel_id BIGINT,
    use_kind TEXT NOT NULL,
    tenure TEXT,
    value DOUBLE,
    last_sale_price BIGINT,
    epc_band TEXT,
    epc_potential_band TEXT,
    lease_years DOUBLE,
    owner_company_number TEXT,
    owner_register TEXT,
    owner_since DATE,
    owner_price_paid BIGINT,
    asking_price BIGINT,
    first_asking_price BIGINT,
    listed_on DATE,
    reductions INTEGER,
    rent_pcm DOUBLE,
    auction_unsold INTEGER,
    last_guide BIGINT,
    building_residential INTEGER NOT NULL,
    building_commercial INTEGER NOT NULL,
    detail_json TEXT NOT NULL,
    as_of DATE NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX sourcing_features_lad_idx ON sourcing_features (lad_code, uprn);
CREATE INDEX sourcing_features_district_idx ON sourcing_features (district, uprn);
CREATE INDEX sourcing_features_xy_idx ON sourcing_features (x, y);
CREATE INDEX sourcing_features_owner_idx ON sourcing_features (owner_company_number);
