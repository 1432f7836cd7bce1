DROP INDEX planning_applications_uprn_id_idx;
CREATE INDEX planning_applications_uprn_idx ON planning_applications (uprn);
DROP INDEX council_tax_uprn_ref_idx;
CREATE INDEX council_tax_uprn_idx ON council_tax (uprn);
DROP INDEX price_paid_uprn_txn_idx;
CREATE INDEX price_paid_uprn_idx ON price_paid (uprn);
