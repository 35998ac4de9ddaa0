-- Autonomy: scheduled jobs and their runs, signed webhooks, notification delivery.
--
-- Every table here is owner-scoped, with row-level security enabled and forced and the
-- owner_isolation policy of 00001. The reviewed "directory" policies below give steward_owner
-- (the Door in internal/store/door.go) the cross-owner reads autonomy needs, and nothing more:
--   schedules, job_runs        the scheduler's due-jobs scan and the queued-run drain (SELECT)
--   webhooks                   routing POST /webhooks/{hook_id} to its owner and secret (SELECT)
--   notification_channels      finding owners whose notifications are to be delivered (SELECT)

-- +goose Up
CREATE TABLE schedules (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id   uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    job        text NOT NULL CHECK (job ~ '^[a-z][a-z0-9-]{0,63}$'),
    cron       text NOT NULL CHECK (length(cron) BETWEEN 1 AND 100),
    -- An IANA time zone name; the cron expression is read in it (validated in Go).
    timezone   text NOT NULL DEFAULT 'UTC' CHECK (length(timezone) BETWEEN 1 AND 64),
    payload    jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(payload) = 'object'),
    enabled    boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner_id, job),
    UNIQUE (id, owner_id)
);

-- One row per autonomous run (a scheduled job, a manual job run, a webhook event), with its
-- lifecycle: queued (webhooks) → running → completed | failed | skipped | aborted | suspended.
CREATE TABLE job_runs (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id      uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    schedule_id   uuid,
    job           text NOT NULL CHECK (length(job) BETWEEN 1 AND 100),
    trigger       text NOT NULL CHECK (trigger IN ('schedule', 'webhook', 'cli')),
    -- The idempotency key of a scheduled run: the cron time it is for (never an execution id).
    scheduled_for timestamptz NOT NULL,
    status        text NOT NULL
        CHECK (status IN ('queued', 'running', 'completed', 'failed', 'skipped', 'aborted', 'suspended')),
    turn_id       uuid,
    error         text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    finished_at   timestamptz,
    UNIQUE (schedule_id, scheduled_for),
    UNIQUE (id, owner_id),
    FOREIGN KEY (schedule_id, owner_id) REFERENCES schedules (id, owner_id) ON DELETE SET NULL (schedule_id),
    FOREIGN KEY (turn_id, owner_id) REFERENCES turns (id, owner_id) ON DELETE SET NULL (turn_id)
);
-- (job, owner, scheduled time) is unique for scheduled runs, with or without a schedule row
-- (a direct EventBridge payload names the job and owner).
CREATE UNIQUE INDEX job_runs_scheduled_key ON job_runs (owner_id, job, scheduled_for) WHERE trigger = 'schedule';
CREATE INDEX job_runs_owner_job ON job_runs (owner_id, job, created_at DESC);
CREATE INDEX job_runs_queued ON job_runs (created_at) WHERE status = 'queued';

-- Webhook endpoints. The secret must stay usable for HMAC-SHA256, so it cannot be stored only
-- hashed; it is stored as issued and steward_app may write it but never read it back (column
-- privileges below): only the Door (steward_owner, webhook routing) reads it.
CREATE TABLE webhooks (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id   uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    hook_id    text NOT NULL UNIQUE CHECK (hook_id ~ '^wh_[A-Za-z0-9_-]{16,64}$'),
    source     text NOT NULL CHECK (source ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
    secret     text NOT NULL CHECK (secret ~ '^whsec_[A-Za-z0-9+/=]{16,}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz,
    UNIQUE (id, owner_id)
);

-- Accepted webhook deliveries, deduplicated on the sender's webhook-id per hook. The row and
-- its run are created in one transaction.
CREATE TABLE webhook_deliveries (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id    uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    webhook_id  uuid NOT NULL,
    message_id  text NOT NULL CHECK (length(message_id) BETWEEN 1 AND 256),
    run_id      uuid NOT NULL,
    body        bytea NOT NULL CHECK (length(body) <= 1048576),
    received_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (webhook_id, message_id),
    FOREIGN KEY (webhook_id, owner_id) REFERENCES webhooks (id, owner_id) ON DELETE CASCADE,
    FOREIGN KEY (run_id, owner_id) REFERENCES job_runs (id, owner_id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX webhook_deliveries_run ON webhook_deliveries (run_id);

-- Where an owner's notifications are delivered: an HTTPS webhook (ntfy, Slack, anything that
-- takes JSON). topic is sent in the body for ntfy's JSON publishing.
CREATE TABLE notification_channels (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id   uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    kind       text NOT NULL DEFAULT 'webhook' CHECK (kind IN ('webhook')),
    url        text NOT NULL CHECK (url ~ '^https?://' AND length(url) <= 2000),
    topic      text NOT NULL DEFAULT '' CHECK (length(topic) <= 64),
    enabled    boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner_id, kind)
);

-- Per-notification delivery state. delivery_next_at NULL means no further attempt.
ALTER TABLE notifications
    ADD COLUMN delivery_attempts    integer NOT NULL DEFAULT 0,
    ADD COLUMN delivery_next_at     timestamptz DEFAULT now(),
    ADD COLUMN delivery_lease_until timestamptz,
    ADD COLUMN delivery_error       text NOT NULL DEFAULT '';
CREATE INDEX notifications_undelivered ON notifications (owner_id, delivery_next_at) WHERE delivered_at IS NULL;

-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['schedules', 'job_runs', 'webhooks', 'webhook_deliveries', 'notification_channels']
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

CREATE POLICY directory ON schedules FOR SELECT TO steward_owner USING (true);
CREATE POLICY directory ON job_runs FOR SELECT TO steward_owner USING (true);
CREATE POLICY directory ON webhooks FOR SELECT TO steward_owner USING (true);
CREATE POLICY directory ON notification_channels FOR SELECT TO steward_owner USING (true);

GRANT SELECT, INSERT, UPDATE, DELETE ON schedules, notification_channels TO steward_app;
GRANT SELECT, INSERT, UPDATE ON job_runs TO steward_app;
GRANT SELECT, INSERT ON webhook_deliveries TO steward_app;
GRANT SELECT (id, owner_id, hook_id, source, created_at, revoked_at),
    INSERT (owner_id, hook_id, source, secret),
    UPDATE (revoked_at) ON webhooks TO steward_app;

-- +goose Down
DROP INDEX notifications_undelivered;
ALTER TABLE notifications DROP COLUMN delivery_attempts, DROP COLUMN delivery_next_at,
    DROP COLUMN delivery_lease_until, DROP COLUMN delivery_error;
DROP TABLE notification_channels, webhook_deliveries, webhooks, job_runs, schedules;
