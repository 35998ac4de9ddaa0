-- Accounts connected over OAuth 2.0 (docs/MAIL.md "Google", "Microsoft", "your own identity
-- provider"; docs/ARCHITECTURE.md §15). oauth_states is a sign-in in flight: the hash of its
-- `state`, the web session that began it (the callback must come back to the same one), the
-- PKCE verifier sealed with STEWARD_SECRET_KEY, a ten-minute life and used_at, set once (a
-- replayed state is refused). oauth_grants is a provider's grant: the access and refresh
-- tokens sealed (internal/secret, the owner's id bound in), when the access token expires,
-- whether it is connected or was refused by the provider (then the owner is told once:
-- notified_at), and the refresh lease (lease_id, lease_until) one process takes before it
-- spends a rotating refresh token, so two never race it. Only the owner's own transactions
-- (steward_app, forced row-level security) read or write a row.

-- +goose Up
CREATE TABLE oauth_states (
    owner_id    uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    state_hash  bytea NOT NULL CHECK (length(state_hash) = 32),
    session_id  uuid NOT NULL,
    provider    text NOT NULL CHECK (provider IN ('google', 'microsoft', 'generic')),
    verifier    bytea NOT NULL CHECK (length(verifier) BETWEEN 1 AND 512),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner_id, state_hash)
);
ALTER TABLE oauth_states ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_states FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON oauth_states
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON oauth_states TO steward_app;

CREATE TABLE oauth_grants (
    owner_id      uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    provider      text NOT NULL CHECK (provider IN ('google', 'microsoft', 'generic')),
    email         text NOT NULL CHECK (length(email) BETWEEN 1 AND 320),
    scopes        text NOT NULL CHECK (length(scopes) <= 2000),
    access_token  bytea NOT NULL CHECK (length(access_token) BETWEEN 1 AND 16384),
    refresh_token bytea NOT NULL CHECK (length(refresh_token) BETWEEN 1 AND 16384),
    expires_at    timestamptz NOT NULL,
    status        text NOT NULL DEFAULT 'connected' CHECK (status IN ('connected', 'disconnected')),
    problem       text NOT NULL DEFAULT '' CHECK (length(problem) <= 1000),
    notified_at   timestamptz,
    lease_id      uuid,
    lease_until   timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner_id, provider)
);
ALTER TABLE oauth_grants ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_grants FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON oauth_grants
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON oauth_grants TO steward_app;

-- +goose Down
DROP TABLE oauth_grants;
DROP TABLE oauth_states;
