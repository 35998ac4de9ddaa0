package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// Together runs fns as if one after the other — in order, the first error returned — while
// their statements share round trips (docs/ARCHITECTURE.md §6). Each round runs every fn not
// yet done until it needs a result the database has not sent yet; the statements they asked
// for go to the server in one batch; the next round runs those fns again from the start,
// each statement they already sent answered from that batch, until each fn returns. So the
// first read of every fn costs one round trip between them, the second another, and so on.
//
// fns must not depend on each other's results, and must do nothing but compute and run
// statements until they return (they may run more than once; what they set is set again).
// A fn that runs a different statement on a later run than it did before broke that rule:
// together then fails. When a statement of the batch fails, the transaction is rolled back
// to before the first round and the fns run again one after the other, unbatched, so a
// failing read under Tx.try fails alone, as it would have. Outside a pipelined transaction,
// the fns simply run in order. Nested in a group's fn, its fns join that group's rounds.
func (t *Tx) Together(ctx context.Context, fns ...func() error) error {
	p, ok := t.tx.(*pipe)
	if !ok || len(fns) < 2 {
		return inOrder(fns)
	}
	if p.g != nil {
		return p.g.nest(fns)
	}
	saved, err := p.together(ctx, fns)
	if errors.Is(err, errBatchFailed) {
		// The batch's failure is undone, so is everything since the savepoint; once more,
		// one statement at a time.
		if _, rerr := p.c.Exec(context.WithoutCancel(ctx), rollbackGroupSQL); rerr != nil {
			return fmt.Errorf("together: %w (and the transaction failed: %w)", err, rerr)
		}
		err = inOrder(fns)
	}
	if err == nil && saved {
		p.queue = append(p.queue, queued{name: "ReleaseSavepoint", sql: releaseGroupSQL})
	}
	return err
}

// The savepoint of a group, so its batch's failure can be undone; sqlc-style names, so the
// pipe defers them like Tx.try's.
const (
	groupSavepointSQL = "-- name: Savepoint :exec\nSAVEPOINT steward_together"
	releaseGroupSQL   = "-- name: ReleaseSavepoint :exec\nRELEASE SAVEPOINT steward_together"
	rollbackGroupSQL  = "ROLLBACK TO SAVEPOINT steward_together"
)

func inOrder(fns []func() error) error {
	for _, fn := range fns {
		if err := fn(); err != nil {
			return err
		}
	}
	return nil
}

// firstErr is the first error of errs, or nil.
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

var (
	// errNotYet is what a statement of a group's round returns when its result comes with
	// the round's batch: the fn that ran it runs again after it.
	errNotYet = errors.New("together: result not fetched yet")
	// errBatchFailed: a statement of a group's batch failed; the group is run again in order.
	errBatchFailed = errors.New("together: a statement of the batch failed")
)

// shared are the reads two fns of a group may both run — the gate's state; the owner's
// unembedded facts, which each of the memory worker's items of one owner reads — sent once,
// every fn that runs them gets the rows.
var shared = map[string]bool{"ControlState": true, "RulesForTool": true, "UnembeddedFacts": true}

// grouped is true while the transaction runs a group's fns: the transaction's caches are
// not read then (a fn must run the same statements every time it runs).
func (c *conn) grouped() bool {
	p, ok := c.tx.(*pipe)
	return ok && p.g != nil
}

// group is the state of pipe.together: per fn, the statements it sent and their results.
type group struct {
	logs    [][]*sent      // by fn: the group's fn i is i; nested fns get theirs from nestIDs
	nestIDs map[[3]int]int // a nested fn's log: by its parent's, the nest's number in the top fn, its index
	cur     int            // the fn running
	pos     int            // its next statement in logs[cur]
	nested  int            // the groups nested in the running top fn so far
	stopped bool           // the fn needs a result not fetched yet: it runs again next round
	save    bool           // a fn ran under Tx.try: the group sets its savepoint
	fresh   []*sent        // the statements of this round, for its batch
	slab    []sent         // where alloc takes sents from
	broken  error          // a fn ran another statement than it had sent: fns depend on each other
}

// sent is one statement of a group and what came back for it.
type sent struct {
	name, sql string
	args      []any
	deferred  bool
	tag       pgconn.CommandTag
	res       *fetched // a read's rows
}

// fetched is a read's result, copied out of the batch.
type fetched struct {
	fields []pgconn.FieldDescription
	rows   [][][]byte
	tag    pgconn.CommandTag
	types  *pgtype.Map
	// plans are the scan plans of each column, for the type last scanned into (a fn that
	// runs again scans into the same types).
	plans     []pgtype.ScanPlan
	planTypes []reflect.Type
}

// together runs the rounds of Tx.Together. The group's savepoint, needed only to let a
// failed statement fail alone (under Tx.try), is set when a fn runs under Tx.try in the first
// round (saved), and stands for the try's own savepoint in the rounds; without it a failed
// statement fails the transaction, as it would have when run alone — unless a fn enters
// Tx.try after its first round, which no caller does.
func (p *pipe) together(ctx context.Context, fns []func() error) (saved bool, err error) {
	g := &group{logs: make([][]*sent, len(fns)), fresh: make([]*sent, 0, 8)}
	p.g = g
	defer func() { p.g = nil }()
	errs := make([]error, len(fns))
	done := make([]bool, len(fns))
	for round := 0; ; round++ {
		g.fresh = g.fresh[:0]
		left := 0
		for i, fn := range fns {
			if done[i] {
				continue
			}
			g.cur, g.pos, g.stopped, g.nested = i, 0, false, 0
			err := fn()
			if g.broken != nil {
				return saved, g.broken
			}
			if g.stopped {
				left++
				continue
			}
			done[i], errs[i] = true, err
		}
		if round == 0 && g.save {
			saved = true
			p.queue = append(p.queue, queued{name: "Savepoint", sql: groupSavepointSQL})
		}
		if left == 0 {
			// The last round's deferred writes wait for the next statement, as any others.
			for _, s := range g.fresh {
				p.queue = append(p.queue, queued{name: s.name, sql: s.sql, args: s.args})
			}
			return saved, firstErr(errs)
		}
		if err := p.fetch(ctx, g.fresh, saved); err != nil {
			return saved, err
		}
	}
}

// fetch sends what is queued and the round's statements in one batch and keeps their results.
// A statement of the round that fails is errBatchFailed when the group has its savepoint
// (saved), else the transaction's failure.
func (p *pipe) fetch(ctx context.Context, round []*sent, saved bool) error {
	failed := func(s *sent, err error) error {
		if saved {
			return fmt.Errorf("%w: %s: %w", errBatchFailed, s.name, err)
		}
		return notFound("pipelined "+s.name, err)
	}
	br := p.sendBatch(ctx, func(b *pgx.Batch) {
		for _, s := range round {
			b.Queue(s.sql, s.args...)
		}
	})
	defer br.Close()
	// What was queued before the group is not the group's: its failure fails the transaction.
	if err := p.drain(br); err != nil {
		return err
	}
	for _, s := range round {
		if s.deferred {
			tag, err := br.Exec()
			if err != nil {
				return failed(s, err)
			}
			if err := movedOneRow(s.name, tag); err != nil {
				return err
			}
			continue
		}
		rows, err := br.Query()
		if err != nil {
			return failed(s, err)
		}
		f := &fetched{fields: append([]pgconn.FieldDescription(nil), rows.FieldDescriptions()...), types: p.c.TypeMap()}
		for rows.Next() {
			// The row's values outlive the batch: one copy of them all.
			raw := rows.RawValues()
			n := 0
			for _, v := range raw {
				n += len(v)
			}
			buf := make([]byte, 0, n)
			row := make([][]byte, len(raw))
			for i, v := range raw {
				if v != nil {
					buf = append(buf, v...)
					row[i] = buf[len(buf)-len(v) : len(buf) : len(buf)]
				}
			}
			f.rows = append(f.rows, row)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return failed(s, err)
		}
		f.tag = rows.CommandTag()
		s.tag, s.res = f.tag, f
	}
	return nil
}

// nest runs a group nested in the running fn: each of its fns runs on its own log, so the
// first statement of each goes in the same round; the running fn goes on when all are done.
func (g *group) nest(fns []func() error) error {
	if g.stopped {
		return errNotYet
	}
	parent, pos := g.cur, g.pos
	g.nested++
	if g.nestIDs == nil {
		g.nestIDs = map[[3]int]int{}
	}
	errs := make([]error, len(fns))
	stopped := false
	for j, fn := range fns {
		key := [3]int{parent, g.nested, j}
		id, ok := g.nestIDs[key]
		if !ok {
			id = len(g.logs)
			g.nestIDs[key] = id
			g.logs = append(g.logs, nil)
		}
		g.cur, g.pos, g.stopped = id, 0, false
		errs[j] = fn()
		if g.broken != nil {
			return g.broken
		}
		stopped = stopped || g.stopped
	}
	g.cur, g.pos, g.stopped = parent, pos, stopped
	if stopped {
		return errNotYet
	}
	return firstErr(errs)
}

// alloc is a new sent, from a slab (a group sends a handful of statements).
func (g *group) alloc() *sent {
	if len(g.slab) == cap(g.slab) {
		g.slab = make([]sent, 0, 8)
	}
	g.slab = g.slab[:len(g.slab)+1]
	return &g.slab[len(g.slab)-1]
}

// next answers a statement of the running fn: from its log when it sent it in an earlier
// round (ok), else it is logged for this round's batch.
func (g *group) next(sql string, args []any) (s *sent, ok bool) {
	if g.pos < len(g.logs[g.cur]) {
		s = g.logs[g.cur][g.pos]
		g.pos++
		if s.sql != sql || !reflect.DeepEqual(s.args, args) {
			g.broken = fmt.Errorf("together: a fn ran %q after it had sent %q: its statements depend on another fn's results", queryName(sql), s.name)
			g.stopped = true
			return nil, false
		}
		return s, true
	}
	name := queryName(sql)
	if shared[name] {
		// Another fn's same read: one statement answers both.
		for _, log := range g.logs {
			for _, o := range log {
				if o.sql == sql && reflect.DeepEqual(o.args, args) {
					g.logs[g.cur] = append(g.logs[g.cur], o)
					g.pos++
					if o.res == nil {
						g.stopped = true
						return nil, false
					}
					return o, true
				}
			}
		}
	}
	s = g.alloc()
	*s = sent{name: name, sql: sql, args: args, deferred: deferrable[name]}
	if g.logs[g.cur] == nil {
		g.logs[g.cur] = make([]*sent, 0, 4)
	}
	g.logs[g.cur] = append(g.logs[g.cur], s)
	g.pos++
	g.fresh = append(g.fresh, s)
	if s.deferred {
		s.tag = deferredTag(name)
		return s, true
	}
	g.stopped = true
	return nil, false
}

func (g *group) exec(sql string, args []any) (pgconn.CommandTag, error) {
	if g.stopped {
		return pgconn.CommandTag{}, errNotYet
	}
	s, ok := g.next(sql, args)
	if !ok {
		return pgconn.CommandTag{}, errNotYet
	}
	return s.tag, nil
}

func (g *group) query(sql string, args []any) (pgx.Rows, error) {
	if g.stopped {
		return nil, errNotYet
	}
	s, ok := g.next(sql, args)
	if !ok {
		return nil, errNotYet
	}
	if s.res == nil {
		return nil, fmt.Errorf("together: %s returned no rows to read", s.name)
	}
	return &fetchedRows{f: s.res, i: -1}, nil
}

// fetchedRows are a fetched read's rows, as pgx.Rows.
type fetchedRows struct {
	f      *fetched
	i      int
	err    error
	closed bool
}

func (r *fetchedRows) Close()                                       { r.closed = true }
func (r *fetchedRows) Err() error                                   { return r.err }
func (r *fetchedRows) CommandTag() pgconn.CommandTag                { return r.f.tag }
func (r *fetchedRows) FieldDescriptions() []pgconn.FieldDescription { return r.f.fields }
func (r *fetchedRows) Conn() *pgx.Conn                              { return nil }
func (r *fetchedRows) TypeMap() *pgtype.Map                         { return r.f.types }

func (r *fetchedRows) Next() bool {
	if r.closed || r.err != nil || r.i+1 >= len(r.f.rows) {
		r.closed = true
		return false
	}
	r.i++
	return true
}

func (r *fetchedRows) RawValues() [][]byte { return r.f.rows[r.i] }

func (r *fetchedRows) Scan(dest ...any) error {
	row := r.f.rows[r.i]
	if len(dest) != len(row) {
		r.err = fmt.Errorf("number of field descriptions must equal number of destinations, got %d and %d", len(row), len(dest))
		return r.err
	}
	f := r.f
	if f.plans == nil {
		f.plans, f.planTypes = make([]pgtype.ScanPlan, len(row)), make([]reflect.Type, len(row))
	}
	for i, d := range dest {
		if d == nil {
			continue
		}
		fd := f.fields[i]
		if t := reflect.TypeOf(d); f.planTypes[i] != t {
			f.plans[i], f.planTypes[i] = f.types.PlanScan(fd.DataTypeOID, fd.Format, d), t
		}
		if err := f.plans[i].Scan(row[i], d); err != nil {
			r.err = pgx.ScanArgError{ColumnIndex: i, FieldName: fd.Name, Err: err}
			return r.err
		}
	}
	return nil
}

func (r *fetchedRows) Values() ([]any, error) {
	row := r.f.rows[r.i]
	out := make([]any, len(row))
	for i := range row {
		fd := r.f.fields[i]
		if row[i] == nil {
			continue
		}
		var v any
		if err := r.f.types.Scan(fd.DataTypeOID, fd.Format, row[i], &v); err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// groupRow is QueryRow's row in a group.
type groupRow struct {
	rows pgx.Rows
	err  error
}

func (r groupRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	return r.rows.Scan(dest...)
}
