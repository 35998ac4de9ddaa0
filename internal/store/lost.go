package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stewardhq/steward/internal/steward"
)

// A lost connection (docs/ARCHITECTURE.md §6). A managed PostgreSQL ends every connection on
// failover, restart or maintenance: each pooled connection is then dead, and the next
// statement sent on it fails. Where nothing of a transaction reached the server, the store
// sends it again once on a fresh connection, after emptying the pool of the dead ones
// (pgxpool.Pool.Reset); anything else fails as unavailable (503 with Retry-After), never as
// an internal error.

// connLost reports whether err means the connection to PostgreSQL died or could not be made:
// SQLSTATE class 08 (connection exception), 57P01–57P03 (the server is shutting down, crashed
// or not yet accepting connections), a failed connect, or an I/O error on the socket (a
// reset, a broken pipe, an end of stream, a closed connection).
func connLost(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return neverRan(err)
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr): // refused, unreachable within the connect timeout
		return true
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false // the caller gave up: not the database's doing
	case pgconn.SafeToRetry(err):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNREFUSED):
		return true
	case errors.As(err, &netErr):
		return true
	}
	return strings.Contains(err.Error(), "conn closed")
}

// RetryUnavailable is how long a client is told to wait (Retry-After) when the database is
// unreachable.
const RetryUnavailable = 5 * time.Second

// unavailable is err as a client sees it when it is a lost connection or a database that
// accepts no writes (readonly.go): CodeUnavailable with RetryUnavailable, the cause kept in
// the chain for the log; any other err as it is.
func unavailable(err error) error {
	var e *steward.Error
	switch {
	case errors.As(err, &e):
		return err
	case isReadOnly(err):
		return errors.Join(&steward.Error{Code: steward.CodeUnavailable, RetryAfter: RetryUnavailable,
			Message: "the database accepts no writes right now (a failover or maintenance); try again in a few seconds"}, err)
	case connLost(err):
		// Not "nothing was changed": this statement's or transaction's fate says nothing of
		// what the request did before it, and a COMMIT whose answer was lost may have committed.
		return errors.Join(&steward.Error{Code: steward.CodeUnavailable, RetryAfter: RetryUnavailable,
			Message: "the database is unavailable (a restart or failover); try again in a few seconds"}, err)
	}
	return err
}

// uncommitted is the error of a transaction that failed: when its connection was lost
// before its COMMIT was sent (beforeCommit: fn failed), or nothing of its COMMIT was sent
// (pgconn.SafeToRetry), or its COMMIT's round trip is already marked (pipe.commit), it
// certainly did not commit — unavailable and marked steward.ErrNotCommitted, so the caller
// may run it once more on a fresh connection. Any other err is unavailable(err): a COMMIT
// sent whose answer was lost may have committed.
func uncommitted(err error, beforeCommit bool) error {
	lost := connLost(err)
	if lost && (beforeCommit || errors.Is(err, steward.ErrNotCommitted) ||
		(!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && pgconn.SafeToRetry(err))) {
		return errors.Join(unavailable(err), steward.ErrNotCommitted)
	}
	return unavailable(err)
}

// retryable reports whether a statement or transaction that failed with err may be sent again
// on a fresh connection: it never ran (neverRan) and its caller still waits. The pool is
// emptied of its dead connections first (the one that failed is not the only one a failover
// ended), so the next acquire dials a fresh one.
func retryable(ctx context.Context, pool *pgxpool.Pool, err error) bool {
	if ctx.Err() != nil || !neverRan(err) {
		return false
	}
	pool.Reset()
	return true
}

// neverRan reports whether err proves that nothing of a statement (or of a transaction whose
// first answer it was) took effect: nothing was sent (pgconn.SafeToRetry), or the server's
// answer was that it had ended the connection (57P01–57P03, class 08), which it does before
// running anything more of the connection's, and which aborts whatever it was running. A
// reset or an end of stream after sending proves nothing: the work may have committed.
func neverRan(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && pgconn.SafeToRetry(err)
}

// retrying is a pool as sqlc's DBTX, for statements sent alone (no transaction of their own):
// one that never ran (neverRan) is sent once more on a fresh connection, and a lost
// connection's error is unavailable.
type retrying struct{ pool *pgxpool.Pool }

func (r retrying) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := r.pool.Exec(ctx, sql, args...)
	if err != nil && retryable(ctx, r.pool, err) {
		tag, err = r.pool.Exec(ctx, sql, args...)
	}
	return tag, unavailable(err)
}

func (r retrying) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := r.pool.Query(ctx, sql, args...)
	if err != nil && retryable(ctx, r.pool, err) {
		rows, err = r.pool.Query(ctx, sql, args...)
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return &lostRows{Rows: rows, again: func() (pgx.Rows, error) {
		if !retryable(ctx, r.pool, rows.Err()) {
			return nil, rows.Err()
		}
		return r.pool.Query(ctx, sql, args...)
	}}, nil
}

func (r retrying) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return retryingRow{r: r, ctx: ctx, sql: sql, args: args}
}

// retryingRow runs its statement when scanned, once more if it never ran.
type retryingRow struct {
	r    retrying
	ctx  context.Context
	sql  string
	args []any
}

func (row retryingRow) Scan(dest ...any) error {
	err := row.r.pool.QueryRow(row.ctx, row.sql, row.args...).Scan(dest...)
	if err != nil && retryable(row.ctx, row.r.pool, err) {
		err = row.r.pool.QueryRow(row.ctx, row.sql, row.args...).Scan(dest...)
	}
	return unavailable(err)
}

// lostRows are a statement's rows, which pgx reads only once asked for the first: when that
// read finds the statement never ran (a dead pooled connection), the statement is sent once
// more (again) before any row was handed out. Their error, when the connection was lost, is
// unavailable.
type lostRows struct {
	pgx.Rows
	again func() (pgx.Rows, error) // nil once a row came or the statement went again
	err   error                    // again's error
}

func (r *lostRows) Next() bool {
	if r.Rows.Next() {
		r.again = nil
		return true
	}
	if r.again == nil || r.Rows.Err() == nil {
		return false
	}
	again := r.again
	r.again = nil
	r.Rows.Close()
	rows, err := again()
	if err != nil {
		r.err = err
		return false
	}
	r.Rows = rows
	return r.Next()
}

func (r *lostRows) Err() error {
	if r.err != nil {
		return unavailable(r.err)
	}
	return unavailable(r.Rows.Err())
}

// beginTx begins a transaction on pool, once more on a fresh connection if the first one
// was found dead: BEGIN is its first statement, so nothing of it had reached the server.
func beginTx(ctx context.Context, pool *pgxpool.Pool, opts pgx.TxOptions) (pgx.Tx, error) {
	tx, err := pool.BeginTx(ctx, opts)
	if err != nil && retryable(ctx, pool, err) {
		tx, err = pool.BeginTx(ctx, opts)
	}
	return tx, unavailable(err)
}

// inTx runs fn in a transaction begun by beginTx: fn's error rolls it back, otherwise it
// commits (pgx.BeginTxFunc, with the retried BEGIN).
func inTx(ctx context.Context, pool *pgxpool.Pool, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	tx, err := beginTx(ctx, pool, opts)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // after a commit, a no-op
	if err := fn(tx); err != nil {
		return uncommitted(err, true)
	}
	if err := tx.Commit(ctx); err != nil {
		return uncommitted(err, false)
	}
	return nil
}
