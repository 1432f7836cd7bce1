CREATE INDEX ledger_key_idx ON ledger (key_id);
