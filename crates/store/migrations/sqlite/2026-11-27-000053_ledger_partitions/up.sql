-- PostgreSQL's ledger becomes partitioned by month here (issue 20); SQLite has no partitions, so
-- nothing changes. The folder keeps the two trees parallel.
SELECT 1;
