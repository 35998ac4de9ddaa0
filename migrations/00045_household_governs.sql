-- The gate decides a household policy before the member's own standing rules and gate mode,
-- like the money caps (docs/ARCHITECTURE.md §2): an allow rule or auto mode of a member no
-- longer runs a call the household said other members must approve. household_governs is a
-- reviewed SECURITY DEFINER function like household_request (internal/admin/catalog.go's
-- allowlist): keyed on the caller's own app.owner_id, it answers only whether a policy of
-- the caller's own household names another member for this tool and amount — the same
-- match household_request files votes on (an unknown amount matches: fails closed) — and
-- shows nothing of the policies or the members.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION household_governs(p_tool text, p_amount_minor bigint, p_currency text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT EXISTS (
        SELECT 1
        FROM household_members me
        JOIN household_policies p ON p.household_id = me.household_id AND p.tool = p_tool
        CROSS JOIN LATERAL unnest(p.approvers) a
        JOIN household_members m ON m.owner_id = a AND m.household_id = me.household_id
        WHERE me.owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid
          AND a <> me.owner_id
          AND (p.currency IS NULL OR p_currency IS NULL OR p.currency = p_currency)
          AND (p.min_amount_minor IS NULL OR p_amount_minor IS NULL OR p_amount_minor >= p.min_amount_minor))
$$;
-- +goose StatementEnd

REVOKE ALL ON FUNCTION household_governs(text, bigint, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION household_governs(text, bigint, text) TO steward_app;

-- +goose Down
DROP FUNCTION household_governs(text, bigint, text);
