-- Expired household requests (issue 17 §2): when the requester's suspended turn expires, the
-- sweep (internal/sweep) marks the turn's still-pending votes 'expired' in the same
-- transaction, so each member's inbox shows the request as expired and it can no longer be
-- approved. household_expire is a reviewed SECURITY DEFINER function like household_close
-- (internal/admin/catalog.go's allowlist): keyed on the caller's own app.owner_id, it
-- touches only the votes on the caller's own turns whose expiry has passed.

-- +goose Up
ALTER TABLE household_approvals DROP CONSTRAINT household_approvals_status_check;
ALTER TABLE household_approvals ADD CONSTRAINT household_approvals_status_check
    CHECK (status IN ('pending', 'approved', 'denied', 'void', 'expired'));

-- +goose StatementBegin
CREATE FUNCTION household_expire(p_now timestamptz) RETURNS integer
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    WITH v AS (
        UPDATE household_approvals SET status = 'expired'
        WHERE status = 'pending' AND expires_at <= p_now
          AND requester_id = NULLIF(current_setting('app.owner_id', true), '')::uuid
        RETURNING 1)
    SELECT count(*)::integer FROM v
$$;
-- +goose StatementEnd

REVOKE ALL ON FUNCTION household_expire(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION household_expire(timestamptz) TO steward_app;

-- +goose Down
DROP FUNCTION household_expire(timestamptz);
UPDATE household_approvals SET status = 'void' WHERE status = 'expired';
ALTER TABLE household_approvals DROP CONSTRAINT household_approvals_status_check;
ALTER TABLE household_approvals ADD CONSTRAINT household_approvals_status_check
    CHECK (status IN ('pending', 'approved', 'denied', 'void'));
