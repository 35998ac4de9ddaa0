package memory_test

import (
	"cmp"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// env is a memory Service and Worker on a fresh real database.
type env struct {
	t      testing.TB
	ctx    context.Context
	db     testdb.DB
	store  *store.Store
	door   *store.Door
	svc    *memory.Service
	worker *memory.Worker
	// clock is the service's (and so the worker's) clock: tests advance it instead of
	// sleeping past a lease or a backoff (docs/ARCHITECTURE.md §9).
	clock *testClock
}

// testClock is the wall clock moved forward by what Advance added, so that rows the
// database stamps with now() (an outbox item's first next_attempt_at) stay in its past.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock forward by d.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// newEnv builds an env connected as the app role, with the offline embedder and no model.
func newEnv(t testing.TB) *env { return newEnvAs(t, func(d testdb.DB) string { return d.AppURL }) }

// newEnvAs builds an env whose store connects with url(d) (the app role, or the superuser
// for the isolation suite's second pass).
func newEnvAs(t testing.TB, url func(testdb.DB) string) *env {
	t.Helper()
	ctx := context.Background()
	db := testdb.OpenAs(t, 10, url)
	d, s, door := db.DB, db.Store, db.Door
	clock := &testClock{}
	svc := memory.New(s, memory.Offline{}, nil)
	svc.Now = clock.Now
	w := &memory.Worker{Memory: svc, Queue: door, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Lease: time.Minute}
	return &env{t: t, ctx: ctx, db: d, store: s, door: door, svc: svc, worker: w, clock: clock}
}

func (e *env) owner(name string) uuid.UUID {
	e.t.Helper()
	o, _, err := e.door.CreateOwner(e.ctx, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return o.ID
}

// turn stores a completed exchange in a conversation (a new one when conv is nil) and queues
// it for ingestion, as the loop does; it returns the conversation and turn ids.
func (e *env) turn(owner uuid.UUID, conv *uuid.UUID, user, answer string) (uuid.UUID, uuid.UUID) {
	e.t.Helper()
	return e.turnBy(owner, conv, steward.TriggerChat, user, answer)
}

// turnBy is turn with the given trigger.
func (e *env) turnBy(owner uuid.UUID, conv *uuid.UUID, trigger steward.Trigger, user, answer string) (uuid.UUID, uuid.UUID) {
	e.t.Helper()
	var convID, turnID uuid.UUID
	err := e.store.WithOwner(e.ctx, owner, func(tx *store.Tx) error {
		if conv == nil {
			c, err := tx.Conversations.Create(e.ctx, "test")
			if err != nil {
				return err
			}
			convID = c.ID
		} else {
			convID = *conv
		}
		turn, err := tx.Turns.Create(e.ctx, convID, trigger, "scripted", time.Now(), time.Hour)
		if err != nil {
			return err
		}
		turnID = turn.ID
		if err := tx.Conversations.Touch(e.ctx, convID, ""); err != nil {
			return err
		}
		err = tx.Conversations.AppendMessages(e.ctx, convID, turnID,
			steward.Message{Role: steward.RoleUser, Parts: []steward.Part{{Text: user}}},
			steward.Message{Role: steward.RoleModel, Parts: []steward.Part{{Text: answer}}})
		if err != nil {
			return err
		}
		return tx.Conversations.EnqueueIngest(e.ctx, turnID, convID)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return convID, turnID
}

// backlog reads the owner's outbox counts.
func (e *env) backlog(owner uuid.UUID) store.IngestBacklog {
	e.t.Helper()
	var b store.IngestBacklog
	err := e.store.WithOwner(e.ctx, owner, func(tx *store.Tx) error {
		var err error
		b, err = tx.Outbox.IngestBacklog(e.ctx)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// chunks lists the owner's current chunks of kinds nearest to text (at most 100).
func (e *env) chunks(owner uuid.UUID, text string, kinds ...string) []store.MemoryChunk {
	e.t.Helper()
	vs, err := memory.Offline{}.Embed(e.ctx, []string{text})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []store.MemoryChunk
	err = e.store.WithOwner(e.ctx, owner, func(tx *store.Tx) error {
		var err error
		out, err = tx.Memory.NearestChunks(e.ctx, vs[0], 100, kinds...)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// addChunk stores a chunk with a given embedding, in its own transaction.
func (e *env) addChunk(owner uuid.UUID, kind, sourceID, text string, vec []float32) uuid.UUID {
	e.t.Helper()
	var id uuid.UUID
	err := e.store.WithOwner(e.ctx, owner, func(tx *store.Tx) error {
		var err error
		id, err = tx.Memory.AddChunk(e.ctx, kind, sourceID, store.OriginOwner, text, vec)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// superCount counts rows as the superuser, bypassing row-level security.
func (e *env) superCount(sql string, args ...any) int {
	e.t.Helper()
	conn, err := pgx.Connect(e.ctx, e.db.SuperURL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(e.ctx)
	var n int
	if err := conn.QueryRow(e.ctx, sql, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// drainAll drains until nothing is due, advancing the clock past each backoff, for at most
// 10 s.
func (e *env) drainAll(w *memory.Worker) memory.Drained {
	e.t.Helper()
	var total memory.Drained
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		d, err := w.Drain(e.ctx, 1000)
		if err != nil {
			e.t.Fatal(err)
		}
		total.Done += d.Done
		total.Retry += d.Retry
		total.Failed += d.Failed
		total.Skipped += d.Skipped
		owners, err := e.door.ListOwners(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		pending := int64(0)
		for _, o := range owners {
			pending += e.backlog(o.ID).Pending
		}
		if pending == 0 {
			return total
		}
		e.clock.Advance(cmp.Or(w.MaxBackoff, time.Hour)) // the retries are due (MaxBackoff caps them)
	}
	e.t.Fatal("the outbox did not drain in 10 s")
	return total
}

// unit is the i-th basis vector.
func unit(i int) []float32 {
	v := make([]float32, memory.Dimension)
	v[i] = 1
	return v
}

// hookEmbedder is the offline embedder with a hook run before each Embed call; the hook's
// error fails the call.
type hookEmbedder struct {
	memory.Offline
	mu    sync.Mutex
	calls int
	hook  func(ctx context.Context, call int, texts []string) error
}

func (h *hookEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	h.mu.Lock()
	h.calls++
	call := h.calls
	h.mu.Unlock()
	if h.hook != nil {
		if err := h.hook(ctx, call, texts); err != nil {
			return nil, err
		}
	}
	return h.Offline.Embed(ctx, texts)
}

// mapEmbedder returns fixed vectors for known texts and the offline embedding otherwise.
type mapEmbedder struct {
	memory.Offline
	vectors map[string][]float32
}

func (m mapEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, err := m.Offline.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, t := range texts {
		if v, ok := m.vectors[t]; ok {
			out[i] = v
		}
	}
	return out, nil
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
