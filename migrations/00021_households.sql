-- Household approvals (issue 17 §2; README "Household approvals"; docs/ARCHITECTURE.md §5).
-- The operator groups owners of one deployment into a household (`steward households`, as
-- steward_owner) and gives it approval policies: a tool, an optional minimum amount (minor
-- units, optionally of one currency) and the members who must also approve a matching call.
--
-- household_approvals is the members' inbox: one row per (suspended turn, pending call,
-- approver), holding ONLY what the approver may see — tool, the readable summary of the
-- arguments, the amount, the requesting member's name, the status — plus the references the
-- service needs to resume the requester's turn (turn_id, call_id, args_hash: ids, not data).
-- A row belongs to its approver (owner_id), so owner_isolation alone lets a member read and
-- decide only requests addressed to them; the requester's own decision is a row of their own.
-- The two writes across owners go through reviewed SECURITY DEFINER functions (the catalog's
-- allowlist, internal/admin/catalog.go), both keyed on the caller's own app.owner_id:
--   household_request(turn, calls)  files a suspended turn's calls for the members its
--                                   household's policies name; returns how many member rows
--   household_votes(turn)           the votes on the caller's own turn (names and statuses)
--   household_close(turn)           voids the still-pending votes on the caller's own turn
-- They run as steward_owner through the "directory" policies below; steward_app has no
-- grant on households or household_policies, and cannot insert into household_approvals.

-- +goose Up
CREATE TABLE households (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE household_members (
    owner_id     uuid PRIMARY KEY REFERENCES owners (id) ON DELETE CASCADE,
    household_id uuid NOT NULL REFERENCES households (id) ON DELETE CASCADE,
    joined_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX household_members_household ON household_members (household_id);
ALTER TABLE household_members ENABLE ROW LEVEL SECURITY;
ALTER TABLE household_members FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON household_members
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
CREATE POLICY directory ON household_members TO steward_owner USING (true) WITH CHECK (true);

CREATE TABLE household_policies (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    household_id     uuid NOT NULL REFERENCES households (id) ON DELETE CASCADE,
    tool             text NOT NULL CHECK (tool ~ '^[a-z0-9_.-]{1,64}$'),
    min_amount_minor bigint CHECK (min_amount_minor >= 0),
    currency         text CHECK (currency ~ '^[A-Z]{3}$'),
    approvers        uuid[] NOT NULL CHECK (cardinality(approvers) BETWEEN 1 AND 20),
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX household_policies_household ON household_policies (household_id, tool);

CREATE TABLE household_approvals (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id       uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE, -- the approver
    requester_id   uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    requester_name text NOT NULL,
    turn_id        uuid NOT NULL,
    call_id        text NOT NULL,
    args_hash      text NOT NULL,
    tool           text NOT NULL,
    summary        text NOT NULL CHECK (length(summary) <= 2000),
    amount         text,
    status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'void')),
    message        text CHECK (length(message) <= 2000),
    decided_at     timestamptz,
    expires_at     timestamptz NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (turn_id, call_id, owner_id),
    FOREIGN KEY (turn_id, requester_id) REFERENCES turns (id, owner_id) ON DELETE CASCADE
);
CREATE INDEX household_approvals_inbox ON household_approvals (owner_id, status, created_at);
CREATE INDEX household_approvals_turn ON household_approvals (requester_id, turn_id);
ALTER TABLE household_approvals ENABLE ROW LEVEL SECURITY;
ALTER TABLE household_approvals FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON household_approvals
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
CREATE POLICY directory ON household_approvals TO steward_owner USING (true) WITH CHECK (true);

-- A member may read its own membership (owner_isolation), nothing of the household's others.
GRANT SELECT ON household_members TO steward_app;
GRANT SELECT ON household_approvals TO steward_app;
GRANT UPDATE (status, message, decided_at) ON household_approvals TO steward_app;

-- p_calls: [{call_id, args_hash, tool, summary, amount_minor?, currency?, amount?}].
-- +goose StatementBegin
CREATE FUNCTION household_request(p_turn uuid, p_calls jsonb, p_expires timestamptz) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    me   uuid := NULLIF(current_setting('app.owner_id', true), '')::uuid;
    hh   uuid;
    who  text;
    n    integer;
BEGIN
    IF me IS NULL OR jsonb_typeof(p_calls) <> 'array' THEN
        RETURN 0;
    END IF;
    SELECT m.household_id, o.name INTO hh, who
        FROM household_members m JOIN owners o ON o.id = m.owner_id WHERE m.owner_id = me;
    IF hh IS NULL OR NOT EXISTS (SELECT 1 FROM turns t WHERE t.id = p_turn AND t.owner_id = me AND t.status = 'suspended') THEN
        RETURN 0;
    END IF;
    WITH calls AS (
        SELECT c->>'call_id' AS call_id, c->>'args_hash' AS args_hash, c->>'tool' AS tool,
            left(c->>'summary', 2000) AS summary, c->>'amount' AS amount,
            c->>'currency' AS currency, (c->>'amount_minor')::bigint AS amount_minor
        FROM jsonb_array_elements(p_calls) c
    ), match AS (
        SELECT DISTINCT c.call_id, a AS approver
        FROM calls c
        JOIN household_policies p ON p.household_id = hh AND p.tool = c.tool
        CROSS JOIN LATERAL unnest(p.approvers) a
        JOIN household_members m ON m.owner_id = a AND m.household_id = hh
        WHERE a <> me
          AND (p.currency IS NULL OR c.currency IS NULL OR p.currency = c.currency)
          -- an unreadable amount matches (fails closed)
          AND (p.min_amount_minor IS NULL OR c.amount_minor IS NULL OR c.amount_minor >= p.min_amount_minor)
    ), votes AS (
        -- The requester's own vote on every pending call (their confirm records it), and
        -- the members' on the calls their policies match.
        SELECT me AS approver, c.* FROM calls c WHERE EXISTS (SELECT 1 FROM match)
        UNION ALL
        SELECT m.approver, c.* FROM calls c JOIN match m ON m.call_id = c.call_id
    ), ins AS (
        INSERT INTO household_approvals (owner_id, requester_id, requester_name, turn_id, call_id, args_hash, tool, summary, amount, expires_at)
            SELECT v.approver, me, who, p_turn, v.call_id, v.args_hash, v.tool, v.summary, v.amount, p_expires FROM votes v
            ON CONFLICT DO NOTHING
            RETURNING 1
    )
    SELECT (SELECT count(*) FROM match) INTO n FROM (SELECT count(*) FROM ins) x;
    RETURN n;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION household_votes(p_turn uuid)
RETURNS TABLE (call_id text, args_hash text, tool text, approver_id uuid, approver_name text, status text, message text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT a.call_id, a.args_hash, a.tool, a.owner_id, o.name, a.status, a.message
    FROM household_approvals a JOIN owners o ON o.id = a.owner_id
    WHERE a.turn_id = p_turn AND a.requester_id = NULLIF(current_setting('app.owner_id', true), '')::uuid
    ORDER BY a.call_id, a.owner_id <> a.requester_id, o.name
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION household_close(p_turn uuid) RETURNS integer
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    WITH v AS (
        UPDATE household_approvals SET status = 'void'
        WHERE turn_id = p_turn AND status = 'pending'
          AND requester_id = NULLIF(current_setting('app.owner_id', true), '')::uuid
        RETURNING 1)
    SELECT count(*)::integer FROM v
$$;
-- +goose StatementEnd

REVOKE ALL ON FUNCTION household_request(uuid, jsonb, timestamptz), household_votes(uuid), household_close(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION household_request(uuid, jsonb, timestamptz), household_votes(uuid), household_close(uuid) TO steward_app;

-- +goose Down
DROP FUNCTION household_close(uuid);
DROP FUNCTION household_votes(uuid);
DROP FUNCTION household_request(uuid, jsonb, timestamptz);
DROP TABLE household_approvals;
DROP TABLE household_policies;
DROP TABLE household_members;
DROP TABLE households;
