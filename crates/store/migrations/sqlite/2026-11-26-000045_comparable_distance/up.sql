-- The distance in metres between a comparable and the valued property (British National Grid
-- positions: the register's coordinates, else the postcode centroid), when both are known; the
-- nearest-same-type tier is ordered by it.
ALTER TABLE valuation_comparables ADD COLUMN distance_m DOUBLE;
