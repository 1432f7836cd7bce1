ALTER TABLE ledger RENAME TO ledger_rowid;
CREATE TABLE ledger (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    kind TEXT NOT NULL CHECK (kind IN ('grant', 'charge')),
    operation TEXT,
    credits BIGINT NOT NULL,
    balance_after BIGINT NOT NULL,
    request_id TEXT,
    surface TEXT NOT NULL,
    key_id BIGINT REFERENCES api_keys (id),
    created_at TIMESTAMP NOT NULL
);
INSERT INTO ledger (id, account_id, kind, operation, credits, balance_after, request_id, surface,
                    key_id, created_at)
SELECT id, account_id, kind, operation, credits, balance_after, request_id, surface, key_id,
       created_at
FROM ledger_rowid ORDER BY id;
DROP TABLE ledger_rowid;
CREATE INDEX ledger_account_idx ON ledger (account_id, id);
