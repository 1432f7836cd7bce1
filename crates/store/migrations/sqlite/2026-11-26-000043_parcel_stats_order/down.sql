DROP INDEX parcel_stats_lad_idx;
DROP INDEX parcel_stats_lsoa_idx;
CREATE INDEX parcel_stats_lad_idx ON parcel_stats (lad_code, area_m2);
CREATE INDEX parcel_stats_lsoa_idx ON parcel_stats (lsoa_code, area_m2);
