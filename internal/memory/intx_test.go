package memory_test

import (
	"context"
	"testing"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
)

// shortEmbedder returns vectors of 3 dimensions: PostgreSQL refuses to compare them with the
// stored ones, so the nearest-chunks query fails inside the turn's start transaction.
type shortEmbedder struct{}

func (shortEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range texts {
		out[i] = []float32{1, 0, 0}
	}
	return out, nil
}
func (shortEmbedder) Name() string   { return "short" }
func (shortEmbedder) Dimension() int { return 3 }

// TestRecallFailsInsideStart: recall's reads run in the turn's start transaction; when one
// fails there (PostgreSQL aborts the transaction on an error), the savepoint around them
// keeps the start transaction alive: the turn starts, without a memory block, and completes.
func TestRecallFailsInsideStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner("alice")
	e.svc.Embedder = shortEmbedder{}
	m := scripted.New(scripted.Reply(scripted.Text("Hello.")))
	r := e.runner(m)
	v, err := r.Start(e.ctx, agent.Input{OwnerID: owner, Message: "How is the garden project going?"}, nil)
	if err != nil || v.Status != steward.StatusCompleted {
		t.Fatalf("start with a failing recall query = %+v, %v; want completed", v, err)
	}
	if got := memoryParts(m.Requests()[0].Messages); len(got) != 0 {
		t.Fatalf("memory block despite the failed recall: %q", got)
	}
}
