DROP INDEX cost_benchmarks_sector_idx;
DROP TABLE cost_benchmarks;
DROP TABLE cost_location_factors;
DROP INDEX cost_series_points_series_idx;
DROP TABLE cost_series_points;
