-- Issue 17: the ONS Price Index of Private Rents by local authority (the reference the rent
-- index is checked against at every build), and the asking-price and rent indices built from
-- the listing snapshots (`cargo xtask build`), served from here.
CREATE TABLE private_rents (
    pipr_key TEXT PRIMARY KEY NOT NULL,
    area_code TEXT NOT NULL,
    area_name TEXT,
    region_name TEXT,
    month TEXT NOT NULL,
    rent_index DOUBLE PRECISION,
    monthly_change DOUBLE PRECISION,
    annual_change DOUBLE PRECISION,
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
    level DOUBLE PRECISION,
    se DOUBLE PRECISION,
    lo DOUBLE PRECISION,
    hi DOUBLE PRECISION,
    n BIGINT NOT NULL,
    shrunk BOOLEAN NOT NULL DEFAULT FALSE,
    filled BOOLEAN NOT NULL DEFAULT FALSE,
    status TEXT NOT NULL,
    pipr_level DOUBLE PRECISION,
    parent TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (kind, area_key, month)
);
