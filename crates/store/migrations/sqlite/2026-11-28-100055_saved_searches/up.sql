-- Saved searches (issue 42): an account's named declaration of a searchable operation and its
-- parameters, replayed by run. search_id is random (not sequential); names are unique per
-- account. last_run_keys holds the row keys the last run returned (a JSON array), for "new since
-- the last run".
CREATE TABLE saved_searches (
    search_id TEXT PRIMARY KEY NOT NULL,
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    name TEXT NOT NULL,
    operation TEXT NOT NULL,
    parameters TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    last_run_at TIMESTAMP,
    last_run_keys TEXT
);
CREATE UNIQUE INDEX saved_searches_account_name ON saved_searches (account_id, name);
CREATE INDEX saved_searches_account_created ON saved_searches (account_id, created_at, search_id);
