-- Mail and calendar accounts (docs/MAIL.md, docs/ARCHITECTURE.md §15): an owner connects one
-- mail account (IMAP + SMTP) and one calendar account (CalDAV) on open standards. settings
-- holds what the owner may see again (the servers' URLs, the login name, the sender address,
-- the time zone); secret holds the password sealed with STEWARD_SECRET_KEY (internal/secret,
-- the owner's id bound in), never returned by any face. Only the owner's own transactions
-- (steward_app, forced row-level security) read or write a row; no door reads it.

-- +goose Up
CREATE TABLE connected_accounts (
    owner_id    uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('mail', 'calendar')),
    settings    jsonb NOT NULL CHECK (jsonb_typeof(settings) = 'object' AND length(settings::text) <= 8000),
    secret      bytea NOT NULL CHECK (length(secret) BETWEEN 1 AND 4096),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner_id, kind)
);
ALTER TABLE connected_accounts ENABLE ROW LEVEL SECURITY;
ALTER TABLE connected_accounts FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON connected_accounts
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, DELETE ON connected_accounts TO steward_app;

-- +goose Down
DROP TABLE connected_accounts;
