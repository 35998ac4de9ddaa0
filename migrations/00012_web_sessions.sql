-- Web app sessions (internal/webapp, README "Web app"). Signing in with an API key creates a
-- session: a random secret goes to the browser in an HttpOnly cookie and only its SHA-256 is
-- stored here. The browser's requests are then looked up by that hash before the owner is
-- known, a read across owners, so it goes through the door (steward_door, FOR SELECT, on the
-- columns the lookup reads: internal/store/door.go). Everything else — create, list, revoke
-- (sign-out) — runs as steward_app in the owner's transaction, under forced row-level security.

-- +goose Up
CREATE TABLE web_sessions (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id     uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    hash         bytea NOT NULL UNIQUE CHECK (length(hash) = 32),
    user_agent   text NOT NULL DEFAULT '' CHECK (length(user_agent) <= 300),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz,
    CHECK (expires_at > created_at)
);
CREATE INDEX web_sessions_owner ON web_sessions (owner_id, created_at DESC);

ALTER TABLE web_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE web_sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON web_sessions
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
CREATE POLICY door ON web_sessions FOR SELECT TO steward_door USING (true);

GRANT SELECT, INSERT ON web_sessions TO steward_app;
GRANT UPDATE (revoked_at) ON web_sessions TO steward_app;
GRANT SELECT (id, owner_id, hash, expires_at, revoked_at) ON web_sessions TO steward_door;

-- +goose Down
DROP TABLE web_sessions;
