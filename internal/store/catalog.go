package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Check is the outcome of one health or catalog check.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// DirectoryPolicies are the only policies besides owner_isolation: reviewed, cross-owner
// access for steward_owner through the Door. Keep this list short.
var DirectoryPolicies = []string{"owners.directory", "api_keys.directory", "turns.directory", "memory_outbox.directory",
	"schedules.directory", "job_runs.directory", "webhooks.directory", "notification_channels.directory"}

// SecurityDefinerAllowlist lists the reviewed SECURITY DEFINER functions (none so far).
var SecurityDefinerAllowlist = []string{}

// OwnerPredicate is the expression every owner_isolation policy must use.
const OwnerPredicate = "NULLIF(current_setting('app.owner_id'::text, true), ''::text))::uuid"

// CatalogChecks inspects the schema and roles through conn and reports, per rule: every
// owner-scoped table has RLS enabled and forced with owner_isolation (USING and WITH CHECK);
// no other policy outside DirectoryPolicies; the app role owns nothing, is not superuser and
// has no BYPASSRLS; no SECURITY DEFINER function outside the allowlist; no view without
// security_invoker; pgvector >= 0.8; the audit log is append-only.
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
	add("roles", problems, err, "steward_app: LOGIN, owns nothing, not superuser, NOBYPASSRLS; steward_owner: NOBYPASSRLS")

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
			case slices.Contains(DirectoryPolicies, table+"."+name) && roles == OwnerRole:
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

// roleProblems checks the two roles' attributes and that the app role owns nothing.
func roleProblems(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	var problems []string
	for _, role := range []string{AppRole, OwnerRole} {
		var super, bypass, login bool
		err := conn.QueryRow(ctx, `SELECT rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = $1`, role).Scan(&super, &bypass, &login)
		if err == pgx.ErrNoRows {
			problems = append(problems, role+" does not exist (run: steward migrate bootstrap)")
			continue
		}
		if err != nil {
			return nil, err
		}
		if super {
			problems = append(problems, role+" is a superuser")
		}
		if bypass {
			problems = append(problems, role+" has BYPASSRLS")
		}
		if !login {
			problems = append(problems, role+" cannot log in")
		}
	}
	owned, err := queryProblems(ctx, conn, `
		SELECT relname FROM pg_class WHERE relowner = (SELECT oid FROM pg_roles WHERE rolname = $1)
		UNION ALL SELECT proname FROM pg_proc WHERE proowner = (SELECT oid FROM pg_roles WHERE rolname = $1)
		UNION ALL SELECT nspname FROM pg_namespace WHERE nspowner = (SELECT oid FROM pg_roles WHERE rolname = $1)`,
		func(obj string) string { return AppRole + " owns " + obj }, AppRole)
	return append(problems, owned...), err
}

// queryProblems runs a query returning one text column and maps each row to a problem.
func queryProblems(ctx context.Context, conn *pgx.Conn, sql string, problem func(string) string, args ...any) ([]string, error) {
	rows, err := conn.Query(ctx, sql, args...)
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
