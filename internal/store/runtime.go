package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Role names are fixed: the migrations grant to them by name.
const (
	// OwnerRole owns every table: migrations and the admin CLI (DATABASE_URL).
	OwnerRole = "steward_owner"
	// AppRole is the runtime's role for owner data, under row-level security
	// (APP_DATABASE_URL).
	AppRole = "steward_app"
	// DoorRole is the runtime's door: the cross-owner reads of door.go, read-only
	// (DOOR_DATABASE_URL).
	DoorRole = "steward_door"
)

// querier is a connection or a pool.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// RoleHazards lists what would let role undo the database's protections: being a superuser,
// having BYPASSRLS, or owning — itself or through membership in the owning role — the
// database, a schema, a table, view, sequence or function in it, whose owner may switch off
// row-level security and triggers. A runtime role must have none (CheckRuntime).
func RoleHazards(ctx context.Context, q querier, role string) ([]string, error) {
	return queryStrings(ctx, q, `
		WITH r AS (SELECT oid, rolname, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = $1),
		owned AS (
			SELECT d.datdba AS owner, 3 AS rank, 'database ' || d.datname AS name FROM pg_database d WHERE d.datname = current_database()
			UNION ALL SELECT n.nspowner, 2, 'schema ' || n.nspname FROM pg_namespace n
			WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'
			UNION ALL SELECT c.relowner, 0, c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
			  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'
			UNION ALL SELECT p.proowner, 1, p.proname || '()' FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
			WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
			  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
		)
		SELECT rolname || ' is a superuser' FROM r WHERE rolsuper
		UNION ALL SELECT rolname || ' has BYPASSRLS' FROM r WHERE rolbypassrls
		UNION ALL (
			SELECT CASE WHEN o.owner = r.oid THEN r.rolname ELSE r.rolname || ' is a member of ' || pg_get_userbyid(o.owner) || ', which' END
				|| ' owns ' || array_to_string((array_agg(o.name ORDER BY o.rank, o.name))[1:3], ', ')
				|| CASE WHEN count(*) > 3 THEN ' and ' || (count(*) - 3) || ' more' ELSE '' END
			FROM r JOIN owned o ON NOT r.rolsuper AND pg_has_role(r.oid, o.owner, 'MEMBER')
			GROUP BY r.oid, r.rolname, o.owner
			ORDER BY o.owner <> r.oid, 1)`,
		role)
}

// queryStrings runs a query returning one text column.
func queryStrings(ctx context.Context, q querier, sql string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// runtimeCheck refuses a connection whose role could undo the database's protections: a
// superuser, a role with BYPASSRLS, or one that owns (or is a member of the owner of) the
// tables. `steward serve` and the Lambda functions never serve requests through such a role.
func runtimeCheck(ctx context.Context, q *pgxpool.Pool) error {
	var user string
	if err := q.QueryRow(ctx, `SELECT current_user`).Scan(&user); err != nil {
		return fmt.Errorf("check role: %w", err)
	}
	hazards, err := RoleHazards(ctx, q, user)
	if err != nil {
		return fmt.Errorf("check role %s: %w", user, err)
	}
	if len(hazards) > 0 {
		return fmt.Errorf("connects as %s, which the runtime must not use: %s; %s", user, strings.Join(hazards, "; "), HazardAdvice)
	}
	return nil
}

// HazardAdvice ends every report of a runtime role that owns tables or bypasses security.
const HazardAdvice = "such a role could disable row-level security and the audit trigger " +
	"(the runtime connects as " + AppRole + " and " + DoorRole + ": see steward migrate bootstrap)"
