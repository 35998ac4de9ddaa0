-- household_votes and household_close were SQL functions with a SET clause, which PostgreSQL
-- can neither inline nor keep a plan for: every call was planned again, and household_votes
-- runs on every confirm, household member or not (issue 14). As PL/pgSQL their statements'
-- plans are kept per connection. Same bodies, same rights: CREATE OR REPLACE keeps the grants.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION household_votes(p_turn uuid)
RETURNS TABLE (call_id text, args_hash text, tool text, approver_id uuid, approver_name text, status text, message text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    RETURN QUERY
    SELECT a.call_id, a.args_hash, a.tool, a.owner_id, o.name, a.status, a.message
    FROM household_approvals a JOIN owners o ON o.id = a.owner_id
    WHERE a.turn_id = p_turn AND a.requester_id = NULLIF(current_setting('app.owner_id', true), '')::uuid
    ORDER BY a.call_id, a.owner_id <> a.requester_id, o.name;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION household_close(p_turn uuid) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    n integer;
BEGIN
    UPDATE household_approvals SET status = 'void'
    WHERE turn_id = p_turn AND status = 'pending'
      AND requester_id = NULLIF(current_setting('app.owner_id', true), '')::uuid;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION household_votes(p_turn uuid)
RETURNS TABLE (call_id text, args_hash text, tool text, approver_id uuid, approver_name text, status text, message text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT a.call_id, a.args_hash, a.tool, a.owner_id, o.name, a.status, a.message
    FROM household_approvals a JOIN owners o ON o.id = a.owner_id
    WHERE a.turn_id = p_turn AND a.requester_id = NULLIF(current_setting('app.owner_id', true), '')::uuid
    ORDER BY a.call_id, a.owner_id <> a.requester_id, o.name
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION household_close(p_turn uuid) RETURNS integer
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    WITH v AS (
        UPDATE household_approvals SET status = 'void'
        WHERE turn_id = p_turn AND status = 'pending'
          AND requester_id = NULLIF(current_setting('app.owner_id', true), '')::uuid
        RETURNING 1)
    SELECT count(*)::integer FROM v
$$;
-- +goose StatementEnd
