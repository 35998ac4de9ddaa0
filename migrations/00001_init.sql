-- Steward's schema. Runs as steward_owner (see `steward migrate bootstrap` for the roles).
--
-- Isolation: every owner-scoped table has owner_id, ENABLE and FORCE ROW LEVEL SECURITY, and
-- the policy owner_isolation with USING and WITH CHECK on the transaction-local app.owner_id.
-- The only other policies are the reviewed "directory" policies for steward_owner on owners
-- and api_keys, used by internal/store/door.go (API-key lookup, owner administration).

-- +goose Up
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE owners (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 100),
    mode       text NOT NULL DEFAULT 'ask' CHECK (mode IN ('ask', 'deny', 'auto')),
    created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE owners ENABLE ROW LEVEL SECURITY;
ALTER TABLE owners FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON owners
    USING (id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
CREATE POLICY directory ON owners TO steward_owner USING (true) WITH CHECK (true);

CREATE TABLE api_keys (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id     uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    name         text NOT NULL DEFAULT 'default' CHECK (length(name) BETWEEN 1 AND 100),
    prefix       text NOT NULL,
    hash         bytea NOT NULL UNIQUE CHECK (length(hash) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_keys_owner ON api_keys (owner_id);
CREATE POLICY directory ON api_keys TO steward_owner USING (true) WITH CHECK (true);

CREATE TABLE conversations (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id   uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    title      text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (id, owner_id)
);
CREATE INDEX conversations_owner_updated ON conversations (owner_id, updated_at DESC);

CREATE TABLE turns (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id        uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    conversation_id uuid NOT NULL,
    trigger         text NOT NULL DEFAULT 'chat' CHECK (trigger IN ('chat', 'webhook', 'schedule', 'cli')),
    status          text NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'suspended', 'resuming', 'completed', 'failed', 'aborted', 'expired')),
    version         integer NOT NULL DEFAULT 1,
    lease_until     timestamptz,
    -- The suspended state (messages, pending calls, results so far), versioned inside.
    state           jsonb,
    iterations      integer NOT NULL DEFAULT 0,
    input_tokens    bigint NOT NULL DEFAULT 0,
    output_tokens   bigint NOT NULL DEFAULT 0,
    cached_tokens   bigint NOT NULL DEFAULT 0,
    cost_micros     bigint NOT NULL DEFAULT 0, -- estimated cost, millionths of a US dollar
    model           text NOT NULL DEFAULT '',
    answer          text,
    error           text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz,
    finished_at     timestamptz,
    UNIQUE (id, owner_id),
    FOREIGN KEY (conversation_id, owner_id) REFERENCES conversations (id, owner_id) ON DELETE CASCADE
);
CREATE INDEX turns_owner_status ON turns (owner_id, status, created_at DESC);
CREATE INDEX turns_conversation ON turns (conversation_id, created_at);
CREATE INDEX turns_suspended_expiry ON turns (expires_at) WHERE status = 'suspended';

CREATE TABLE messages (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id        uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    conversation_id uuid NOT NULL,
    turn_id         uuid NOT NULL,
    seq             integer NOT NULL,
    role            text NOT NULL CHECK (role IN ('user', 'model')),
    content         jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (conversation_id, seq),
    FOREIGN KEY (conversation_id, owner_id) REFERENCES conversations (id, owner_id) ON DELETE CASCADE,
    FOREIGN KEY (turn_id, owner_id) REFERENCES turns (id, owner_id) ON DELETE CASCADE
);
CREATE INDEX messages_turn ON messages (turn_id);

CREATE TABLE tool_calls (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id         uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    turn_id          uuid NOT NULL,
    call_id          text NOT NULL,
    tool             text NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('read', 'write')),
    args             jsonb NOT NULL,
    args_hash        text NOT NULL,
    status           text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'approved', 'denied', 'executing', 'succeeded', 'failed', 'unknown')),
    decided_by       text, -- human | rule:<id> | mode | cap:<name> | kill
    decision_message text,
    result           jsonb,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (turn_id, call_id),
    FOREIGN KEY (turn_id, owner_id) REFERENCES turns (id, owner_id) ON DELETE CASCADE
);
CREATE INDEX tool_calls_owner_status ON tool_calls (owner_id, status);

CREATE TABLE standing_rules (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id   uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    tool       text NOT NULL CHECK (tool ~ '^([a-z][a-z0-9_]{0,63}|\*)$'),
    predicate  jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(predicate) = 'object'),
    effect     text NOT NULL CHECK (effect IN ('allow', 'deny')),
    source     text NOT NULL DEFAULT 'api' CHECK (source IN ('approval', 'api', 'setup')),
    note       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX standing_rules_owner_tool ON standing_rules (owner_id, tool);

CREATE TABLE audit_log (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id   uuid NOT NULL REFERENCES owners (id),
    turn_id    uuid,
    seq        integer NOT NULL DEFAULT 0,
    kind       text NOT NULL,
    data       jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_owner_created ON audit_log (owner_id, created_at DESC);
CREATE INDEX audit_log_turn ON audit_log (turn_id, seq) WHERE turn_id IS NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

CREATE TABLE tasks (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id       uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    title          text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 200),
    notes          text NOT NULL DEFAULT '',
    due            timestamptz,
    status         text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done')),
    source_turn_id uuid,
    created_at     timestamptz NOT NULL DEFAULT now(),
    completed_at   timestamptz
);
CREATE INDEX tasks_owner_status_due ON tasks (owner_id, status, due);

CREATE TABLE memory_facts (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id      uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    kind          text NOT NULL DEFAULT 'fact' CHECK (kind IN ('fact', 'person', 'project', 'preference', 'decision')),
    subject       text NOT NULL DEFAULT '',
    content       text NOT NULL CHECK (length(content) BETWEEN 1 AND 4000),
    attributes    jsonb NOT NULL DEFAULT '{}',
    key           text NOT NULL, -- normalised kind:subject:content, for deduplication
    source        text NOT NULL DEFAULT 'turn', -- turn | api | ingest | consolidation
    turn_id       uuid,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    superseded_at timestamptz
);
CREATE UNIQUE INDEX memory_facts_owner_key ON memory_facts (owner_id, key) WHERE superseded_at IS NULL;

CREATE TABLE memory_chunks (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id      uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    source_kind   text NOT NULL, -- conversation | fact | summary | document
    source_id     text NOT NULL DEFAULT '',
    text          text NOT NULL,
    embedding     vector(768) NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    superseded_at timestamptz
);
CREATE INDEX memory_chunks_embedding ON memory_chunks USING hnsw (embedding vector_cosine_ops);
CREATE INDEX memory_chunks_owner ON memory_chunks (owner_id, created_at DESC);

CREATE TABLE notifications (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id     uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    title        text NOT NULL DEFAULT '',
    message      text NOT NULL CHECK (length(message) BETWEEN 1 AND 4000),
    turn_id      uuid,
    created_at   timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz
);
CREATE INDEX notifications_owner_created ON notifications (owner_id, created_at DESC);

-- Row-level security on every owner-scoped table.
-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['api_keys', 'conversations', 'turns', 'messages', 'tool_calls',
        'standing_rules', 'audit_log', 'tasks', 'memory_facts', 'memory_chunks', 'notifications']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format($p$CREATE POLICY owner_isolation ON %I
            USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
            WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)$p$, t);
    END LOOP;
END
$$;
-- +goose StatementEnd

-- The application role: data access only, under RLS. It owns nothing.
GRANT SELECT, UPDATE (mode) ON owners TO steward_app;
GRANT SELECT, INSERT, UPDATE ON api_keys TO steward_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON conversations, turns, messages, tool_calls,
    standing_rules, tasks, memory_facts, memory_chunks, notifications TO steward_app;
GRANT SELECT, INSERT ON audit_log TO steward_app;

-- +goose Down
DROP TABLE notifications, memory_chunks, memory_facts, tasks, audit_log, standing_rules,
    tool_calls, messages, turns, conversations, api_keys, owners;
DROP FUNCTION audit_log_append_only();
