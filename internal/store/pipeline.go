package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stewardhq/steward/db"
)

// deferrable are the writes of the turn loop whose result nobody reads but their error
// (sqlc names them in each query's first line): in a pipelined transaction they wait and
// reach the server with the next statement, or with COMMIT, in one round trip
// (docs/ARCHITECTURE.md §6). A write that reports rows affected, or returns a row, is never
// deferred.
var deferrable = map[string]bool{
	"AppendAuditBatch": true, // the turn's audit events
	"InsertToolCall":   true, // the call journal's new rows
	"InsertMessages":   true, // a completed turn's messages
	"EnqueueIngest":    true, // the memory outbox
	"LockOwner":        true, // the owner's advisory lock: still taken before the next statement
}

// queryName is sqlc's name of a query: its text starts with "-- name: Name :kind".
func queryName(sql string) string {
	rest, ok := strings.CutPrefix(sql, "-- name: ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, " ")
	return name
}

type queued struct {
	name string
	sql  string
	args []any
}

// pipe is a pipelined owner transaction on one pool connection, as sqlc's DBTX: deferrable
// writes queue up, and the next statement sends them with itself in one batch (one round
// trip); commit sends what is left with COMMIT. A deferred write's error comes back from the
// statement that carried it, or from commit, and fails the transaction all the same.
type pipe struct {
	c     *pgx.Conn
	queue []queued
}

var _ db.DBTX = (*pipe)(nil)

// Exec runs sql, or queues it when it is deferrable.
func (p *pipe) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if name := queryName(sql); deferrable[name] {
		p.queue = append(p.queue, queued{name: name, sql: sql, args: args})
		return pgconn.CommandTag{}, nil
	}
	if len(p.queue) == 0 {
		return p.c.Exec(ctx, sql, args...)
	}
	br := p.send(ctx, sql, args)
	if err := p.drain(br); err != nil {
		_ = br.Close()
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// Query sends what is queued first, then runs sql.
func (p *pipe) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	return p.c.Query(ctx, sql, args...)
}

// QueryRow runs sql, with what is queued in front of it in the same round trip.
func (p *pipe) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if len(p.queue) == 0 {
		return p.c.QueryRow(ctx, sql, args...)
	}
	return &pipedRow{p: p, br: p.send(ctx, sql, args)}
}

// send queues the waiting writes and sql (if any) in one batch and sends it.
func (p *pipe) send(ctx context.Context, sql string, args []any) pgx.BatchResults {
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(p.queue)+1)}
	for _, q := range p.queue {
		b.Queue(q.sql, q.args...)
	}
	if sql != "" {
		b.Queue(sql, args...)
	}
	br := p.c.SendBatch(ctx, b)
	return br
}

// drain reads the results of the queued writes sent with br; the queue is empty after it.
func (p *pipe) drain(br pgx.BatchResults) error {
	queue := p.queue
	p.queue = p.queue[:0]
	for _, q := range queue {
		if _, err := br.Exec(); err != nil {
			return notFound("pipelined "+q.name, err)
		}
	}
	return nil
}

// flush sends the queued writes, if any, in one round trip.
func (p *pipe) flush(ctx context.Context) error {
	if len(p.queue) == 0 {
		return nil
	}
	br := p.send(ctx, "", nil)
	err := p.drain(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// commit sends the queued writes and COMMIT in one round trip.
func (p *pipe) commit(ctx context.Context) error {
	br := p.send(ctx, "COMMIT", nil)
	err := p.drain(br)
	if err == nil {
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err == nil && tag.String() == "ROLLBACK" {
			err = pgx.ErrTxCommitRollback
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// pipedRow is QueryRow's row when queued writes went in front of it.
type pipedRow struct {
	p  *pipe
	br pgx.BatchResults
}

func (r *pipedRow) Scan(dest ...any) error {
	err := r.p.drain(r.br)
	if err == nil {
		err = r.br.QueryRow().Scan(dest...)
	}
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// inOwnerPipelined is WithOwner for the turn loop (InOwner): the same transaction, confined
// to ownerID, on a pipe, so the loop's journal, audit and message writes share round trips
// with the statements after them and with COMMIT (docs/ARCHITECTURE.md §6).
func inOwnerPipelined(ctx context.Context, pool *pgxpool.Pool, ownerID uuid.UUID, fn func(*Tx) error) error {
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("with owner: %w", err)
	}
	// A connection left inside a transaction (a failed ROLLBACK) is closed by the pool
	// on release, never reused.
	defer pc.Release()
	c := pc.Conn()
	if _, err := c.Exec(ctx, beginOwnerSQL(ownerID)); err != nil {
		return fmt.Errorf("with owner: begin: %w", err)
	}
	p := &pipe{c: c}
	done := false
	defer func() {
		if !done {
			_, _ = c.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if err := fn(newTx(&conn{q: db.New(p), tx: p, ownerID: ownerID, pipelined: true})); err != nil {
		return err
	}
	if err := p.commit(ctx); err != nil {
		return fmt.Errorf("with owner: commit: %w", err)
	}
	done = true
	return nil
}
