-- The link passes of `cargo xtask build` page through the rows with no UPRN yet in key order
-- (`uprn IS NULL AND key > ? ORDER BY key`). With an index on `uprn` alone every page rescanned
-- and sorted all unmatched rows (quadratic in the rows left unmatched); with the key second in
-- the index each page is one range read. Lookups by UPRN use the same index's prefix (and, for
-- sales, `price_paid_uprn_date_idx`).
DROP INDEX price_paid_uprn_idx;
CREATE INDEX price_paid_uprn_txn_idx ON price_paid (uprn, transaction_id);
DROP INDEX council_tax_uprn_idx;
CREATE INDEX council_tax_uprn_ref_idx ON council_tax (uprn, reference);
DROP INDEX planning_applications_uprn_idx;
CREATE INDEX planning_applications_uprn_id_idx ON planning_applications (uprn, application_id);
