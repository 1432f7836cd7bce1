-- Issue 17: the ONS Price Index of Private Rents by local authority (the reference the rent
-- index is checked against at every build), and the asking-price and rent indices built from
-- the listing snapshots (`cargo xtask build`), served from here.
CREATE TABLE private_rents (
    pipr_key TEXT PRIMARY KEY NOT NULL,
    area_code TEXT NOT NULL,
    area_name TEXT,
    region_name TEXT,
    month TEXT NOT NULL,
    rent_index DOUBLE,
    monthly_change DOUBLE,
    annual_change DOUBLE,
    rental_price BIGINT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX private_rents_area_idx ON private_rents (area_code, month);

-- One month of one listings index: kind `asking` or `rent`, area key `national`,
-- `lad:<GSS>`, `area:<letters>` or `district:<outward code>`; level 2022-01 = 100.
CREATE TABLE listing_index_points (
    kind TEXT NOT NULL,
    area_key TEXT NOT NULL,
    month TEXT NOT NULL,
    level DOUBLE,
    se DOUBLE,
    lo DOUBLE,
    hi DOUBLE,
    n BIGINT NOT NULL,
    shrunk BOOLEAN NOT NULL DEFAULT 0,
    filled BOOLEAN NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    pipr_level DOUBLE,
    parent TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (kind, area_key, month)
);
