-- The ledger's index on key_id goes (issue 20): no query reads the ledger by key (usage lists an
-- account's rows by `ledger_account_idx`), and keys are never deleted (a key is revoked by
-- setting `revoked_at`), so no referential check needs it either. Every charged call wrote an
-- entry in it, and every batch's commit wrote its page.
DROP INDEX IF EXISTS ledger_key_idx;
