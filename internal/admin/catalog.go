package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/stewardhq/steward/internal/store"

	"github.com/jackc/pgx/v5"
)

// Check is the outcome of one health or catalog check.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// DirectoryPolicies and DoorPolicies are the only policies besides owner_isolation:
// reviewed, cross-owner access through the Door, for steward_owner (the admin CLI) and for
// steward_door (the runtime, FOR SELECT only). Keep these lists short.
var (
	DirectoryPolicies = []string{"owners.directory", "api_keys.directory", "turns.directory", "memory_outbox.directory",
		"schedules.directory", "job_runs.directory", "webhooks.directory", "notification_channels.directory",
		"household_members.directory", "household_approvals.directory",
		// the work spine (§10) and the owners' reminders and automations, read by the admin CLI
		"work.directory", "reminders.directory", "automations.directory",
		// retention's deletes across owners, inside the door-only retire_* functions (§21)
		"audit_log.retention", "audit_log.retention_delete", "webhook_deliveries.retention", "webhook_deliveries.retention_delete",
		"memory_outbox.retention_delete", "job_runs.retention_delete"}
	DoorPolicies = []string{"owners.door", "api_keys.door", "turns.door", "memory_outbox.door",
		"schedules.door", "job_runs.door", "webhooks.door", "notification_channels.door", "web_sessions.door", "approval_links.door", "passkeys.door", "device_links.door", "household_approvals.door", "voice_calls.door", "model_calls.door",
		// Two-way Telegram (docs/ARCHITECTURE.md §19): a code's and a chat's owner, the updates left queued.
		"telegram_link_codes.door", "telegram_chats.door", "telegram_updates.door",
		// The work spine's one scan (§10); the Lambda tick's look for reminders due before the next.
		"work.door", "reminders.door"}
)

// SecurityDefinerAllowlist lists the reviewed SECURITY DEFINER functions: the household
// approvals' writes across owners, each keyed on the caller's own app.owner_id
// (migrations/00021_households.sql, docs/ARCHITECTURE.md §5) and the gate's question whether
// a policy governs a call (00045_household_governs.sql, §2), and retention's bounded
// deletes of old rows, callable by steward_door only (migrations/00040_retention.sql, §21).
var SecurityDefinerAllowlist = []string{"household_request", "household_votes", "household_close", "household_expire", "household_governs",
	"retire_audit", "retire_webhook_deliveries", "retire_memory_outbox", "retire_job_runs"}

// OwnerPredicate is the expression every owner_isolation policy must use.
const OwnerPredicate = "NULLIF(current_setting('app.owner_id'::text, true), ''::text))::uuid"

// CatalogChecks inspects the schema and roles through conn and reports, per rule: every
// owner-scoped table has RLS enabled and forced with owner_isolation (USING and WITH CHECK);
// no other policy outside DirectoryPolicies and DoorPolicies; the runtime roles own nothing,
// are not superusers, have no BYPASSRLS and hold no privilege that alters the schema, and
// the door only reads; steward_app may only revoke API keys and revocation is final; no
// SECURITY DEFINER function outside the allowlist; no view without security_invoker;
// pgvector >= 0.8; the audit log is append-only.
func CatalogChecks(ctx context.Context, conn *pgx.Conn) []Check {
	var checks []Check
	add := func(name string, problems []string, err error, okDetail string) {
		switch {
		case err != nil:
			checks = append(checks, Check{name, false, err.Error()})
		case len(problems) > 0:
			checks = append(checks, Check{name, false, strings.Join(problems, "; ")})
		default:
			checks = append(checks, Check{name, true, okDetail})
		}
	}

	var vector string
	err := conn.QueryRow(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'vector'`).Scan(&vector)
	var vp []string
	if err == nil && versionLess(vector, "0.8") {
		vp = append(vp, "pgvector "+vector+" is older than 0.8")
	}
	if err == pgx.ErrNoRows {
		err = fmt.Errorf("the vector extension is not installed (run: steward migrate bootstrap)")
	}
	add("pgvector", vp, err, "vector "+vector)

	tables, problems, err := rlsProblems(ctx, conn)
	add("row-level security", problems, err, fmt.Sprintf("%d owner tables: RLS enabled and forced, owner_isolation with USING and WITH CHECK", tables))

	problems, err = roleProblems(ctx, conn)
	add("roles", problems, err, "steward_app and steward_door: LOGIN, own nothing, not superusers, NOBYPASSRLS, "+
		"no TRUNCATE, REFERENCES, TRIGGER, MAINTAIN or CREATE; steward_door only reads; steward_owner: NOBYPASSRLS")

	problems, err = apiKeyProblems(ctx, conn)
	add("api keys", problems, err, "steward_app may only revoke its owner's keys; revocation is final (trigger)")

	problems, err = queryProblems(ctx, conn, `
		SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE p.prosecdef AND n.nspname NOT IN ('pg_catalog', 'information_schema')
		  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')`,
		func(name string) string {
			if slices.Contains(SecurityDefinerAllowlist, name) {
				return ""
			}
			return "SECURITY DEFINER function " + name + " is not on the reviewed allowlist"
		})
	add("security definer", problems, err, "no SECURITY DEFINER function outside the allowlist")

	problems, err = queryProblems(ctx, conn, `
		SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('v', 'm') AND n.nspname = 'public'
		  AND NOT coalesce(c.reloptions @> ARRAY['security_invoker=true'] OR c.reloptions @> ARRAY['security_invoker=on'], false)`,
		func(name string) string { return "view " + name + " lacks security_invoker" })
	add("views", problems, err, "every view is security_invoker")

	problems, err = queryProblems(ctx, conn, `
		SELECT op FROM (VALUES ('UPDATE', 16), ('DELETE', 8), ('TRUNCATE', 32)) AS v (op, bit)
		WHERE NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = 'public.audit_log'::regclass
			AND NOT t.tgisinternal AND t.tgenabled <> 'D' AND (t.tgtype & v.bit) <> 0)`,
		func(op string) string { return "audit_log has no trigger refusing " + op })
	add("audit log", problems, err, "append-only: UPDATE, DELETE and TRUNCATE refused by trigger")
	return checks
}

// rlsProblems checks every table with an owner_id column (and owners itself).
func rlsProblems(ctx context.Context, conn *pgx.Conn) (int, []string, error) {
	rows, err := conn.Query(ctx, `
		SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
			coalesce((SELECT array_agg(p.polname || '|' || coalesce(pg_get_expr(p.polqual, p.polrelid), '') || '|' ||
				coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '') || '|' || p.polcmd::text || '|' ||
				array_to_string(ARRAY(SELECT CASE WHEN r = 0 THEN 'public' ELSE pg_get_userbyid(r) END FROM unnest(p.polroles) r), ','))
				FROM pg_policy p WHERE p.polrelid = c.oid), '{}')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
		  AND (c.relname = 'owners' OR EXISTS (SELECT 1 FROM pg_attribute a
			WHERE a.attrelid = c.oid AND a.attname = 'owner_id' AND NOT a.attisdropped))
		ORDER BY c.relname`)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	var problems []string
	n := 0
	for rows.Next() {
		var table string
		var enabled, forced bool
		var policies []string
		if err := rows.Scan(&table, &enabled, &forced, &policies); err != nil {
			return 0, nil, err
		}
		n++
		if !enabled {
			problems = append(problems, table+": row-level security is not enabled")
		}
		if !forced {
			problems = append(problems, table+": row-level security is not forced")
		}
		isolated := false
		for _, p := range policies {
			f := strings.SplitN(p, "|", 5)
			name, using, check, cmd, roles := f[0], f[1], f[2], f[3], f[4]
			switch {
			case name == "owner_isolation":
				if cmd != "*" || roles != "public" || !strings.Contains(using, OwnerPredicate) || !strings.Contains(check, OwnerPredicate) {
					problems = append(problems, table+": owner_isolation must apply to all commands and roles with USING and WITH CHECK on app.owner_id")
				} else {
					isolated = true
				}
			case slices.Contains(DirectoryPolicies, table+"."+name) && roles == store.OwnerRole:
			case slices.Contains(DoorPolicies, table+"."+name) && roles == store.DoorRole:
				if cmd != "r" {
					problems = append(problems, fmt.Sprintf("%s: policy %s must be FOR SELECT only (the door only reads)", table, name))
				}
			default:
				problems = append(problems, fmt.Sprintf("%s: unreviewed policy %s (roles %s)", table, name, roles))
			}
		}
		if !isolated {
			problems = append(problems, table+": no owner_isolation policy with USING and WITH CHECK")
		}
	}
	return n, problems, rows.Err()
}

// roleProblems checks the roles' attributes, and that the runtime roles own nothing and hold
// no privilege that changes the schema (roleHazards, privilegeProblems).
func roleProblems(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	var problems []string
	for _, role := range []string{store.AppRole, store.DoorRole, store.OwnerRole} {
		var super, bypass, login bool
		err := conn.QueryRow(ctx, `SELECT rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = $1`, role).Scan(&super, &bypass, &login)
		if err == pgx.ErrNoRows {
			problems = append(problems, role+" does not exist (run: steward migrate bootstrap)")
			continue
		}
		if err != nil {
			return nil, err
		}
		if !login {
			problems = append(problems, role+" cannot log in")
		}
		if role == store.OwnerRole {
			if super {
				problems = append(problems, role+" is a superuser")
			}
			if bypass {
				problems = append(problems, role+" has BYPASSRLS")
			}
			continue
		}
		hazards, err := store.RoleHazards(ctx, conn, role)
		if err != nil {
			return nil, err
		}
		privileges, err := privilegeProblems(ctx, conn, role)
		if err != nil {
			return nil, err
		}
		problems = append(append(problems, hazards...), privileges...)
	}
	return problems, nil
}

// privilegeProblems lists what a runtime role holds beyond reading and writing rows: TRUNCATE,
// REFERENCES, TRIGGER or MAINTAIN on a table, CREATE in a schema or the database, CREATEROLE
// or CREATEDB; and, for the door, any write at all.
func privilegeProblems(ctx context.Context, q *pgx.Conn, role string) ([]string, error) {
	return queryProblems(ctx, q, `
		WITH rel AS (
			SELECT c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
			  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'
		)
		SELECT problem FROM (
			SELECT 0 AS rank, '' AS rel, 0::bigint AS ord, $1::text || ' can create roles' AS problem FROM pg_roles WHERE rolname = $1::text AND rolcreaterole
			UNION ALL SELECT 0, '', 1, $1::text || ' can create databases' FROM pg_roles WHERE rolname = $1::text AND rolcreatedb
			UNION ALL SELECT 0, '', 2, $1::text || ' can create schemas in database ' || current_database()
			WHERE has_database_privilege($1::text, current_database(), 'CREATE')
			UNION ALL SELECT 1, n.nspname, 0, $1::text || ' can create objects in schema ' || n.nspname FROM pg_namespace n
			WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'
			  AND has_schema_privilege($1::text, n.oid, 'CREATE')
			UNION ALL SELECT 2, rel.relname, p.ord, $1::text || ' holds ' || p.priv || ' on ' || rel.relname
			FROM rel, unnest(CASE WHEN current_setting('server_version_num')::int >= 170000
				THEN ARRAY['TRUNCATE', 'REFERENCES', 'TRIGGER', 'MAINTAIN'] ELSE ARRAY['TRUNCATE', 'REFERENCES', 'TRIGGER'] END)
				WITH ORDINALITY AS p (priv, ord)
			WHERE has_table_privilege($1::text, rel.oid, p.priv)
			UNION ALL SELECT 2, rel.relname, 10 + w.ord, $1::text || ' can ' || w.verb || ' ' || rel.relname || ' (the door only reads)'
			FROM rel, (VALUES ('INSERT', 'insert into', 1), ('UPDATE', 'update', 2), ('DELETE', 'delete from', 3)) AS w (priv, verb, ord)
			WHERE $2::bool AND CASE WHEN w.priv = 'DELETE' THEN has_table_privilege($1::text, rel.oid, w.priv)
				ELSE has_any_column_privilege($1::text, rel.oid, w.priv) END
		) AS x ORDER BY rank, rel, ord`,
		func(p string) string { return p }, role, role == store.DoorRole)
}

// apiKeyProblems: steward_app may change nothing of an API key but revoke it, and a trigger
// keeps a revoked key revoked, so the role serving requests can neither mint a key nor bring
// back a revoked one.
func apiKeyProblems(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	problems, err := queryProblems(ctx, conn, `
		SELECT $1::text || ' can insert into api_keys (it could mint a key)' WHERE has_any_column_privilege($1::text, 'public.api_keys', 'INSERT')
		UNION ALL SELECT $1::text || ' can delete from api_keys' WHERE has_table_privilege($1::text, 'public.api_keys', 'DELETE')
		UNION ALL (SELECT $1::text || ' can update api_keys.' || a.attname FROM pg_attribute a
			WHERE a.attrelid = 'public.api_keys'::regclass AND a.attnum > 0 AND NOT a.attisdropped
			  AND a.attname <> 'revoked_at' AND has_column_privilege($1::text, a.attrelid, a.attnum, 'UPDATE')
			ORDER BY a.attnum)`,
		func(p string) string { return p }, store.AppRole)
	if err != nil {
		return nil, err
	}
	var final bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = 'public.api_keys'::regclass
		AND t.tgname = 'api_keys_revocation_final' AND NOT t.tgisinternal AND t.tgenabled <> 'D'
		AND (t.tgtype & 1) <> 0 AND (t.tgtype & 2) <> 0 AND (t.tgtype & 16) <> 0)`).Scan(&final)
	if err != nil {
		return nil, err
	}
	if !final {
		problems = append(problems, "no enabled trigger keeps a revoked API key revoked (api_keys_revocation_final, BEFORE UPDATE FOR EACH ROW)")
	}
	return problems, nil
}

// queryProblems runs a query returning one text column and maps each row to a problem.
func queryProblems(ctx context.Context, q *pgx.Conn, sql string, problem func(string) string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, n := range names {
		if p := problem(n); p != "" {
			problems = append(problems, p)
		}
	}
	return problems, nil
}

// versionLess compares dotted versions numerically.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			fmt.Sscanf(pa[i], "%d", &x)
		}
		if i < len(pb) {
			fmt.Sscanf(pb[i], "%d", &y)
		}
		if x != y {
			return x < y
		}
	}
	return false
}
