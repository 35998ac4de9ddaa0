-- Signing in like a person (docs/ARCHITECTURE.md §13): passkeys (WebAuthn) and one-time
-- device sign-in links, both ending in the same web session a key sign-in starts
-- (00012_web_sessions.sql).
--
-- passkeys: an owner's registered credentials — the authenticator's credential id, its public
-- key (COSE), the signature counter, transports, flags, and a name the owner chose. A passkey
-- sign-in knows only the credential id the browser returned before the owner is known, a read
-- across owners, so it goes through the door (steward_door, FOR SELECT, only owner_id and
-- credential_id: internal/store/passkeys.go); everything else — register, list, verify and
-- count a use, remove — runs as steward_app in the owner's transaction, under forced
-- row-level security.
--
-- device_links: a short-lived, single-use sign-in link for another device (Settings → Add a
-- device, shown as a QR code). Its token is 32 random bytes, stored here only as its SHA-256;
-- the link's page looks the hash up through the door (owner_id, hash), and using it marks it
-- used and starts the session in the owner's transaction.
--
-- passkey_challenges: the WebAuthn ceremonies under way (the challenge and the options the
-- library must see again at the finish), kept server-side so that any process — any Lambda
-- instance — can finish a ceremony another began. Each is single-use (taken by a DELETE) and
-- expires within minutes. A sign-in ceremony begins before anyone is known, so the table has
-- no owner: it holds no owner data (a random challenge, the relying party's options and, for
-- a registration, the owner's user handle), and a row is found only by the SHA-256 of the
-- random ceremony secret in the browser's HttpOnly cookie.

-- +goose Up
CREATE TABLE passkeys (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id         uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    credential_id    bytea NOT NULL UNIQUE CHECK (length(credential_id) BETWEEN 1 AND 1023),
    public_key       bytea NOT NULL CHECK (length(public_key) BETWEEN 1 AND 4096),
    attestation_type text NOT NULL DEFAULT '' CHECK (length(attestation_type) <= 64),
    aaguid           bytea NOT NULL DEFAULT '' CHECK (length(aaguid) <= 16),
    sign_count       bigint NOT NULL DEFAULT 0 CHECK (sign_count BETWEEN 0 AND 4294967295),
    -- The authenticator data's flags byte (user present, verified, backup eligible, backed up).
    flags            smallint NOT NULL DEFAULT 0 CHECK (flags BETWEEN 0 AND 255),
    transports       text[] NOT NULL DEFAULT '{}' CHECK (cardinality(transports) <= 8),
    name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    created_at       timestamptz NOT NULL DEFAULT now(),
    last_used_at     timestamptz
);
CREATE INDEX passkeys_owner ON passkeys (owner_id, created_at);

CREATE TABLE device_links (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id    uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    hash        bytea NOT NULL UNIQUE CHECK (length(hash) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,
    CHECK (expires_at > created_at)
);
CREATE INDEX device_links_owner ON device_links (owner_id, created_at DESC);

-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['passkeys', 'device_links']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format($p$CREATE POLICY owner_isolation ON %I
            USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
            WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)$p$, t);
        EXECUTE format('CREATE POLICY door ON %I FOR SELECT TO steward_door USING (true)', t);
    END LOOP;
END
$$;
-- +goose StatementEnd

GRANT SELECT, INSERT, DELETE ON passkeys TO steward_app;
GRANT UPDATE (sign_count, flags, last_used_at) ON passkeys TO steward_app;
GRANT SELECT (owner_id, credential_id) ON passkeys TO steward_door;

GRANT SELECT, INSERT ON device_links TO steward_app;
GRANT UPDATE (used_at) ON device_links TO steward_app;
GRANT SELECT (owner_id, hash) ON device_links TO steward_door;

CREATE TABLE passkey_challenges (
    hash        bytea PRIMARY KEY CHECK (length(hash) = 32),
    purpose     text NOT NULL CHECK (purpose IN ('register', 'signin')),
    session     jsonb NOT NULL CHECK (length(session::text) <= 8000),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX passkey_challenges_expiry ON passkey_challenges (expires_at);
GRANT SELECT, INSERT, DELETE ON passkey_challenges TO steward_app;

-- +goose Down
DROP TABLE passkey_challenges;
DROP TABLE device_links;
DROP TABLE passkeys;
