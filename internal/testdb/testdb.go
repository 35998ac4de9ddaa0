// Package testdb gives each test its own real PostgreSQL database, cloned from a template
// migrated once per migration set (CREATE DATABASE … TEMPLATE …), so database tests run in
// parallel against real Postgres. It needs SUPERUSER_DATABASE_URL, DATABASE_URL,
// APP_DATABASE_URL and DOOR_DATABASE_URL (scripts/devdb env); without them tests fail with the
// command to run.
package testdb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/admin"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/migrations"
)

// DB is one test's database, reachable as each role.
type DB struct {
	Name string
	// OwnerURL connects as steward_owner, AppURL as steward_app, DoorURL as steward_door (the
	// runtime's door), SuperURL as the superuser (which bypasses row-level security).
	OwnerURL, AppURL, DoorURL, SuperURL string
}

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// migrated reads the database URLs from the environment and makes the migrated template
// (once per test binary).
func migrated(tb testing.TB) (superURL, ownerURL, appURL, doorURL string) {
	tb.Helper()
	superURL, ownerURL, appURL, doorURL = os.Getenv("SUPERUSER_DATABASE_URL"), os.Getenv("DATABASE_URL"), os.Getenv("APP_DATABASE_URL"), os.Getenv("DOOR_DATABASE_URL")
	if superURL == "" || ownerURL == "" || appURL == "" || doorURL == "" {
		tb.Fatal(`database tests need a real PostgreSQL: run "make test", or: scripts/devdb start && eval "$(scripts/devdb env | sed 's/^/export /')"`)
	}
	templateOnce.Do(func() {
		templateName, templateErr = ensureTemplate(context.Background(), superURL, admin.RoleURLs{Owner: ownerURL, App: appURL, Door: doorURL})
	})
	if templateErr != nil {
		tb.Fatalf("test database template: %v", templateErr)
	}
	return superURL, ownerURL, appURL, doorURL
}

// New creates a fresh migrated database for t and drops it when t ends.
func New(t testing.TB) DB {
	t.Helper()
	superURL, ownerURL, appURL, doorURL := migrated(t)
	ctx := context.Background()
	name := "steward_test_" + randomHex(6)
	if err := superExec(ctx, superURL, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s OWNER %s", name, templateName, store.OwnerRole)); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		if err := superExec(context.Background(), superURL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return DB{Name: name, OwnerURL: withDatabase(t, ownerURL, name), AppURL: withDatabase(t, appURL, name),
		DoorURL: withDatabase(t, doorURL, name), SuperURL: withDatabase(t, superURL, name)}
}

// ensureTemplate creates and migrates the template for the current migrations, once per
// cluster (guarded by an advisory lock across test binaries running in parallel).
func ensureTemplate(ctx context.Context, superURL string, urls admin.RoleURLs) (string, error) {
	name, err := templateFor()
	if err != nil {
		return "", err
	}
	conn, err := pgx.Connect(ctx, superURL)
	if err != nil {
		return "", fmt.Errorf("connect as superuser: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(727274)`); err != nil {
		return "", err
	}
	defer conn.Exec(ctx, `SELECT pg_advisory_unlock(727274)`) //nolint:errcheck
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	if err := admin.Bootstrap(ctx, superURL, urls); err != nil {
		return "", err
	}
	building := name + "_building"
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if err := admin.CreateDatabase(ctx, superURL, urls.Owner, building); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", building, name)); err != nil {
		return "", err
	}
	return name, nil
}

// templateFor names the template after a hash of the migrations, so a changed migration
// builds a new template.
func templateFor() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		h.Write([]byte(path))
		h.Write(b)
		return err
	})
	return "steward_tmpl_" + hex.EncodeToString(h.Sum(nil))[:12], err
}

func superExec(ctx context.Context, superURL, sql string) error {
	conn, err := pgx.Connect(ctx, superURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func withDatabase(t testing.TB, url, database string) string {
	u, err := admin.OnDatabase(url, database)
	if err != nil {
		t.Fatalf("parse database url: %v", err)
	}
	return u
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Opened is a test database opened as Steward opens it: the Door (steward_owner) and the
// application Store, both closed when the test ends.
type Opened struct {
	DB
	Door  *store.Door
	Store *store.Store
}

// Open creates a fresh database (see New) and opens its Door and an application pool of
// maxConns connections as steward_app.
func Open(t testing.TB, maxConns int32) Opened {
	t.Helper()
	return OpenAs(t, maxConns, func(d DB) string { return d.AppURL })
}

// OpenAs is Open with the Store connected as url(d): the app role, or the superuser for the
// isolation suite's pass that bypasses row-level security.
func OpenAs(t testing.TB, maxConns int32, url func(DB) string) Opened {
	t.Helper()
	ctx := context.Background()
	o := Opened{DB: New(t)}
	var err error
	if o.Door, err = store.OpenDoor(ctx, o.OwnerURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Door.Close)
	if o.Store, err = store.Open(ctx, url(o.DB), maxConns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Store.Close)
	return o
}

// Owner creates an owner and returns it with its API key.
func (o Opened) Owner(t testing.TB, name string) (store.Owner, string) {
	t.Helper()
	owner, key, err := o.Door.CreateOwner(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return owner, key
}

// Connect opens one connection to url, closed when t ends.
func Connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn
}

// Cached returns a migrated database named after key and the migrations, filled once by fill
// and kept across runs (for benchmarks whose data is slow to build): it is never dropped by
// the test, and a run with changed migrations builds a new one and drops the stale ones of
// the same key. Its name starts with steward_cache_, out of the way of the per-test
// databases. fill runs on a database named …_building, renamed when fill succeeds, so a failed
// or interrupted fill leaves nothing that looks complete; fill must close its connections.
func Cached(tb testing.TB, key string, fill func(ctx context.Context, d DB) error) DB {
	tb.Helper()
	superURL, ownerURL, appURL, doorURL := migrated(tb)
	ctx := context.Background()
	prefix := "steward_cache_" + key + "_"
	name := prefix + templateName[len("steward_tmpl_"):]
	at := func(n string) DB {
		return DB{Name: n, OwnerURL: withDatabase(tb, ownerURL, n), AppURL: withDatabase(tb, appURL, n),
			DoorURL: withDatabase(tb, doorURL, n), SuperURL: withDatabase(tb, superURL, n)}
	}
	conn, err := pgx.Connect(ctx, superURL)
	if err != nil {
		tb.Fatalf("connect as superuser: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(727275)`); err != nil {
		tb.Fatal(err)
	}
	defer conn.Exec(ctx, `SELECT pg_advisory_unlock(727275)`) //nolint:errcheck
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		tb.Fatal(err)
	}
	if exists {
		return at(name)
	}
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, prefix)
	if err != nil {
		tb.Fatal(err)
	}
	stale, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range stale {
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{s}.Sanitize()+" WITH (FORCE)"); err != nil {
			tb.Fatal(err)
		}
	}
	building := name + "_building"
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s OWNER %s", building, templateName, store.OwnerRole)); err != nil {
		tb.Fatalf("create cached database: %v", err)
	}
	if err := fill(ctx, at(building)); err != nil {
		tb.Fatalf("fill cached database %s: %v", building, err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", building, name)); err != nil {
		tb.Fatalf("rename cached database: %v", err)
	}
	return at(name)
}
