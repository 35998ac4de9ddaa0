-- Memory ingestion outbox: a finished exchange is queued in the turn's own transaction and
-- drained off the hot path by the memory worker.

-- +goose Up
CREATE TABLE memory_outbox (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id        uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    turn_id         uuid NOT NULL,
    conversation_id uuid NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    locked_until    timestamptz,
    last_error      text NOT NULL DEFAULT '',
    done_at         timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (turn_id)
);
CREATE INDEX memory_outbox_due ON memory_outbox (next_attempt_at) WHERE done_at IS NULL;
ALTER TABLE memory_outbox ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_outbox FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON memory_outbox
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
-- The worker finds due items across owners through the Door.
CREATE POLICY directory ON memory_outbox FOR SELECT TO steward_owner USING (true);
GRANT SELECT, INSERT, UPDATE ON memory_outbox TO steward_app;

-- +goose Down
DROP TABLE memory_outbox;
