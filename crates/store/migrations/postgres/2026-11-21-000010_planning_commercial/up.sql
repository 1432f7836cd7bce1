-- Planning applications (one row per application, keyed by the publisher's entity or by
-- authority and reference), linked to a UPRN by the application's own UPRN or by the address
-- matcher (score kept), with the application's point in British National Grid metres.
CREATE TABLE planning_applications (
    application_id TEXT PRIMARY KEY NOT NULL,
    reference TEXT NOT NULL,
    authority TEXT,
    address TEXT,
    postcode TEXT,
    uprn BIGINT,
    match_method TEXT,
    match_score DOUBLE PRECISION,
    x DOUBLE PRECISION,
    y DOUBLE PRECISION,
    received_date DATE,
    validated_date DATE,
    decision_date DATE,
    decision TEXT,
    appeal_decision TEXT,
    appeal_date DATE,
    cil_liable BOOLEAN,
    cil_amount DOUBLE PRECISION,
    development_type TEXT,
    description TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX planning_applications_uprn_idx ON planning_applications (uprn);
CREATE INDEX planning_applications_x_idx ON planning_applications (x);
CREATE INDEX planning_applications_authority_idx ON planning_applications (authority);

-- The local planning authorities official planning data covers, by local authority district.
CREATE TABLE planning_coverage (
    lad_code TEXT PRIMARY KEY NOT NULL,
    name TEXT,
    organisation TEXT,
    organisation_entity TEXT,
    start_date DATE,
    end_date DATE,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

-- VOA non-domestic rating list entries (2010, 2017, 2023, 2026 lists): one row per list and
-- UARN (`entry_key` is `<list_year>:<uarn>`), the entry with the latest effective date.
CREATE TABLE rating_list_entries (
    entry_key TEXT PRIMARY KEY NOT NULL,
    list_year INTEGER NOT NULL,
    uarn BIGINT NOT NULL,
    billing_authority TEXT,
    ba_reference TEXT,
    description_code TEXT,
    description_text TEXT,
    scat_code TEXT,
    firm_name TEXT,
    address TEXT NOT NULL,
    postcode TEXT,
    rateable_value BIGINT,
    effective_date DATE NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX rating_list_entries_uarn_idx ON rating_list_entries (uarn);
CREATE INDEX rating_list_entries_code_idx ON rating_list_entries (description_code, list_year);

-- UARN to UPRN links: from a lookup file (`voa_uarn_uprn_lookup`) or the address matcher.
CREATE TABLE uarn_uprn_links (
    uarn BIGINT PRIMARY KEY NOT NULL,
    uprn BIGINT NOT NULL,
    match_method TEXT NOT NULL,
    match_score DOUBLE PRECISION,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX uarn_uprn_links_uprn_idx ON uarn_uprn_links (uprn);
