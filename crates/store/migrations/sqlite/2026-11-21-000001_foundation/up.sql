-- Foundation: accounts, keys, the ledger, the address register and its sources, load accounting.
-- Times are UTC. Every loaded row names its source dataset.

CREATE TABLE accounts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    email TEXT UNIQUE,
    password_hash TEXT,
    balance BIGINT NOT NULL CHECK (balance >= 0),
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    key_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    last4 TEXT NOT NULL,
    name TEXT,
    created_at TIMESTAMP NOT NULL,
    revoked_at TIMESTAMP
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id);

-- Append-only: one row per grant (credits > 0) and per call (credits <= 0; free calls 0).
-- Invariant: accounts.balance = SUM(ledger.credits) for the account.
CREATE TABLE ledger (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    kind TEXT NOT NULL CHECK (kind IN ('grant', 'charge')),
    operation TEXT,
    credits BIGINT NOT NULL,
    balance_after BIGINT NOT NULL,
    request_id TEXT,
    surface TEXT NOT NULL,
    key_id BIGINT REFERENCES api_keys (id),
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX ledger_account_idx ON ledger (account_id, id);
CREATE INDEX ledger_key_idx ON ledger (key_id);

CREATE TABLE meta (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);

CREATE TABLE addresses (
    uprn BIGINT PRIMARY KEY NOT NULL,
    parent_uprn BIGINT,
    class TEXT,
    saon TEXT,
    paon TEXT,
    street TEXT,
    locality TEXT,
    town TEXT,
    postcode TEXT,
    x DOUBLE,
    y DOUBLE,
    lat DOUBLE,
    lon DOUBLE,
    lad_code TEXT,
    lsoa_code TEXT,
    address_source TEXT,
    position_source TEXT,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX addresses_postcode_idx ON addresses (postcode);
CREATE INDEX addresses_parent_idx ON addresses (parent_uprn);

CREATE TABLE postcodes (
    postcode TEXT PRIMARY KEY NOT NULL,
    easting DOUBLE,
    northing DOUBLE,
    lat DOUBLE,
    lon DOUBLE,
    lad_code TEXT,
    lsoa_code TEXT,
    country_code TEXT,
    quality INTEGER,
    terminated BOOLEAN NOT NULL DEFAULT 0,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

CREATE TABLE boundaries (
    code TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    name TEXT,
    wkb BLOB NOT NULL,
    min_x DOUBLE NOT NULL,
    min_y DOUBLE NOT NULL,
    max_x DOUBLE NOT NULL,
    max_y DOUBLE NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX boundaries_kind_idx ON boundaries (kind);

CREATE TABLE epc_certificates (
    lmk_key TEXT PRIMARY KEY NOT NULL,
    uprn BIGINT,
    address TEXT,
    postcode TEXT,
    current_rating TEXT,
    potential_rating TEXT,
    current_efficiency INTEGER,
    potential_efficiency INTEGER,
    property_type TEXT,
    built_form TEXT,
    total_floor_area DOUBLE,
    habitable_rooms INTEGER,
    lodgement_date DATE,
    inspection_date DATE,
    tenure TEXT,
    main_fuel TEXT,
    local_authority TEXT,
    fields_json TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX epc_uprn_idx ON epc_certificates (uprn);
CREATE INDEX epc_postcode_idx ON epc_certificates (postcode);

CREATE TABLE price_paid (
    transaction_id TEXT PRIMARY KEY NOT NULL,
    price BIGINT NOT NULL,
    date DATE NOT NULL,
    postcode TEXT,
    property_type TEXT NOT NULL,
    new_build BOOLEAN NOT NULL,
    tenure TEXT NOT NULL,
    paon TEXT,
    saon TEXT,
    street TEXT,
    locality TEXT,
    town TEXT,
    district TEXT,
    county TEXT,
    ppd_category TEXT NOT NULL,
    uprn BIGINT,
    match_method TEXT,
    match_score DOUBLE,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX price_paid_uprn_idx ON price_paid (uprn);
CREATE INDEX price_paid_postcode_idx ON price_paid (postcode);

CREATE TABLE load_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL,
    file TEXT NOT NULL,
    started_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    rows_read BIGINT NOT NULL DEFAULT 0,
    loaded BIGINT NOT NULL DEFAULT 0,
    updated BIGINT NOT NULL DEFAULT 0,
    deleted BIGINT NOT NULL DEFAULT 0,
    rejected BIGINT NOT NULL DEFAULT 0,
    unchanged BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE load_rejections (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id BIGINT NOT NULL REFERENCES load_runs (id),
    line BIGINT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX load_rejections_run_idx ON load_rejections (run_id);
