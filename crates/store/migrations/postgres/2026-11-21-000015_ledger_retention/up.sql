-- Ledger retention: per-call charge rows older than the retention period are rolled up into one
-- row per account, day, operation and surface (the calls counted, their credits summed), in the
-- same transaction that deletes them. Invariant:
--   accounts.balance = SUM(ledger.credits) + SUM(ledger_daily.credits) for the account.
CREATE TABLE ledger_daily (
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    day DATE NOT NULL,
    operation TEXT NOT NULL,
    surface TEXT NOT NULL,
    calls BIGINT NOT NULL,
    credits BIGINT NOT NULL,
    PRIMARY KEY (account_id, day, operation, surface)
);

