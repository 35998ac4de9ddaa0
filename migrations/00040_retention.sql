-- Retention (docs/ARCHITECTURE.md §16, docs/CONFIGURATION.md "Retention"): the rows that
-- only grow — audit events, webhook deliveries (their bodies), the memory outbox's finished
-- items and finished job runs — are deleted by the sweep once older than their configured
-- age, in bounded batches (one short transaction each, at most `batch` rows).
--
-- Only these functions delete them. They run as their owner (SECURITY DEFINER), and only
-- steward_door, the runtime's cross-owner role, may call them; steward_app still cannot
-- delete an audit event. audit_log stays append-only for everyone else: its guard lets a
-- row go only inside retire_audit (the steward.retention setting it makes for its delete) and
-- only when older than 30 days, whatever the caller asks for.
--
-- Each batch is the oldest rows by id (the identity columns grow in insertion order, so the
-- oldest rows come first and a batch reads at most `batch` index entries: no new index on
-- the hot path's inserts). Job runs have uuid ids: a partial index on finished_at finds the
-- finished ones; the newest run of each schedule is kept, as the scheduler counts the next
-- occurrence from it.
--
-- nearest_chunks is memory recall's search (queries/memory_worker.sql NearestChunks),
-- planned at each call with its owner known (EXECUTE … USING). As a prepared statement,
-- after five runs PostgreSQL settled on a generic plan made for the average owner: read all
-- of the owner's chunks and sort them by distance — 1.2 s and 300 ms of CPU for an owner
-- with 30,000 chunks — instead of the HNSW index (docs/PERFORMANCE.md "At scale"). Planned
-- with the owner known it takes the index for a large owner and the sort for a small one.
-- SECURITY INVOKER: row-level security applies as it did to the statement it replaces.
--
-- audit_log_turn gains owner_id between turn_id and seq: with only (turn_id, seq), the
-- generic plan of a turn's events (ListTurnAudit, the story) ANDed it with the owner's index
-- — a bitmap of every audit event of the owner, 337 ms for an owner with a million — where
-- one index now answers both conditions (0.06 ms). Same index count on the hot path.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION nearest_chunks(query vector, owner uuid, kinds text[], max_rows int) RETURNS SETOF memory_chunks
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public AS $$
BEGIN
    RETURN QUERY EXECUTE
        'SELECT * FROM memory_chunks
        WHERE owner_id = $2 AND superseded_at IS NULL AND (cardinality($3) = 0 OR source_kind = ANY ($3))
        ORDER BY embedding::halfvec(768) <=> $1::halfvec(768)
        LIMIT $4'
        USING query, owner, kinds, max_rows;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('steward.retention', true) = 'on'
        AND OLD.created_at < now() - interval '30 days' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd

CREATE POLICY retention ON audit_log FOR SELECT TO steward_owner USING (created_at < now() - interval '30 days');
CREATE POLICY retention_delete ON audit_log FOR DELETE TO steward_owner USING (created_at < now() - interval '30 days');
CREATE POLICY retention ON webhook_deliveries FOR SELECT TO steward_owner USING (true);
CREATE POLICY retention_delete ON webhook_deliveries FOR DELETE TO steward_owner USING (true);
CREATE POLICY retention_delete ON memory_outbox FOR DELETE TO steward_owner USING (true);
CREATE POLICY retention_delete ON job_runs FOR DELETE TO steward_owner USING (true);

CREATE INDEX job_runs_finished ON job_runs (finished_at) WHERE finished_at IS NOT NULL;

DROP INDEX audit_log_turn;
CREATE INDEX audit_log_turn ON audit_log (turn_id, owner_id, seq) WHERE turn_id IS NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION retire_audit(before timestamptz, batch int) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    n bigint;
BEGIN
    PERFORM set_config('steward.retention', 'on', true);
    WITH oldest AS (SELECT id, created_at FROM audit_log ORDER BY id LIMIT batch),
    gone AS (DELETE FROM audit_log a USING oldest o
        WHERE a.id = o.id AND o.created_at < least(before, now() - interval '30 days') RETURNING 1)
    SELECT count(*) INTO n FROM gone;
    PERFORM set_config('steward.retention', '', true);
    RETURN n;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION retire_webhook_deliveries(before timestamptz, batch int) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    WITH oldest AS (SELECT id, received_at FROM webhook_deliveries ORDER BY id LIMIT batch),
    gone AS (DELETE FROM webhook_deliveries d USING oldest o
        WHERE d.id = o.id AND o.received_at < before RETURNING 1)
    SELECT count(*) FROM gone
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION retire_memory_outbox(before timestamptz, batch int) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    WITH oldest AS (SELECT id FROM memory_outbox WHERE done_at IS NOT NULL OR failed_at IS NOT NULL ORDER BY id LIMIT batch),
    gone AS (DELETE FROM memory_outbox m USING oldest o
        WHERE m.id = o.id AND coalesce(m.done_at, m.failed_at) < before RETURNING 1)
    SELECT count(*) FROM gone
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION retire_job_runs(before timestamptz, batch int) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    WITH old AS (
        SELECT r.id FROM job_runs r
        WHERE r.finished_at IS NOT NULL AND r.finished_at < before
            AND r.status NOT IN ('queued', 'running', 'suspended')
            AND (r.schedule_id IS NULL OR EXISTS (SELECT 1 FROM job_runs n
                WHERE n.schedule_id = r.schedule_id AND n.scheduled_for > r.scheduled_for))
        ORDER BY r.finished_at LIMIT batch),
    gone AS (DELETE FROM job_runs r USING old WHERE r.id = old.id RETURNING 1)
    SELECT count(*) FROM gone
$$;
-- +goose StatementEnd

REVOKE ALL ON FUNCTION retire_audit(timestamptz, int), retire_webhook_deliveries(timestamptz, int),
    retire_memory_outbox(timestamptz, int), retire_job_runs(timestamptz, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION retire_audit(timestamptz, int), retire_webhook_deliveries(timestamptz, int),
    retire_memory_outbox(timestamptz, int), retire_job_runs(timestamptz, int) TO steward_door;

-- +goose Down
DROP FUNCTION nearest_chunks(vector, uuid, text[], int);
DROP FUNCTION retire_job_runs(timestamptz, int);
DROP FUNCTION retire_memory_outbox(timestamptz, int);
DROP FUNCTION retire_webhook_deliveries(timestamptz, int);
DROP FUNCTION retire_audit(timestamptz, int);
DROP INDEX audit_log_turn;
CREATE INDEX audit_log_turn ON audit_log (turn_id, seq) WHERE turn_id IS NOT NULL;
DROP INDEX job_runs_finished;
DROP POLICY retention_delete ON job_runs;
DROP POLICY retention_delete ON memory_outbox;
DROP POLICY retention_delete ON webhook_deliveries;
DROP POLICY retention ON webhook_deliveries;
DROP POLICY retention_delete ON audit_log;
DROP POLICY retention ON audit_log;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd
