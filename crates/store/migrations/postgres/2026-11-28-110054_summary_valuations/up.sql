-- VOA summary valuations: one row per list and UARN (`valuation_key` is `<list_year>:<uarn>`),
-- with the measured floor area (square metres, only where the unit of measurement is an area
-- basis) and the adopted rateable value.
CREATE TABLE summary_valuations (
    valuation_key TEXT PRIMARY KEY NOT NULL,
    list_year INTEGER NOT NULL,
    uarn BIGINT NOT NULL,
    assessment_reference TEXT,
    scheme_reference TEXT,
    unit_of_measurement TEXT,
    total_area DOUBLE PRECISION,
    floor_area_m2 DOUBLE PRECISION,
    unadjusted_price DOUBLE PRECISION,
    adopted_rv BIGINT,
    floor_lines INTEGER NOT NULL,
    source TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX summary_valuations_uarn_idx ON summary_valuations (uarn);
-- Rating list entries by postcode: the local authority of an entry is its postcode's.
CREATE INDEX rating_list_entries_postcode_idx ON rating_list_entries (postcode);
