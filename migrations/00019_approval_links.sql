-- One-tap approval links (issue 17 §1, README "Approve from a notification"). When a turn
-- suspends and the owner has a default channel, the notification carries an approve and a
-- deny link per suspension; each link's token is 32 random bytes, stored here only as its
-- SHA-256. A link is bound to its turn, the suspension (suspended_until = the turn's
-- expires_at when the link was made), the pending calls with their args hashes, and one
-- decision; it is single-use (used_at) and expires (expires_at, never after the suspension).
-- The link's page looks a token up by hash before the owner is known, a read across owners,
-- so it goes through the door (steward_door, FOR SELECT, only the columns that lookup reads:
-- internal/store/links.go); everything else runs as steward_app in the owner's transaction,
-- under forced row-level security.

-- +goose Up
CREATE TABLE approval_links (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id        uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    turn_id         uuid NOT NULL,
    hash            bytea NOT NULL UNIQUE CHECK (length(hash) = 32),
    approve         boolean NOT NULL,
    calls           jsonb NOT NULL CHECK (jsonb_typeof(calls) = 'array' AND length(calls::text) <= 20000),
    suspended_until timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    used_at         timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (expires_at <= suspended_until),
    -- A link names a turn of its own owner only.
    FOREIGN KEY (turn_id, owner_id) REFERENCES turns (id, owner_id) ON DELETE CASCADE
);
CREATE INDEX approval_links_turn ON approval_links (owner_id, turn_id);

ALTER TABLE approval_links ENABLE ROW LEVEL SECURITY;
ALTER TABLE approval_links FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON approval_links
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
CREATE POLICY door ON approval_links FOR SELECT TO steward_door USING (true);

GRANT SELECT, INSERT ON approval_links TO steward_app;
GRANT UPDATE (used_at) ON approval_links TO steward_app;
GRANT SELECT (owner_id, hash) ON approval_links TO steward_door;

-- +goose Down
DROP TABLE approval_links;
