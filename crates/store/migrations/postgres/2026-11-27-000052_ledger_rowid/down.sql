-- SQLite's ledger loses AUTOINCREMENT and its foreign keys here (issue 20, session 17); on
-- PostgreSQL the ledger's ids come from its identity, and its foreign keys went in 000050, so
-- nothing changes. The folder keeps the two trees parallel.
SELECT 1;
