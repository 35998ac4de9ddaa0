-- Reminders and automations the owner sets in words (docs/AUTOMATIONS.md).
--
-- owners.timezone is the owner's IANA time zone: "17:00", "tomorrow 9:00" and a schedule's
-- words are read in it (UTC until the owner sets it).
--
-- reminders: one row per reminder; it fires once (status pending → fired, a conditional
-- update), when due or, after downtime, late, saying so.
--
-- automations: an instruction run as an autonomous turn on a cron schedule read in the
-- owner's zone (or on an event: a new mail matching from / subject, a signed webhook). Each
-- scheduled run is a job_runs row of job 'automation:<id>' whose scheduled time is its key
-- (job_runs_scheduled_key): two schedulers, two ticks or a retry claim one run.
--
-- Both fire as work items (internal/work, migrations/00053_work.sql). steward_door reads,
-- through a "door" policy FOR SELECT, only the reminders' columns the Lambda minute tick's
-- look-ahead names (internal/store/automations.go: ScanDueReminders).

-- +goose Up
ALTER TABLE owners ADD COLUMN timezone text NOT NULL DEFAULT 'UTC' CHECK (length(timezone) BETWEEN 1 AND 64);
GRANT UPDATE (timezone) ON owners TO steward_app;

CREATE TABLE reminders (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id        uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    text            text NOT NULL CHECK (length(btrim(text)) BETWEEN 1 AND 500),
    due_at          timestamptz NOT NULL,
    -- The zone the owner's words were read in, to show the time as they meant it.
    timezone        text NOT NULL DEFAULT 'UTC' CHECK (length(timezone) BETWEEN 1 AND 64),
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'fired', 'cancelled')),
    source_turn_id  uuid,
    fired_at        timestamptz,
    late            boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (id, owner_id)
);
CREATE INDEX reminders_due ON reminders (due_at) WHERE status = 'pending';
CREATE INDEX reminders_owner ON reminders (owner_id, status, due_at);

CREATE TABLE automations (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id        uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    instruction     text NOT NULL CHECK (length(btrim(instruction)) BETWEEN 1 AND 2000),
    kind            text NOT NULL DEFAULT 'schedule' CHECK (kind IN ('schedule', 'mail', 'webhook')),
    -- kind schedule: a five-field cron expression read in timezone; words: what the owner wrote.
    cron            text NOT NULL DEFAULT '' CHECK (length(cron) <= 100),
    words           text NOT NULL DEFAULT '' CHECK (length(words) <= 200),
    timezone        text NOT NULL DEFAULT 'UTC' CHECK (length(timezone) BETWEEN 1 AND 64),
    -- kind mail: a new mail matches when its sender contains mail_from and its subject
    -- contains mail_subject (case-insensitive; an empty one matches all).
    mail_from       text NOT NULL DEFAULT '' CHECK (length(mail_from) <= 200),
    mail_subject    text NOT NULL DEFAULT '' CHECK (length(mail_subject) <= 200),
    -- kind webhook: the signed webhook (webhooks.hook_id) whose deliveries run it.
    hook_id         text NOT NULL DEFAULT '' CHECK (length(hook_id) <= 80),
    status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
    paused_reason   text NOT NULL DEFAULT '' CHECK (length(paused_reason) <= 500),
    failures        integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
    -- Due times are searched from here (creation, resume, edit) or the latest run: a paused
    -- automation does not catch up what it missed while paused.
    since           timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (id, owner_id)
);
CREATE INDEX automations_owner ON automations (owner_id, created_at);
CREATE INDEX automations_active ON automations (kind) WHERE status = 'active';

-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['reminders', 'automations']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format($p$CREATE POLICY owner_isolation ON %I
            USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
            WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)$p$, t);
        EXECUTE format('CREATE POLICY directory ON %I FOR SELECT TO steward_owner USING (true)', t);
    END LOOP;
END
$$;
-- +goose StatementEnd

GRANT SELECT, INSERT, UPDATE, DELETE ON reminders, automations TO steward_app;
CREATE POLICY door ON reminders FOR SELECT TO steward_door USING (true);
GRANT SELECT (id, owner_id, due_at, status) ON reminders TO steward_door;

-- +goose Down
DROP TABLE automations, reminders;
REVOKE UPDATE (timezone) ON owners FROM steward_app;
ALTER TABLE owners DROP COLUMN timezone;
