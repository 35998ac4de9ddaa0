package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Role names are fixed: the migrations grant to them by name.
const (
	OwnerRole = "steward_owner"
	AppRole   = "steward_app"
)

// Bootstrap prepares a cluster for Steward as a superuser (or RDS master user): it creates or
// updates the two roles with the passwords of ownerURL and appURL, creates the database named
// in ownerURL owned by steward_owner, installs pgvector and sets schema privileges. It is
// idempotent. BootstrapSQL prints the same statements for operators who run them by hand.
func Bootstrap(ctx context.Context, superURL, ownerURL, appURL string) error {
	owner, err := pgx.ParseConfig(ownerURL)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	app, err := pgx.ParseConfig(appURL)
	if err != nil {
		return fmt.Errorf("APP_DATABASE_URL: %w", err)
	}
	if owner.User != OwnerRole || app.User != AppRole {
		return fmt.Errorf("DATABASE_URL must connect as %s and APP_DATABASE_URL as %s (got %s and %s)", OwnerRole, AppRole, owner.User, app.User)
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
	for _, stmt := range roleStatements(owner.Password, app.Password, super) {
		if _, err := su.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("bootstrap roles: %w", err)
		}
	}
	var exists bool
	if err := su.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, owner.Database).Scan(&exists); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	create := fmt.Sprintf("CREATE DATABASE %s OWNER %s", pgx.Identifier{owner.Database}.Sanitize(), OwnerRole)
	if exists {
		create = fmt.Sprintf("ALTER DATABASE %s OWNER TO %s", pgx.Identifier{owner.Database}.Sanitize(), OwnerRole)
	}
	if !super {
		// RDS/Aurora: the master user may create a database for another role only as a
		// member of it.
		if _, err := su.Exec(ctx, "GRANT "+OwnerRole+" TO CURRENT_USER"); err != nil {
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
// as the master user, which holds rds_superuser).
func BootstrapSQL(database, ownerPassword, appPassword string) string {
	var b strings.Builder
	for _, s := range roleStatements(ownerPassword, appPassword, false) {
		b.WriteString(s + ";\n")
	}
	fmt.Fprintf(&b, "GRANT %s TO CURRENT_USER; -- RDS/Aurora: needed to create a database owned by it\n", OwnerRole)
	fmt.Fprintf(&b, "CREATE DATABASE %s OWNER %s;\n\\connect %s\n", database, OwnerRole, database)
	for _, s := range databaseStatements(database) {
		b.WriteString(s + ";\n")
	}
	return b.String()
}

// roleStatements create or update the two roles. Only a superuser may name the SUPERUSER
// and BYPASSRLS attributes; a new role lacks both by default, which doctor verifies.
func roleStatements(ownerPassword, appPassword string, super bool) []string {
	attrs := "LOGIN NOCREATEDB NOCREATEROLE"
	if super {
		attrs += " NOSUPERUSER NOBYPASSRLS"
	}
	var stmts []string
	for _, r := range [][2]string{{OwnerRole, ownerPassword}, {AppRole, appPassword}} {
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
		`GRANT CONNECT, TEMPORARY ON DATABASE ` + db + ` TO ` + AppRole,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT USAGE, CREATE ON SCHEMA public TO ` + OwnerRole,
		`GRANT USAGE ON SCHEMA public TO ` + AppRole,
	}
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
