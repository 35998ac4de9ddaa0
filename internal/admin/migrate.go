package admin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/stewardhq/steward/internal/store"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/stewardhq/steward/migrations"
)

// Migrator applies the embedded goose migrations as steward_owner (DATABASE_URL).
type Migrator struct {
	pool     *pgxpool.Pool
	db       *sql.DB
	provider *goose.Provider
}

// NewMigrator connects to url for migrations.
func NewMigrator(ctx context.Context, url string) (*Migrator, error) {
	pool, err := store.NewPool(ctx, url, 2)
	if err != nil {
		return nil, err
	}
	sqlDB := stdlib.OpenDBFromPool(pool)
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS)
	if err != nil {
		sqlDB.Close()
		pool.Close()
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	return &Migrator{pool: pool, db: sqlDB, provider: p}, nil
}

// Close closes the connections.
func (m *Migrator) Close() {
	m.db.Close()
	m.pool.Close()
}

// Up applies every pending migration.
func (m *Migrator) Up(ctx context.Context, w io.Writer) error {
	res, err := m.provider.Up(ctx)
	for _, r := range res {
		fmt.Fprintf(w, "up   %s (%s)\n", r.Source.Path, r.Duration.Round(1e6))
	}
	var partial *goose.PartialError
	if errors.As(err, &partial) && partial.Failed != nil {
		// Name the file that failed; those before it are applied, it is not (each runs in a
		// transaction).
		return fmt.Errorf("migrate up: %s failed, nothing of it applied: %w", path.Base(partial.Failed.Source.Path), partial.Err)
	}
	if err != nil {
		return fmt.Errorf("migrate up: %w", err)
	}
	return nil
}

// Down rolls back the latest migration.
func (m *Migrator) Down(ctx context.Context, w io.Writer) error {
	r, err := m.provider.Down(ctx)
	if r != nil {
		fmt.Fprintf(w, "down %s (%s)\n", r.Source.Path, r.Duration.Round(1e6))
	}
	if err != nil {
		return fmt.Errorf("migrate down: %w", err)
	}
	return nil
}

// Reset rolls back every migration.
func (m *Migrator) Reset(ctx context.Context, w io.Writer) error {
	res, err := m.provider.DownTo(ctx, 0)
	for _, r := range res {
		fmt.Fprintf(w, "down %s\n", r.Source.Path)
	}
	if err != nil {
		return fmt.Errorf("migrate reset: %w", err)
	}
	return nil
}

// Status prints each migration and whether it is applied.
func (m *Migrator) Status(ctx context.Context, w io.Writer) error {
	st, err := m.provider.Status(ctx)
	if err != nil {
		return fmt.Errorf("migrate status: %w", err)
	}
	for _, s := range st {
		applied := "pending"
		if s.State == goose.StateApplied {
			applied = "applied " + s.AppliedAt.Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(w, "%-40s %s\n", s.Source.Path, applied)
	}
	return nil
}

// Version is the latest applied migration version.
func (m *Migrator) Version(ctx context.Context) (int64, error) {
	return m.provider.GetDBVersion(ctx)
}
