package admin

import (
	"context"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/internal/store"

	"github.com/jackc/pgx/v5"
)

// RuntimeRoles are the roles `steward serve` and the Lambda functions connect as. They own
// nothing and hold no privilege that could change the schema (CatalogChecks).
var RuntimeRoles = []string{store.AppRole, store.DoorRole}

// RoleURLs are the connection strings of the three roles, as the configuration names them.
type RoleURLs struct {
	Owner, App, Door string // DATABASE_URL, APP_DATABASE_URL, DOOR_DATABASE_URL
}

// Bootstrap prepares a cluster for Steward as a superuser (or RDS master user): it creates or
// updates the three roles with the passwords of their URLs, creates the database named in the
// owner's URL owned by steward_owner, installs pgvector and sets schema privileges. It is
// idempotent. BootstrapSQL prints the same statements for operators who run them by hand.
func Bootstrap(ctx context.Context, superURL string, urls RoleURLs) error {
	var passwords [3]string
	var owner *pgx.ConnConfig
	for i, r := range []struct{ url, variable, role string }{
		{urls.Owner, "DATABASE_URL", store.OwnerRole}, {urls.App, "APP_DATABASE_URL", store.AppRole}, {urls.Door, "DOOR_DATABASE_URL", store.DoorRole},
	} {
		c, err := pgx.ParseConfig(r.url)
		if err != nil {
			return fmt.Errorf("%s: %w", r.variable, err)
		}
		if c.User != r.role {
			return fmt.Errorf("%s must connect as %s (got %s)", r.variable, r.role, c.User)
		}
		if i == 0 {
			owner = c
		}
		passwords[i] = c.Password
	}
	su, err := pgx.Connect(ctx, superURL)
	if err != nil {
		return fmt.Errorf("connect as superuser: %w", err)
	}
	defer su.Close(ctx)
	var super bool
	if err := su.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	for _, stmt := range roleStatements(passwords, super) {
		if _, err := su.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("bootstrap roles: %w", err)
		}
	}
	var exists bool
	if err := su.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, owner.Database).Scan(&exists); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	create := fmt.Sprintf("CREATE DATABASE %s OWNER %s", pgx.Identifier{owner.Database}.Sanitize(), store.OwnerRole)
	if exists {
		create = fmt.Sprintf("ALTER DATABASE %s OWNER TO %s", pgx.Identifier{owner.Database}.Sanitize(), store.OwnerRole)
	}
	if !super {
		// RDS/Aurora: the master user may create a database for another role only as a
		// member of it.
		if _, err := su.Exec(ctx, "GRANT "+store.OwnerRole+" TO CURRENT_USER"); err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
	}
	if _, err := su.Exec(ctx, create); err != nil {
		return fmt.Errorf("bootstrap database %s: %w", owner.Database, err)
	}
	return PrepareDatabase(ctx, superURL, owner.Database)
}

// PrepareDatabase installs pgvector and sets the privileges of one database (owned by
// steward_owner) as a superuser. Tests use it on their template database.
func PrepareDatabase(ctx context.Context, superURL, database string) error {
	cfg, err := pgx.ParseConfig(superURL)
	if err != nil {
		return fmt.Errorf("SUPERUSER_DATABASE_URL: %w", err)
	}
	cfg.Database = database
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to %s as superuser: %w", database, err)
	}
	defer conn.Close(ctx)
	for _, stmt := range databaseStatements(database) {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("prepare database %s: %w", database, err)
		}
	}
	return nil
}

// BootstrapSQL is what Bootstrap runs, for an operator to review or run by hand (RDS/Aurora:
// as the master user, which holds rds_superuser), with the passwords of steward_owner,
// steward_app and steward_door in that order.
func BootstrapSQL(database string, passwords [3]string) string {
	var b strings.Builder
	for _, s := range roleStatements(passwords, false) {
		b.WriteString(s + ";\n")
	}
	fmt.Fprintf(&b, "GRANT %s TO CURRENT_USER; -- RDS/Aurora: needed to create a database owned by it\n", store.OwnerRole)
	fmt.Fprintf(&b, "CREATE DATABASE %s OWNER %s;\n\\connect %s\n", database, store.OwnerRole, database)
	for _, s := range databaseStatements(database) {
		b.WriteString(s + ";\n")
	}
	return b.String()
}

// roleStatements create or update the three roles (passwords in the order owner, app,
// door). Only a superuser may name the SUPERUSER and BYPASSRLS attributes; a new role lacks
// both by default, which doctor verifies.
func roleStatements(passwords [3]string, super bool) []string {
	attrs := "LOGIN NOCREATEDB NOCREATEROLE"
	if super {
		attrs += " NOSUPERUSER NOBYPASSRLS"
	}
	var stmts []string
	for _, r := range [][2]string{{store.OwnerRole, passwords[0]}, {store.AppRole, passwords[1]}, {store.DoorRole, passwords[2]}} {
		stmts = append(stmts, fmt.Sprintf(`DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '%[1]s') THEN
    CREATE ROLE %[1]s %[2]s;
  END IF;
END $$`, r[0], attrs), fmt.Sprintf(`ALTER ROLE %s %s PASSWORD %s`, r[0], attrs, quoteLiteral(r[1])))
	}
	return stmts
}

func databaseStatements(database string) []string {
	db := pgx.Identifier{database}.Sanitize()
	return []string{
		`CREATE EXTENSION IF NOT EXISTS vector`,
		`REVOKE ALL ON DATABASE ` + db + ` FROM PUBLIC`,
		`GRANT CONNECT, TEMPORARY ON DATABASE ` + db + ` TO ` + store.AppRole,
		`GRANT CONNECT ON DATABASE ` + db + ` TO ` + store.DoorRole,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT USAGE, CREATE ON SCHEMA public TO ` + store.OwnerRole,
		`GRANT USAGE ON SCHEMA public TO ` + store.AppRole + `, ` + store.DoorRole,
	}
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
