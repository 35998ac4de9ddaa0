package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/steward"
)

// deferrable are the writes of the turn loop whose result nobody reads but their error
// (sqlc names them in each query's first line): in a pipelined transaction they wait and
// reach the server with the next statement, or with COMMIT, in one round trip
// (docs/ARCHITECTURE.md §6). A write that returns a row is never deferred, nor one that
// reports rows affected unless one row is all it may move (oneRow).
var deferrable = map[string]bool{
	"AppendAuditBatch": true, // the turn's audit events
	"InsertToolCall":   true, // the call journal's new rows
	"InsertMessages":   true, // a completed turn's messages
	"EnqueueIngest":    true, // the memory outbox
	"EnqueueWork":      true, // the work spine's row of a turn saved continuing (internal/work)
	"HouseholdFile":    true, // a suspended turn filed for its household's approval (Household.File)
	"LockOwner":        true, // the owner's advisory lock: still taken before the next statement
	// The call journal's conditional moves (from → to status), and a completed turn's touch
	// of its conversation: deferred like the others, the caller told one row moved; when the
	// batch comes back with none, the statement that carried it (or COMMIT) fails with
	// ErrConflict, and so does the transaction.
	"UpdateToolCall":    true,
	"TouchConversation": true,
	"FinishTurn":        true, // Turns.Finish: SaveTurn deferred
	// Tx.try's savepoint and its release: they travel with the guarded reads, or with COMMIT.
	"Savepoint":        true,
	"ReleaseSavepoint": true,
}

// oneRow are the deferrable writes that must move exactly one row, checked when their
// result comes back.
var oneRow = map[string]bool{"UpdateToolCall": true, "TouchConversation": true, "FinishTurn": true}

// movedOne is the command tag a deferred oneRow write returns at once (deferredTag).
var movedOne = pgconn.NewCommandTag("UPDATE 1")

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
	pool  *pgxpool.Pool
	pc    *pgxpool.Conn // nil once a reconnect found no connection
	c     *pgx.Conn
	queue []queued
	g     *group // while Tx.Together runs (together.go)
}

var _ db.DBTX = (*pipe)(nil)

// Exec runs sql, or queues it when it is deferrable.
func (p *pipe) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if p.g != nil {
		return p.g.exec(sql, args)
	}
	if name := queryName(sql); deferrable[name] {
		p.queue = append(p.queue, queued{name: name, sql: sql, args: args})
		return deferredTag(name), nil
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

// Query runs sql, with what is queued in front of it in the same round trip.
func (p *pipe) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if p.g != nil {
		return p.g.query(sql, args)
	}
	if len(p.queue) == 0 {
		return p.c.Query(ctx, sql, args...)
	}
	br := p.send(ctx, sql, args)
	if err := p.drain(br); err != nil {
		_ = br.Close()
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &pipedRows{Rows: rows, br: br}, nil
}

// pipedRows are Query's rows when queued writes went in front of them: closing them ends
// the batch.
type pipedRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

func (r *pipedRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *pipedRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.Rows.Err()
	if cerr := r.br.Close(); r.err == nil {
		r.err = cerr
	}
}

func (r *pipedRows) Err() error {
	if r.closed {
		return r.err
	}
	return r.Rows.Err()
}

// QueryRow runs sql, with what is queued in front of it in the same round trip.
func (p *pipe) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if p.g != nil {
		rows, err := p.g.query(sql, args)
		return groupRow{rows: rows, err: err}
	}
	if len(p.queue) == 0 {
		return p.c.QueryRow(ctx, sql, args...)
	}
	return &pipedRow{p: p, br: p.send(ctx, sql, args)}
}

// send queues the waiting writes and sql (if any) in one batch and sends it.
func (p *pipe) send(ctx context.Context, sql string, args []any) pgx.BatchResults {
	return p.sendBatch(ctx, func(b *pgx.Batch) {
		if sql != "" {
			b.Queue(sql, args...)
		}
	})
}

// sendBatch sends the waiting writes, then what more queues, in one batch. When the batch
// carries the transaction's BEGIN (its first round trip), BEGIN's answer is read here: if the
// connection turns out dead before it came, nothing of the transaction reached the server,
// and the batch is built and sent once more on a fresh connection (lost.go). drain skips
// BEGIN. more may run twice.
func (p *pipe) sendBatch(ctx context.Context, more func(*pgx.Batch)) pgx.BatchResults {
	build := func() *pgx.Batch {
		b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(p.queue)+1)}
		for _, q := range p.queue {
			b.Queue(q.sql, q.args...)
		}
		more(b)
		return b
	}
	br := p.c.SendBatch(ctx, build())
	if !p.pending() {
		return br
	}
	_, err := br.Exec()
	if err != nil && retryable(ctx, p.pool, err) {
		_ = br.Close()
		if err = p.reconnect(ctx); err == nil {
			br = p.c.SendBatch(ctx, build())
			_, err = br.Exec()
		}
	}
	if err != nil {
		_ = br.Close()
		return failedBatch{err: unavailable(err)}
	}
	return br
}

// reconnect gives the pipe's dead connection back (the pool destroys it) for a fresh one.
func (p *pipe) reconnect(ctx context.Context) error {
	p.pc.Release()
	pc, err := p.pool.Acquire(ctx)
	if err != nil {
		p.pc, p.c = nil, nil
		return err
	}
	p.pc, p.c = pc, pc.Conn()
	return nil
}

// failedBatch is the batch of a transaction whose first round trip failed: each result is
// its error. Tx is the embedded interface's, never called.
type failedBatch struct {
	pgx.BatchResults
	err error
}

func (f failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, f.err }
func (f failedBatch) Query() (pgx.Rows, error)         { return nil, f.err }
func (f failedBatch) QueryRow() pgx.Row                { return failedRow{f.err} }
func (f failedBatch) Close() error                     { return f.err }

// failedRow is a row whose statement failed.
type failedRow struct{ err error }

func (r failedRow) Scan(...any) error { return r.err }

// drain reads the results of the queued writes sent with br; the queue is empty after it.
func (p *pipe) drain(br pgx.BatchResults) error {
	queue := p.queue
	p.queue = p.queue[:0]
	for _, q := range queue {
		if q.name == "BEGIN" {
			continue // answered in sendBatch
		}
		tag, err := br.Exec()
		if err != nil {
			return notFound("pipelined "+q.name, err)
		}
		if err := movedOneRow(q.name, tag); err != nil {
			return err
		}
	}
	return nil
}

// deferredTag is the command tag a deferred write returns at once: one row moved when it
// must move one (oneRow), checked by movedOneRow when its result comes back.
func deferredTag(name string) pgconn.CommandTag {
	if oneRow[name] {
		return movedOne
	}
	return pgconn.CommandTag{}
}

// movedOneRow fails with ErrConflict when a deferred oneRow write came back having moved
// another number of rows than the one its caller was told.
func movedOneRow(name string, tag pgconn.CommandTag) error {
	if oneRow[name] && tag.RowsAffected() != 1 {
		return fmt.Errorf("pipelined %s: %d rows moved: %w", name, tag.RowsAffected(), ErrConflict)
	}
	return nil
}

// commit sends the queued writes and COMMIT in one round trip; a transaction that sent
// nothing and queued nothing but its BEGIN costs none. A lost connection proves the
// transaction did not commit only when nothing was sent, or when the server ended the
// connection in answer to a write queued before COMMIT (neverRan: it ran nothing after);
// such an error is marked steward.ErrNotCommitted. An error in COMMIT's own answer proves
// nothing.
func (p *pipe) commit(ctx context.Context) error {
	if p.pending() && len(p.queue) == 2 {
		p.queue = p.queue[:0]
		return nil
	}
	br := p.send(ctx, "COMMIT", nil)
	err := p.drain(br)
	if err != nil && neverRan(err) {
		_ = br.Close()
		return errors.Join(err, steward.ErrNotCommitted)
	}
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

// setOwnerSQL sets the owner for row-level security and ownerSettings, transaction-locally
// (beginOwnerSQL's settings, as one statement of a batch).
var setOwnerSQL = "SELECT set_config('app.owner_id', $1, true), " + ownerSettings

// pending is true while the transaction's BEGIN has not been sent.
func (p *pipe) pending() bool { return len(p.queue) > 0 && p.queue[0].name == "BEGIN" }

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
func (s *Store) inOwnerPipelined(ctx context.Context, ownerID uuid.UUID, fn func(*Tx) error) error {
	pool := s.pool
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return unavailable(fmt.Errorf("with owner: %w", err))
	}
	// BEGIN and the owner's settings wait, like a deferrable write, and travel with the
	// transaction's first statement (or its COMMIT): a transaction costs no round trip of
	// its own (docs/ARCHITECTURE.md §6). If they fail, so does the statement they went with.
	p := &pipe{pool: pool, pc: pc, c: pc.Conn(), queue: make([]queued, 0, 8)}
	// A connection left inside a transaction (a failed ROLLBACK) is closed by the pool
	// on release, never reused.
	defer func() {
		if p.pc != nil {
			p.pc.Release()
		}
	}()
	p.queue = append(p.queue,
		queued{name: "BEGIN", sql: "BEGIN"},
		queued{name: "SetOwner", sql: setOwnerSQL, args: []any{ownerID.String()}})
	done := false
	defer func() {
		// Nothing to roll back while BEGIN is still queued, or without a connection.
		if !done && !p.pending() && p.c != nil {
			_, _ = p.c.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if err := fn(newTx(&conn{q: db.New(p), tx: p, ownerID: ownerID, holder: s.holder, pipelined: true})); err != nil {
		return uncommitted(err, true)
	}
	if err := p.commit(ctx); err != nil {
		return uncommitted(fmt.Errorf("with owner: commit: %w", err), false)
	}
	done = true
	return nil
}
