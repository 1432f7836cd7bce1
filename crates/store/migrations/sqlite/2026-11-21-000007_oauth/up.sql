-- OAuth 2.1 (the gateway is authorization server and resource server for /mcp) and web sessions
-- (sign-in for the authorize step and the /hub page). Secrets are stored only as SHA-256 hashes.

-- Registered clients (RFC 7591) and fetched client ID metadata documents (client_id is the URL).
CREATE TABLE oauth_clients (
    client_id TEXT PRIMARY KEY NOT NULL,
    client_name TEXT,
    redirect_uris TEXT NOT NULL,
    metadata_document BOOLEAN NOT NULL DEFAULT 0,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

-- One consent of an account to a client; its refresh tokens rotate within it. Revoking the grant
-- stops its refresh tokens and its access tokens at once.
CREATE TABLE oauth_grants (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    client_id TEXT NOT NULL REFERENCES oauth_clients (client_id),
    resource TEXT NOT NULL,
    scope TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    revoked_at TIMESTAMP
);
CREATE INDEX oauth_grants_account_idx ON oauth_grants (account_id);
CREATE INDEX oauth_grants_client_idx ON oauth_grants (client_id);

-- Authorization codes: short-lived, single use (used_at), PKCE S256 challenge.
CREATE TABLE oauth_codes (
    code_hash TEXT PRIMARY KEY NOT NULL,
    client_id TEXT NOT NULL REFERENCES oauth_clients (client_id),
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    resource TEXT NOT NULL,
    scope TEXT NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    used_at TIMESTAMP,
    grant_id BIGINT REFERENCES oauth_grants (id),
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX oauth_codes_client_idx ON oauth_codes (client_id);
CREATE INDEX oauth_codes_account_idx ON oauth_codes (account_id);
CREATE INDEX oauth_codes_grant_idx ON oauth_codes (grant_id);

-- Rotating refresh tokens: each is used once; presenting a used one revokes its grant.
CREATE TABLE oauth_refresh_tokens (
    token_hash TEXT PRIMARY KEY NOT NULL,
    grant_id BIGINT NOT NULL REFERENCES oauth_grants (id),
    expires_at TIMESTAMP NOT NULL,
    used_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX oauth_refresh_tokens_grant_idx ON oauth_refresh_tokens (grant_id);

-- Browser sessions of account holders (sign-in page, consent page, /hub), with a CSRF token.
CREATE TABLE web_sessions (
    id_hash TEXT PRIMARY KEY NOT NULL,
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    csrf_token TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX web_sessions_account_idx ON web_sessions (account_id);
