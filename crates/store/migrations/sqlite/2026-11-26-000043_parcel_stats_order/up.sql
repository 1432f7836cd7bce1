-- Plot utilisation pages a scope's parcels largest first, ties by INSPIRE id (highest first):
-- with the id in the index, a page is read off the index backwards instead of sorting every
-- parcel of the scope (the old two-column indexes are their prefixes).
DROP INDEX parcel_stats_lad_idx;
DROP INDEX parcel_stats_lsoa_idx;
CREATE INDEX parcel_stats_lad_idx ON parcel_stats (lad_code, area_m2, inspire_id);
CREATE INDEX parcel_stats_lsoa_idx ON parcel_stats (lsoa_code, area_m2, inspire_id);
