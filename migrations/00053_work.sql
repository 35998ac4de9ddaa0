-- One work spine (internal/work, docs/ARCHITECTURE.md §10): every piece of asynchronous work
-- an owner has pending — a webhook's queued run, a turn saved continuing, a Telegram update
-- stored for its turn, a reminder — is one row here, keyed by (owner, kind, key), enqueued in
-- the transaction that made the work. The row says only "look at this": the domain's own
-- claim (a job run's, a turn's, an update's) still decides exactly once. A worker claims the
-- row (running, with a lease), runs, and deletes it; a failure puts it back queued for later
-- (run_after), and after the kind's attempts it is kept failed for an operator. The table
-- holds only pending work.
--
-- One door-side scan (steward_door, FOR SELECT, only the columns it names) finds what is due
-- across owners — queued rows past run_after, running rows whose lease lapsed (the rescuer) —
-- and each is then claimed in its owner's own transaction under forced row-level security.
--
-- What is pending when this migration runs gets its row, so a deploy loses nothing: the
-- queued webhook runs, the continuing turns and the queued Telegram updates (their old scans
-- are gone with this change).

-- +goose Up
CREATE TABLE work (
    owner_id    uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_]{0,39}$'),
    key         text NOT NULL CHECK (length(key) BETWEEN 1 AND 200),
    state       text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'failed')),
    attempts    integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    run_after   timestamptz NOT NULL,
    lease_until timestamptz,
    last_error  text NOT NULL DEFAULT '' CHECK (length(last_error) <= 2000),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (owner_id, kind, key)
);
CREATE INDEX work_queued ON work (run_after) WHERE state = 'queued';
CREATE INDEX work_running ON work (lease_until) WHERE state = 'running';

-- The backfill reads the three tables as their owner (the migration's role), around their
-- forced row-level security, before the new table's is switched on.
ALTER TABLE job_runs NO FORCE ROW LEVEL SECURITY;
ALTER TABLE turns NO FORCE ROW LEVEL SECURITY;
ALTER TABLE telegram_updates NO FORCE ROW LEVEL SECURITY;
INSERT INTO work (owner_id, kind, key, run_after)
SELECT owner_id, 'webhook_run', id::text, created_at FROM job_runs WHERE status = 'queued'
UNION ALL
SELECT owner_id, 'turn_continue', id::text, updated_at FROM turns WHERE status = 'continuing'
UNION ALL
SELECT owner_id, 'telegram_update', update_id::text, created_at FROM telegram_updates WHERE status = 'queued'
ON CONFLICT DO NOTHING;
ALTER TABLE job_runs FORCE ROW LEVEL SECURITY;
ALTER TABLE turns FORCE ROW LEVEL SECURITY;
ALTER TABLE telegram_updates FORCE ROW LEVEL SECURITY;

ALTER TABLE work ENABLE ROW LEVEL SECURITY;
ALTER TABLE work FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON work
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON work TO steward_app;
GRANT SELECT (owner_id, kind, key, state, run_after, lease_until) ON work TO steward_door;
CREATE POLICY door ON work FOR SELECT TO steward_door USING (true);
-- The admin CLI's door (steward_owner) reads it too, as it does job_runs and turns.
CREATE POLICY directory ON work FOR SELECT TO steward_owner USING (true);

-- +goose Down
DROP TABLE work;
