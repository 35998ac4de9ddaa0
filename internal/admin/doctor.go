package admin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/store"

	"github.com/jackc/pgx/v5"

	"github.com/pressly/goose/v3"

	"github.com/stewardhq/steward/migrations"
)

// VectorAvailable connects to url and returns the pgvector version the server offers, or
// store.ErrNoVector (also when it offers one older than store.MinVector, with that version named).
func VectorAvailable(ctx context.Context, url string) (string, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	v, err := availableVector(ctx, conn)
	if err != nil {
		return "", err
	}
	if v == "" {
		return "", store.ErrNoVector
	}
	if versionLess(v, store.MinVector) {
		return v, fmt.Errorf("pgvector %s is too old: %w", v, store.ErrNoVector)
	}
	return v, nil
}

func availableVector(ctx context.Context, conn *pgx.Conn) (string, error) {
	var v string
	err := conn.QueryRow(ctx, `SELECT coalesce(max(default_version), '') FROM pg_available_extensions WHERE name = 'vector'`).Scan(&v)
	if err != nil {
		return "", fmt.Errorf("look up pgvector: %w", err)
	}
	return v, nil
}

// LatestMigration is the version of the newest migration embedded in this binary.
func LatestMigration() (int64, error) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, n := range names {
		v, err := goose.NumericComponent(n)
		if err != nil {
			return 0, fmt.Errorf("migration %s: %w", n, err)
		}
		latest = max(latest, v)
	}
	return latest, nil
}

// Diagnose runs the database checks of `steward doctor`: it connects as steward_owner
// (urls.Owner), steward_app (urls.App) and steward_door (urls.Door) — flagging a runtime URL
// whose role could undo the database's protections, such as the table owner's — and checks
// pgvector, the migration version, the catalog (CatalogChecks) and that the app role sees no
// owner when no owner is set. It only reads. Checks that need a connection that failed are
// left out: the failed connection is the reason.
func Diagnose(ctx context.Context, urls RoleURLs, embeddingDim int) []Check {
	var checks []Check
	owner, check := connectAs(ctx, urls.Owner, store.OwnerRole, "DATABASE_URL")
	checks = append(checks, check)
	if owner != nil {
		defer owner.Close(context.WithoutCancel(ctx))
	}
	app, check := connectAs(ctx, urls.App, store.AppRole, "APP_DATABASE_URL")
	checks = append(checks, check)
	if app != nil {
		defer app.Close(context.WithoutCancel(ctx))
	}
	door, check := connectAs(ctx, urls.Door, store.DoorRole, "DOOR_DATABASE_URL")
	checks = append(checks, check)
	if door != nil {
		door.Close(ctx)
	}
	if owner == nil {
		return checks
	}
	checks = append(checks, vectorCheck(ctx, owner), migrationCheck(ctx, owner))
	for _, c := range CatalogChecks(ctx, owner) {
		if c.Name != "pgvector" { // vectorCheck says more
			checks = append(checks, c)
		}
	}
	if app != nil {
		checks = append(checks, noOwnerCheck(ctx, owner, app))
	}
	checks = append(checks, embeddingCheck(ctx, owner, embeddingDim))
	if b, err := store.ReadIngestBacklog(ctx, owner); err != nil {
		checks = append(checks, Check{"memory ingestion", false, err.Error()})
	} else {
		checks = append(checks, backlogCheck(b))
	}
	return checks
}

// connectAs connects to url and checks it logs in as role. For a runtime role (the app's and
// the door's URLs) it also fails when the role it logs in as could undo the database's
// protections — a superuser, BYPASSRLS, an owner of the tables (roleHazards).
func connectAs(ctx context.Context, url, role, variable string) (*pgx.Conn, Check) {
	name := "database as " + role
	if url == "" {
		return nil, Check{name, false, variable + " is not set (for a local database: eval \"$(scripts/devdb env | sed 's/^/export /')\")"}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, Check{name, false, fmt.Sprintf("cannot connect with %s: %v", variable, err)}
	}
	var user, database, version string
	err = conn.QueryRow(ctx, `SELECT current_user, current_database(), current_setting('server_version')`).Scan(&user, &database, &version)
	if err != nil {
		conn.Close(ctx)
		return nil, Check{name, false, err.Error()}
	}
	var hazards []string
	if slices.Contains(RuntimeRoles, role) {
		if hazards, err = store.RoleHazards(ctx, conn, user); err != nil {
			conn.Close(ctx)
			return nil, Check{name, false, err.Error()}
		}
	}
	switch {
	case len(hazards) > 0:
		conn.Close(ctx)
		return nil, Check{name, false, fmt.Sprintf("%s connects as %s, a role the runtime must not use: %s; %s",
			variable, user, strings.Join(hazards, "; "), store.HazardAdvice)}
	case user != role:
		conn.Close(ctx)
		return nil, Check{name, false, fmt.Sprintf("%s connects as %s, want %s", variable, user, role)}
	}
	cfg := conn.Config()
	return conn, Check{name, true, fmt.Sprintf("%s@%s:%d/%s, PostgreSQL %s", user, cfg.Host, cfg.Port, database, version)}
}

// vectorCheck: pgvector is available on the server, installed in the database, recent enough.
func vectorCheck(ctx context.Context, conn *pgx.Conn) Check {
	const name = "pgvector"
	available, err := availableVector(ctx, conn)
	if err != nil {
		return Check{name, false, err.Error()}
	}
	if available == "" {
		return Check{name, false, store.ErrNoVector.Error()}
	}
	var installed string
	err = conn.QueryRow(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'vector'`).Scan(&installed)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Check{name, false, fmt.Sprintf("pgvector %s is available but not installed in this database (run: steward migrate bootstrap)", available)}
	case err != nil:
		return Check{name, false, err.Error()}
	case versionLess(installed, store.MinVector):
		return Check{name, false, fmt.Sprintf("pgvector %s is older than %s (ALTER EXTENSION vector UPDATE, after installing a newer pgvector)", installed, store.MinVector)}
	}
	return Check{name, true, "vector " + installed}
}

// migrationCheck compares the database's goose version with this binary's newest migration.
// It reads goose's table directly, so it never creates it.
func migrationCheck(ctx context.Context, conn *pgx.Conn) Check {
	const name = "migrations"
	latest, err := LatestMigration()
	if err != nil {
		return Check{name, false, err.Error()}
	}
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('goose_db_version') IS NOT NULL`).Scan(&exists); err != nil {
		return Check{name, false, err.Error()}
	}
	var current int64
	if exists {
		if err := conn.QueryRow(ctx, `SELECT coalesce(max(version_id), 0) FROM goose_db_version`).Scan(&current); err != nil {
			return Check{name, false, err.Error()}
		}
	}
	switch {
	case current < latest:
		return Check{name, false, fmt.Sprintf("database at version %d, latest is %d (run: steward migrate up)", current, latest)}
	case current > latest:
		return Check{name, false, fmt.Sprintf("database at version %d is newer than this binary's latest migration %d (upgrade steward)", current, latest)}
	}
	return Check{name, true, fmt.Sprintf("at version %d, the latest", latest)}
}

// noOwnerCheck: with no app.owner_id set, the app role sees none of the owners the owner
// role sees through its directory policy.
func noOwnerCheck(ctx context.Context, owner, app *pgx.Conn) Check {
	const name = "app role without owner"
	var all, seen int
	if err := owner.QueryRow(ctx, `SELECT count(*) FROM owners`).Scan(&all); err != nil {
		return Check{name, false, fmt.Sprintf("count owners as %s: %v", store.OwnerRole, err)}
	}
	if err := app.QueryRow(ctx, `SELECT count(*) FROM owners`).Scan(&seen); err != nil {
		return Check{name, false, fmt.Sprintf("count owners as %s: %v", store.AppRole, err)}
	}
	if seen != 0 {
		return Check{name, false, fmt.Sprintf("%s sees %d of %d owners with no owner set: row-level security is not confining it", store.AppRole, seen, all)}
	}
	return Check{name, true, fmt.Sprintf("%s sees 0 of %d owners with no owner set", store.AppRole, all)}
}

// embeddingCheck is the `steward doctor` check that the embedding column has the
// dimension this binary embeds with (memory.Dimension).
func embeddingCheck(ctx context.Context, conn *pgx.Conn, want int) Check {
	const name = "embedding dimension"
	got, err := store.EmbeddingDimensionOf(ctx, conn)
	switch {
	case err != nil:
		return Check{name, false, err.Error()}
	case got != want:
		return Check{name, false, fmt.Sprintf("memory_chunks.embedding is vector(%d) but this binary embeds %d dimensions: re-embedding and a migration are needed", got, want)}
	}
	return Check{name, true, fmt.Sprintf("vector(%d)", got)}
}

// backlogCheck renders the memory ingestion backlog as a `steward doctor` check: failing when an item failed.
func backlogCheck(b store.IngestBacklog) Check {
	detail := fmt.Sprintf("%d pending, %d failed", b.Pending, b.Failed)
	if b.Pending > 0 {
		detail += fmt.Sprintf(", oldest pending %s", b.OldestPending.Round(time.Second))
	}
	if b.Failed > 0 {
		detail += "; last error: " + b.LastError
	}
	return Check{Name: "memory ingestion", OK: b.Failed == 0, Detail: detail}
}
