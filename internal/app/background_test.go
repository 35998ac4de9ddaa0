package app

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/testdb"
)

// heldEmbedder embeds offline until armed; armed, it reports that it started, outlives its
// context's cancellation until released, then fails as a cancelled call does.
type heldEmbedder struct {
	memory.Offline
	armed    atomic.Bool
	started  chan struct{}
	released chan struct{}
}

func (e *heldEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if !e.armed.Load() {
		return e.Offline.Embed(ctx, texts)
	}
	if e.armed.CompareAndSwap(true, false) {
		close(e.started)
	}
	<-ctx.Done()
	<-e.released
	return nil, ctx.Err()
}

// TestBackgroundIsWaitedForBeforeThePoolsClose: cancelling RunBackground does not return
// while the memory worker is still ingesting; once it returns, the worker has recorded the
// interrupted item through the pool, before Close — no goroutine outlives it to meet a closed
// pool (docs/ARCHITECTURE.md §10).
func TestBackgroundIsWaitedForBeforeThePoolsClose(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	cfg := loadConfig(t, map[string]string{"APP_DATABASE_URL": db.AppURL, "DOOR_DATABASE_URL": db.DoorURL})
	ctx := context.Background()
	a, err := build(ctx, cfg, settings{logOut: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	emb := &heldEmbedder{started: make(chan struct{}), released: make(chan struct{})}
	a.Memory.Embedder = emb
	// The memory worker's own goroutine ingests, not the scheduler tick's drain.
	a.Scheduler.Drainers = nil
	owner, _, err := adminDoor(t, &db).CreateOwner(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Runner.Start(ctx, agent.Input{OwnerID: owner.ID, Message: "remember the mooring fee"}, nil); err != nil {
		t.Fatal(err)
	}
	emb.armed.Store(true) // the completed turn waits in the memory outbox

	bg, stop := context.WithCancel(ctx)
	returned := make(chan struct{})
	go func() { defer close(returned); a.RunBackground(bg) }()
	select {
	case <-emb.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the memory worker did not start ingesting")
	}
	stop()
	select {
	case <-returned:
		t.Fatal("RunBackground returned while the memory worker was still ingesting")
	case <-time.After(200 * time.Millisecond):
	}
	close(emb.released)
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("RunBackground did not return after its work ended")
	}
	a.Close()

	// The interrupted attempt was given back before the pools closed: not leased, not counted.
	conn, err := pgx.Connect(ctx, db.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var attempts int
	var leased bool
	if err := conn.QueryRow(ctx, `SELECT attempts, locked_until IS NOT NULL FROM memory_outbox`).Scan(&attempts, &leased); err != nil {
		t.Fatal(err)
	}
	if attempts != 0 || leased {
		t.Fatalf("outbox item after shutdown: attempts %d, leased %v; want the attempt released through an open pool", attempts, leased)
	}
}
