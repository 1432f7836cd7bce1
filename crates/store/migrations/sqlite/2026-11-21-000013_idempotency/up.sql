-- Issue 13: the stored answers of charged calls sent with an `Idempotency-Key`, written in the
-- same transaction as the call's ledger debit, so a repeat of the key within the window gets the
-- answer back and is not charged again (even when the first answer never reached the client).
CREATE TABLE idempotency_keys (
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    idem_key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    operation TEXT NOT NULL,
    body TEXT NOT NULL,
    credits_charged BIGINT NOT NULL,
    credits_remaining BIGINT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (account_id, idem_key)
);
