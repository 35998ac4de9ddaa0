-- Defence in depth for credentials.
--
-- steward_door is the runtime's door (`steward serve`, the Lambda functions): the reads across
-- owners that serving needs, and nothing else. It owns nothing, writes nothing, and sees
-- across owners only through the "door" policies below (FOR SELECT), on only the columns its
-- queries read (internal/store/door.go):
--   owners, api_keys           API-key lookup; the owner list of the expiry sweep
--   turns, controls            the deployment's daily cost and its cap
--   memory_outbox              the memory worker's due items
--   schedules, job_runs        the scheduler's due-jobs scan and the queued-run drain
--   webhooks                   routing POST /webhooks/{hook_id} to its owner and secret
--   notification_channels      finding owners whose notifications are to be delivered
-- steward_owner, which owns every table (and so could switch off row-level security or the
-- audit trigger), is left to migrations and the admin CLI. `steward migrate bootstrap`
-- creates steward_door; the catalog lint (store.CatalogChecks) fails if a runtime role owns
-- anything or holds more than this.
--
-- steward_app loses INSERT and UPDATE on api_keys: it could mint a key for its owner or bring
-- back a revoked one. It keeps UPDATE of revoked_at alone, so an owner may revoke their own
-- key, and a trigger makes revocation final for every role.

-- +goose Up
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'steward_door') THEN
        RAISE EXCEPTION 'the role steward_door does not exist: run steward migrate bootstrap (with DOOR_DATABASE_URL set), then steward migrate up';
    END IF;
END
$$;
-- +goose StatementEnd

GRANT SELECT ON owners TO steward_door;
GRANT SELECT (id, owner_id, hash, revoked_at) ON api_keys TO steward_door;
GRANT SELECT (created_at, cost_micros) ON turns TO steward_door;
GRANT SELECT (daily_cost_cap_micros) ON controls TO steward_door;
GRANT SELECT (id, owner_id, next_attempt_at, locked_until, done_at, failed_at) ON memory_outbox TO steward_door;
GRANT SELECT (id, owner_id, job, cron, timezone, payload, enabled, created_at) ON schedules TO steward_door;
GRANT SELECT (id, owner_id, schedule_id, scheduled_for, status, created_at) ON job_runs TO steward_door;
GRANT SELECT (id, owner_id, hook_id, source, secret, revoked_at) ON webhooks TO steward_door;
GRANT SELECT (owner_id, enabled) ON notification_channels TO steward_door;

-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['owners', 'api_keys', 'turns', 'memory_outbox', 'schedules', 'job_runs',
        'webhooks', 'notification_channels']
    LOOP
        EXECUTE format('CREATE POLICY door ON %I FOR SELECT TO steward_door USING (true)', t);
    END LOOP;
END
$$;
-- +goose StatementEnd

REVOKE INSERT, UPDATE ON api_keys FROM steward_app;
GRANT UPDATE (revoked_at) ON api_keys TO steward_app;

-- A revoked key stays revoked, whoever asks.
-- +goose StatementBegin
CREATE FUNCTION api_key_revocation_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.revoked_at IS NOT NULL AND NEW.revoked_at IS DISTINCT FROM OLD.revoked_at THEN
        RAISE EXCEPTION 'API key % is revoked, and revocation is final', OLD.id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER api_keys_revocation_final BEFORE UPDATE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION api_key_revocation_final();

-- +goose Down
DROP TRIGGER api_keys_revocation_final ON api_keys;
DROP FUNCTION api_key_revocation_final();
REVOKE UPDATE (revoked_at) ON api_keys FROM steward_app;
GRANT INSERT, UPDATE ON api_keys TO steward_app;
-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['owners', 'api_keys', 'turns', 'memory_outbox', 'schedules', 'job_runs',
        'webhooks', 'notification_channels']
    LOOP
        EXECUTE format('DROP POLICY door ON %I', t);
    END LOOP;
END
$$;
-- +goose StatementEnd
REVOKE ALL ON owners, api_keys, turns, controls, memory_outbox, schedules, job_runs, webhooks,
    notification_channels FROM steward_door;
