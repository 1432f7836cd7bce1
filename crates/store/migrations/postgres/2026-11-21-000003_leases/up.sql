-- HM Land Registry registered leases, with the term parsed at load (never guessed: an
-- unparseable term keeps its text and the reason in term_problem).
CREATE TABLE leases (
    unique_id TEXT PRIMARY KEY NOT NULL,
    uprn BIGINT,
    tenure TEXT,
    register_description TEXT,
    county TEXT,
    region TEXT,
    associated_description_id TEXT,
    associated_description TEXT,
    price_paid BIGINT,
    reg_order TEXT,
    date_of_lease DATE,
    term_text TEXT,
    term_years INTEGER,
    term_less_days INTEGER,
    term_start DATE,
    term_end DATE,
    term_problem TEXT,
    alienation_clause BOOLEAN,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX leases_uprn_idx ON leases (uprn);
