package store

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Raw SQL for the isolation suite, which must bypass the store's own owner filters to show
// what row-level security alone enforces.

// RawExec runs sql inside the owner's transaction.
func (t *Tx) RawExec(ctx context.Context, sql string, args ...any) error {
	_, err := t.tx.Exec(ctx, sql, args...)
	return err
}

// RawRow queries one row inside the owner's transaction.
func (t *Tx) RawRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return t.tx.QueryRow(ctx, sql, args...)
}

// RawRow queries one row on the pool, outside any owner transaction.
func (s *Store) RawRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return s.pool.QueryRow(ctx, sql, args...)
}

// InOwnerTx is InOwner (the loop's pipelined transaction) with the store's Tx, for raw SQL.
func (s *Store) InOwnerTx(ctx context.Context, ownerID uuid.UUID, fn func(*Tx) error) error {
	return s.inOwnerPipelined(ctx, ownerID, fn)
}

// HotStatements are the statements a warm pool prepares on each new connection, and the reads
// among them it runs (warm.go).
func HotStatements() (prepare, run []string) {
	h := hotStatements()
	return h.prepare, h.run
}
