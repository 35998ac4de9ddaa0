package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/admin"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/migrations"
)

func TestMigrateUpDownUp(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t)) // migrated from the template
	latest, err := admin.LatestMigration()
	if err != nil {
		t.Fatal(err)
	}
	atLatest := fmt.Sprintf("Schema at version %d.", latest)
	// The version below the latest migration: numbers may have gaps (reserved ones).
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	var previous int64
	for _, n := range names {
		if v, err := strconv.ParseInt(strings.SplitN(n, "_", 2)[0], 10, 64); err == nil && v < latest {
			previous = max(previous, v)
		}
	}
	r := runCLI(t, env, "migrate", "status")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "00001_init.sql") || !strings.Contains(r.stdout, "applied") || strings.Contains(r.stdout, "pending") {
		t.Fatalf("status: %s", r.stdout)
	}
	r = runCLI(t, env, "migrate", "up")
	wantOK(t, r)
	if !strings.Contains(r.stdout, atLatest) {
		t.Fatalf("up when current: %s", r.stdout)
	}

	r = runCLI(t, env, "migrate", "down", "--yes")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "down ") || !strings.Contains(r.stdout, fmt.Sprintf("Schema at version %d.", previous)) {
		t.Fatalf("down: %s", r.stdout)
	}
	r = runCLI(t, env, "migrate", "status")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "pending") {
		t.Fatalf("status after down: %s", r.stdout)
	}
	r = runCLI(t, env, "doctor")
	if r.code != 1 || !strings.Contains(doctorLines(t, r.stdout)["migrations"], "run: steward migrate up") {
		t.Fatalf("doctor after down: exit %d\n%s", r.code, r.stdout)
	}

	r = runCLI(t, env, "migrate", "up")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "up   ") || !strings.Contains(r.stdout, atLatest) {
		t.Fatalf("up: %s", r.stdout)
	}
	wantOK(t, runCLI(t, env, "doctor"))

	r = runCLI(t, env, "migrate", "reset", "--yes")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "down 00001_init.sql") || !strings.Contains(r.stdout, "Schema at version 0.") {
		t.Fatalf("reset: %s", r.stdout)
	}
	if n := countTables(t, env["DATABASE_URL"]); n != 0 {
		t.Fatalf("after reset: %d tables left", n)
	}
	wantOK(t, runCLI(t, env, "migrate", "up"))
	wantOK(t, runCLI(t, env, "doctor"))
}

// TestBootstrapFreshDatabase is `make run`'s path: bootstrap a database that does not exist
// yet, migrate it, and find everything green.
func TestBootstrapFreshDatabase(t *testing.T) {
	t.Parallel()
	d := testdb.New(t) // makes sure the roles exist; we use its server, not its database
	name := "steward_test_boot_" + randomSuffix()
	t.Cleanup(func() { execAs(t, d.SuperURL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	env := map[string]string{
		"DATABASE_URL":           withDatabase(t, d.OwnerURL, name),
		"APP_DATABASE_URL":       withDatabase(t, d.AppURL, name),
		"DOOR_DATABASE_URL":      withDatabase(t, d.DoorURL, name),
		"SUPERUSER_DATABASE_URL": d.SuperURL,
	}
	r := runCLI(t, env, "migrate", "bootstrap")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "Bootstrapped database "+name) || !strings.Contains(r.stdout, "pgvector 0.") {
		t.Fatalf("bootstrap: %s", r.stdout)
	}
	wantOK(t, runCLI(t, env, "migrate", "bootstrap")) // idempotent
	wantOK(t, runCLI(t, env, "migrate", "up"))
	r = runCLI(t, env, "doctor")
	wantOK(t, r)

	// Without the superuser URL, bootstrap says which variable is missing.
	delete(env, "SUPERUSER_DATABASE_URL")
	wantOneLineError(t, runCLI(t, env, "migrate", "bootstrap"), "SUPERUSER_DATABASE_URL is not set")
}

// TestDatabaseNeverBootstrapped: a database where nobody installed pgvector gives one line
// saying what to run, for every command that connects.
func TestDatabaseNeverBootstrapped(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	name := "steward_test_bare_" + randomSuffix()
	execAs(t, d.SuperURL, "CREATE DATABASE "+name+" OWNER steward_owner")
	t.Cleanup(func() { execAs(t, d.SuperURL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	env := map[string]string{"DATABASE_URL": withDatabase(t, d.OwnerURL, name), "APP_DATABASE_URL": withDatabase(t, d.AppURL, name),
		"DOOR_DATABASE_URL": withDatabase(t, d.DoorURL, name), "STEWARD_ADDR": "127.0.0.1:0"}
	for _, args := range [][]string{{"migrate", "up"}, {"owners", "list"}, {"serve"}} {
		wantOneLineError(t, runCLI(t, env, args...), "vector extension is not installed in this database and only a superuser can install it: run steward migrate bootstrap")
	}
	r := runCLI(t, env, "doctor")
	if line := doctorLines(t, r.stdout)["pgvector"]; r.code != 1 || !strings.Contains(line, "not installed in this database (run: steward migrate bootstrap)") {
		t.Fatalf("doctor: exit %d, pgvector line %q", r.code, line)
	}
}

func TestBootstrapPrint(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": "postgres://steward_owner:s3cret-owner@db.example.com:5432/prod_steward"}
	r := runCLI(t, env, "migrate", "bootstrap", "--print")
	wantOK(t, r)
	for _, want := range []string{"CREATE ROLE steward_owner", "CREATE ROLE steward_app", "CREATE ROLE steward_door", "PASSWORD '<owner-password>'",
		"PASSWORD '<app-password>'", "PASSWORD '<door-password>'", "CREATE DATABASE prod_steward OWNER steward_owner",
		`GRANT CONNECT ON DATABASE "prod_steward" TO steward_door`, "CREATE EXTENSION IF NOT EXISTS vector"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--print lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "s3cret-owner") {
		t.Fatalf("--print shows a real password:\n%s", r.stdout)
	}
	r = runCLI(t, nil, "migrate", "bootstrap", "--print")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "CREATE DATABASE steward OWNER") {
		t.Fatalf("default database name: %s", r.stdout)
	}
}

// countTables counts the tables migrations own: every table but goose's bookkeeping.
func countTables(t *testing.T, dbURL string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'goose_db_version'`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func withDatabase(t *testing.T, dbURL, name string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

func randomSuffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
