-- Skills: playbooks the agent finds (find_skill) and follows (use_skill), per owner under
-- row-level security (docs/SKILLS.md, docs/ARCHITECTURE.md §16). A row holds every file's
-- text, the hash over them, the scan's findings and the worst severity; a skill is staged
-- (read and scanned, waiting for the owner's yes), active, or blocked (a finding at or above
-- high: off until the owner overrides, which the audit log records). The embedding of the
-- description (the memory embedder's) ranks find_skill by meaning. Built-in skills live in
-- the binary; skill_settings holds an owner's switch for each one turned off. Each use is an
-- audit event of the turn (kind skill_used).

-- +goose Up
CREATE TABLE skills (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id       uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    name           text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
    description    text NOT NULL CHECK (length(description) BETWEEN 1 AND 1024),
    version        text NOT NULL DEFAULT '',
    risk_level     text NOT NULL CHECK (risk_level IN ('low', 'medium', 'high')),
    triggers       text[] NOT NULL DEFAULT '{}',
    required_tools text[] NOT NULL DEFAULT '{}',
    origin         text NOT NULL CHECK (origin IN ('owner', 'outside')),
    source         text NOT NULL CHECK (length(source) <= 2048),
    status         text NOT NULL CHECK (status IN ('staged', 'active', 'blocked')),
    enabled        boolean NOT NULL DEFAULT false,
    sha256         text NOT NULL,
    files          jsonb NOT NULL,
    findings       jsonb NOT NULL DEFAULT '[]',
    worst          smallint NOT NULL DEFAULT 0,
    overridden_at  timestamptz,
    turn_id        uuid,
    call_id        text,
    embedding      vector(768),
    created_at     timestamptz NOT NULL DEFAULT now()
);
-- One installed skill of a name per owner; staged ones may repeat until installed.
CREATE UNIQUE INDEX skills_owner_name ON skills (owner_id, name) WHERE status <> 'staged';
-- The skill install_skill staged for one call of one turn.
CREATE UNIQUE INDEX skills_owner_call ON skills (owner_id, turn_id, call_id) WHERE turn_id IS NOT NULL;
ALTER TABLE skills ENABLE ROW LEVEL SECURITY;
ALTER TABLE skills FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON skills
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON skills TO steward_app;

CREATE TABLE skill_settings (
    owner_id uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    name     text NOT NULL,
    enabled  boolean NOT NULL,
    PRIMARY KEY (owner_id, name)
);
ALTER TABLE skill_settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE skill_settings FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON skill_settings
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON skill_settings TO steward_app;

CREATE INDEX audit_log_skill_used ON audit_log (owner_id, id DESC) WHERE kind = 'skill_used';

-- +goose Down
DROP INDEX audit_log_skill_used;
DROP TABLE skill_settings;
DROP TABLE skills;
