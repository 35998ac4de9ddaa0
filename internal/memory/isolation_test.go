package memory_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestIsolation: owner B holds a chunk whose embedding equals owner A's query vector, and a
// fact sharing A's keywords; nothing of B's reaches A through search, recall or the facts
// API. It runs twice: as the app role (RLS enforcing) and as the superuser (RLS bypassed),
// so a query that forgot its owner filter fails the second pass.
func TestIsolation(t *testing.T) {
	t.Parallel()
	passes := []struct {
		name string
		url  func(testdb.DB) string
	}{
		{"app role, RLS enforcing", func(d testdb.DB) string { return d.AppURL }},
		{"superuser, RLS bypassed", func(d testdb.DB) string { return d.SuperURL }},
	}
	for _, pass := range passes {
		t.Run(pass.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvAs(t, pass.url)
			const query = "where is the spare key hidden"
			needle := unit(7)
			e.svc.Embedder = mapEmbedder{vectors: map[string][]float32{query: needle}}
			a, b := e.owner("alice"), e.owner("bob")

			e.addChunk(b, memory.KindConversation, "t-bob", "BOB-SECRET: the spare key is under the blue pot", needle)
			bobFact, _, err := e.svc.AddFact(e.ctx, b, memory.NewFact{Kind: "fact", Subject: "spare key", Content: "BOB-FACT: spare key hidden under the pot"})
			if err != nil {
				t.Fatal(err)
			}
			e.addChunk(a, memory.KindConversation, "t-alice", "alice: my spare key is with the neighbour", unit(9))
			if _, _, err := e.svc.AddFact(e.ctx, a, memory.NewFact{Content: "alice keeps a spare key with the neighbour"}); err != nil {
				t.Fatal(err)
			}

			// Sanity: bob's own search finds his chunk at distance 0.
			hits, err := e.svc.Search(e.ctx, b, query, 10)
			if err != nil || len(hits) == 0 || !strings.Contains(hits[0].Text, "BOB-SECRET") || hits[0].Distance > 1e-6 {
				t.Fatalf("bob's search = %+v, %v; want his chunk first at distance 0", hits, err)
			}

			hits, err = e.svc.Search(e.ctx, a, query, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 2 {
				t.Errorf("alice's search returned %d rows, want her own 2: %+v", len(hits), hits)
			}
			for _, h := range hits {
				if containsAny(h.Text, "BOB") {
					t.Errorf("alice's search returned bob's row %+v", h)
				}
			}

			block, _, err := e.svc.Recall(e.ctx, a, query)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(block, "neighbour") || containsAny(block, "BOB") {
				t.Errorf("alice's recall block leaks or misses:\n%s", block)
			}

			facts, err := e.svc.Facts(e.ctx, a, 0)
			if err != nil || len(facts) != 1 || containsAny(facts[0].Content, "BOB") {
				t.Errorf("alice's facts = %+v, %v; want only her own", facts, err)
			}
			err = e.svc.ForgetFact(e.ctx, a, bobFact.ID)
			if steward.ErrorCode(err) != steward.CodeNotFound {
				t.Errorf("alice forgetting bob's fact: %v, want not found", err)
			}
			facts, err = e.svc.Facts(e.ctx, b, 0)
			if err != nil || len(facts) != 1 {
				t.Errorf("bob's facts after alice's attempt = %+v, %v", facts, err)
			}

			// Outbox: alice cannot claim, complete or fail bob's items.
			_, bobTurn := e.turn(b, nil, "hello", "hi")
			var bobItem store.DueIngest
			due, err := e.door.DueIngests(e.ctx, e.clock.Now(), 10)
			if err != nil || len(due) != 1 || due[0].OwnerID != b {
				t.Fatalf("due = %+v, %v", due, err)
			}
			bobItem = due[0]
			err = e.store.WithOwner(e.ctx, a, func(tx *store.Tx) error {
				_, err := tx.Outbox.ClaimIngest(e.ctx, bobItem.ID, e.clock.Now(), 0)
				return err
			})
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("alice claiming bob's item: %v, want conflict", err)
			}
			if got := e.backlog(a); got.Pending != 0 {
				t.Errorf("alice's backlog counts bob's items: %+v", got)
			}
			if _, err := e.worker.Drain(e.ctx, 10); err != nil {
				t.Fatal(err)
			}
			if got := e.chunks(a, "hello hi", memory.KindConversation); len(got) != 1 {
				t.Errorf("alice has %d conversation chunks after bob's turn was ingested, want her 1", len(got))
			}
			if got := e.chunks(b, "hello hi", memory.KindConversation); len(got) != 2 || !containsAny(got[0].SourceID+got[1].SourceID, bobTurn.String()) {
				t.Errorf("bob's conversation chunks = %+v", got)
			}
		})
	}
}
