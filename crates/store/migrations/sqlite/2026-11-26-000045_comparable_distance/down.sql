ALTER TABLE valuation_comparables DROP COLUMN distance_m;
