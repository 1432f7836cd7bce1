-- HM Land Registry's company-owned titles (CCOD, UK companies; OCOD, overseas companies): one row
-- per title, its proprietors (up to four, as the register lists them) in proprietors_json, and
-- its UPRN where the address matcher linked the property address (score kept).
CREATE TABLE titles (
    title_number TEXT PRIMARY KEY NOT NULL,
    register TEXT NOT NULL,
    tenure TEXT,
    property_address TEXT,
    district TEXT,
    county TEXT,
    region TEXT,
    postcode TEXT,
    multiple_address BOOLEAN,
    price_paid BIGINT,
    date_added DATE,
    additional_proprietor BOOLEAN,
    proprietors_json TEXT NOT NULL,
    file_month TEXT,
    uprn BIGINT,
    match_method TEXT,
    match_score DOUBLE PRECISION,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX titles_uprn_idx ON titles (uprn);
-- One row per proprietor slot of a title, for the look-ups by company number and by name.
CREATE TABLE title_proprietors (
    id TEXT PRIMARY KEY NOT NULL,
    title_number TEXT NOT NULL,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    company_number TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX title_proprietors_title_idx ON title_proprietors (title_number);
CREATE INDEX title_proprietors_company_idx ON title_proprietors (company_number, title_number);
CREATE INDEX title_proprietors_name_idx ON title_proprietors (name_key, title_number);
-- Companies House basic company data: one row per company.
CREATE TABLE companies (
    company_number TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    category TEXT,
    status TEXT,
    country_of_origin TEXT,
    incorporation_date DATE,
    dissolution_date DATE,
    address_care_of TEXT,
    address_po_box TEXT,
    address_line_1 TEXT,
    address_line_2 TEXT,
    post_town TEXT,
    address_county TEXT,
    address_country TEXT,
    postcode TEXT,
    sic_1 TEXT,
    sic_2 TEXT,
    sic_3 TEXT,
    sic_4 TEXT,
    charges_total INTEGER,
    charges_outstanding INTEGER,
    charges_part_satisfied INTEGER,
    charges_satisfied INTEGER,
    uri TEXT,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
