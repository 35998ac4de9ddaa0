package erasure_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/erasure"
	"github.com/stewardhq/steward/internal/memory"
)

// held is an embedder that, once armed, tells started when an embedding begins and waits
// for release before it answers.
type held struct {
	memory.Embedder
	started, release chan struct{}
}

func (h *held) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	h.started <- struct{}{}
	<-h.release
	return h.Embedder.Embed(ctx, texts)
}

// TestIngestionInFlightCannotRecreateChunks: a conversation deleted while the memory worker
// is embedding its exchange (claimed and read before the delete) stays deleted — the
// worker's completion finds its outbox item gone and stores nothing.
func TestIngestionInFlightCannotRecreateChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	v := e.start(t, uuid.Nil, "the "+canary+" sings at dawn")

	h := &held{Embedder: e.App.Memory.Embedder, started: make(chan struct{}), release: make(chan struct{})}
	e.App.Memory.Embedder = h // no turn runs from here on: only the worker embeds
	drained := make(chan memory.Drained, 1)
	go func() {
		d, err := e.App.MemoryWorker.Drain(ctx, 10)
		if err != nil {
			t.Errorf("drain: %v", err)
		}
		drained <- d
	}()
	<-h.started // claimed and read: the exchange is being embedded
	if _, err := e.App.Erasure.DeleteConversation(ctx, e.owner, v.ConversationID, erasure.ForgetFacts); err != nil {
		t.Fatalf("delete while ingesting: %v", err)
	}
	close(h.release)
	if d := <-drained; d.Done != 0 {
		t.Errorf("drain after the delete: %+v; want nothing ingested", d)
	}
	if n := superCount(t, e.DB.DB, `SELECT count(*) FROM memory_chunks WHERE owner_id = $1 AND text LIKE '%' || $2 || '%'`, e.owner, canary); n != 0 {
		t.Errorf("%d memory chunks of the deleted conversation were stored after its delete", n)
	}
}
