-- Issue 12: a published index level is smoothed; the estimator's own level is kept beside it,
-- and a period without an own estimate says it was filled.
ALTER TABLE market_index_points ADD COLUMN raw_level DOUBLE PRECISION;
ALTER TABLE market_index_points ADD COLUMN filled BOOLEAN NOT NULL DEFAULT FALSE;
