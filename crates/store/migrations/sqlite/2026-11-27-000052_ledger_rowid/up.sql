-- The ledger without AUTOINCREMENT and without foreign keys (issue 20, session 17).
-- AUTOINCREMENT kept the largest id ever given in `sqlite_sequence`, a page every ledger commit
-- wrote (one WAL frame in about seven per commit, measured). Without it a new row's id is the
-- largest id in the table plus one: ids still increase with time, and an id is given again only
-- after every row above it has been rolled up by retention, which nothing refers to then.
-- The foreign keys go as PostgreSQL's did in 000050: a batch reads every account it charges in
-- its own transaction before writing a row, and keys are never deleted, so each reference holds
-- by construction; with them every row looked up its account and key, and the writer's
-- multi-row INSERT kept a statement journal of every page it changed.
-- The rows keep their ids; the index the table had is rebuilt.
ALTER TABLE ledger RENAME TO ledger_autoincrement;
CREATE TABLE ledger (
    id INTEGER PRIMARY KEY,
    account_id BIGINT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('grant', 'charge')),
    operation TEXT,
    credits BIGINT NOT NULL,
    balance_after BIGINT NOT NULL,
    request_id TEXT,
    surface TEXT NOT NULL,
    key_id BIGINT,
    created_at TIMESTAMP NOT NULL
);
INSERT INTO ledger (id, account_id, kind, operation, credits, balance_after, request_id, surface,
                    key_id, created_at)
SELECT id, account_id, kind, operation, credits, balance_after, request_id, surface, key_id,
       created_at
FROM ledger_autoincrement ORDER BY id;
DROP TABLE ledger_autoincrement;
CREATE INDEX ledger_account_idx ON ledger (account_id, id);
