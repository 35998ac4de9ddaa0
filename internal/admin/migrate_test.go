package admin_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"io/fs"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/admin"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/migrations"
)

// emptyDatabase creates a database owned by steward_owner on the test server, never
// migrated; prepare runs the bootstrap's per-database step (pgvector, privileges) on it.
func emptyDatabase(t *testing.T, d testdb.DB, prepare bool) (name string) {
	t.Helper()
	ctx := context.Background()
	b := make([]byte, 6)
	rand.Read(b)
	name = "steward_test_empty_" + hex.EncodeToString(b)
	su := testdb.Connect(t, d.SuperURL)
	if _, err := su.Exec(ctx, "CREATE DATABASE "+name+" OWNER "+store.OwnerRole); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := su.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	if prepare {
		if err := admin.PrepareDatabase(ctx, d.SuperURL, name); err != nil {
			t.Fatal(err)
		}
	}
	return name
}

// onDatabase is dbURL with its database replaced by name.
func onDatabase(t *testing.T, dbURL, name string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// publicTables lists the tables in the public schema, without goose's bookkeeping table.
func publicTables(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(),
		`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'goose_db_version' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// publicFunctions lists the functions migrations created (not the extensions').
func publicFunctions(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `
		SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestMigrationsRoundTrip: on a fresh database the migrations apply, roll back completely and
// apply again to the same, lint-clean schema.
func TestMigrationsRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.New(t)
	ownerURL := onDatabase(t, d.OwnerURL, emptyDatabase(t, d, true))
	m, err := admin.NewMigrator(ctx, ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	conn := testdb.Connect(t, ownerURL)
	latest, err := admin.LatestMigration()
	if err != nil || latest < 1 {
		t.Fatalf("latest migration = %d, %v", latest, err)
	}
	// After up, the tables are those of a database testdb migrated (the template).
	wantTables := publicTables(t, testdb.Connect(t, d.OwnerURL))

	for round := 1; round <= 2; round++ {
		if err := m.Up(ctx, io.Discard); err != nil {
			t.Fatalf("round %d: up: %v", round, err)
		}
		if v, err := m.Version(ctx); err != nil || v != latest {
			t.Fatalf("round %d: version after up = %d, %v; want %d", round, v, err, latest)
		}
		if got := publicTables(t, conn); !slices.Equal(got, wantTables) {
			t.Fatalf("round %d: tables after up = %v, want %v", round, got, wantTables)
		}
		for name, c := range catalog(t, ownerURL) {
			if !c.OK {
				t.Errorf("round %d: %s: %s", round, name, c.Detail)
			}
		}

		var out strings.Builder
		if err := m.Reset(ctx, &out); err != nil {
			t.Fatalf("round %d: reset: %v", round, err)
		}
		if v, err := m.Version(ctx); err != nil || v != 0 {
			t.Fatalf("round %d: version after reset = %d, %v", round, v, err)
		}
		if got := publicTables(t, conn); len(got) != 0 {
			t.Fatalf("round %d: tables left after reset: %v", round, got)
		}
		if got := publicFunctions(t, conn); len(got) != 0 {
			t.Fatalf("round %d: functions left after reset: %v", round, got)
		}
	}

	// `down` from the latest version also leaves no tables while there is one migration;
	// with more, it steps back one and the rest stay.
	if err := m.Up(ctx, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := m.Down(ctx, io.Discard); err != nil {
		t.Fatal(err)
	}
	// The version before the latest: numbers may skip (a number taken by a parallel branch).
	names, _ := fs.Glob(migrations.FS, "*.sql")
	var previous int64
	for _, n := range names {
		if v, err := goose.NumericComponent(n); err == nil && v < latest {
			previous = max(previous, v)
		}
	}
	if v, err := m.Version(ctx); err != nil || v != previous {
		t.Fatalf("version after down = %d, %v; want %d", v, err, previous)
	}
	if latest == 1 {
		if got := publicTables(t, conn); len(got) != 0 {
			t.Fatalf("tables left after down: %v", got)
		}
	}
}

// TestMigrateWithoutVector: migrating a database the bootstrap never prepared fails with the
// command to run, not with PostgreSQL's words alone.
func TestMigrateWithoutVector(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.New(t)
	ownerURL := onDatabase(t, d.OwnerURL, emptyDatabase(t, d, false))
	m, err := admin.NewMigrator(ctx, ownerURL)
	if err == nil {
		err = m.Up(ctx, io.Discard)
		m.Close()
	}
	err = store.VectorError(err)
	if err == nil || !strings.Contains(err.Error(), "run steward migrate bootstrap") {
		t.Fatalf("migrate up without pgvector installed: %v", err)
	}
	if got := publicTables(t, testdb.Connect(t, ownerURL)); len(got) != 0 {
		t.Fatalf("a failed migration left tables: %v", got)
	}
}
