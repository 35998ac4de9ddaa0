package memory_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/memory"
)

// TestConsolidateSupersedesNearDuplicates: of a group of near-duplicate chunks only the
// newest stays in recall; the others are superseded, not deleted. Facts' chunks follow their
// facts and are left alone.
func TestConsolidateSupersedesNearDuplicates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner("alice")
	texts := []string{
		"The owner likes green tea in the morning.",
		"The owner likes green tea in the morning!",
		"In the morning the owner likes green tea.", // the newest of the three
		"The owner likes black coffee at night.",
	}
	vecs, err := memory.Offline{}.Embed(e.ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uuid.UUID, len(texts))
	for i, text := range texts {
		ids[i] = e.addChunk(owner, memory.KindConversation, uuid.NewString(), text, vecs[i])
	}
	if _, _, err := e.svc.AddFact(e.ctx, owner, memory.NewFact{Content: "The owner likes green tea in the morning."}); err != nil {
		t.Fatal(err)
	}

	got, err := e.svc.Consolidate(e.ctx, owner)
	if err != nil || got.Duplicates != 2 {
		t.Fatalf("consolidate = %+v, %v; want 2 duplicates superseded", got, err)
	}
	hits, err := e.svc.Search(e.ctx, owner, "green tea in the morning", 10)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uuid.UUID]bool{}
	facts := 0
	for _, h := range hits {
		seen[h.ID] = true
		if h.Kind == memory.KindFact {
			facts++
		}
	}
	if seen[ids[0]] || seen[ids[1]] || !seen[ids[2]] || !seen[ids[3]] || facts != 1 {
		t.Errorf("search after consolidation = %+v; want the newest duplicate, the distinct chunk and the fact", hits)
	}
	block, _, err := e.svc.Recall(e.ctx, owner, "green tea in the morning")
	if err != nil || strings.Count(block, "likes green tea in the morning") != 1 { // the fact
		t.Errorf("recall after consolidation:\n%s", block)
	}
	if n := e.superCount(`SELECT count(*) FROM memory_chunks WHERE owner_id = $1 AND superseded_at IS NOT NULL`, owner); n != 2 {
		t.Errorf("%d superseded chunks kept, want 2", n)
	}
	if again, err := e.svc.Consolidate(e.ctx, owner); err != nil || again != (memory.Consolidated{}) {
		t.Errorf("second consolidation = %+v, %v; want nothing to do", again, err)
	}
}

// TestConsolidateSummarisesOldConversations: a conversation whose memory is older than
// SummarizeAfter, with enough chunks, becomes one summary chunk; its chunks leave recall.
func TestConsolidateSummarisesOldConversations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner("alice")
	old, _ := e.turn(owner, nil, "I want to sail to Lisbon in May.", "What boat will you take?")
	for _, msg := range []string{"The Wren, my small sloop.", "Two friends will crew with me.", "We leave from Porto on May 3."} {
		e.turn(owner, &old, msg, "Noted.")
	}
	e.turn(owner, nil, "Remind me to buy bread.", "Which bakery?")
	e.drainAll(e.worker)

	var asked llm.Request
	e.svc.Model = scripted.New(func(req llm.Request) (llm.Response, error) {
		asked = req
		return scripted.Text("Alice plans to sail the Wren from Porto to Lisbon on May 3 with two friends."), nil
	})
	e.svc.Now = func() time.Time { return time.Now().Add(40 * 24 * time.Hour) }
	got, err := e.svc.Consolidate(e.ctx, owner)
	if err != nil || got.Summaries != 1 || got.Summarized != 4 {
		t.Fatalf("consolidate = %+v, %v; want 1 summary of 4 chunks", got, err)
	}
	if user := asked.Messages[0].Parts[0].Text; !strings.HasPrefix(user, `<data source="conversation">`) || !strings.Contains(user, "Porto") {
		t.Errorf("summary request:\n%s", user)
	}
	if asked.Thinking != llm.ThinkingLow {
		t.Errorf("summary request thinking %q, want low", asked.Thinking)
	}
	hits, err := e.svc.Search(e.ctx, owner, "sailing to Lisbon", 10)
	if err != nil || len(hits) != 2 {
		t.Fatalf("search = %+v, %v; want the summary and the short conversation", hits, err)
	}
	if hits[0].Kind != memory.KindSummary || hits[0].SourceID != old.String() || !strings.Contains(hits[0].Text, "Wren from Porto") {
		t.Errorf("first hit = %+v, want the summary", hits[0])
	}
	conv := e.chunks(owner, "sail", memory.KindConversation)
	if len(conv) != 1 || !strings.Contains(conv[0].Text, "bread") {
		t.Errorf("current conversation chunks = %+v; want only the short conversation's", conv)
	}
	if n := e.superCount(`SELECT count(*) FROM memory_chunks WHERE owner_id = $1 AND superseded_at IS NOT NULL`, owner); n != 4 {
		t.Errorf("%d superseded chunks kept, want 4", n)
	}
	if again, err := e.svc.Consolidate(e.ctx, owner); err != nil || again.Summaries != 0 {
		t.Errorf("second consolidation = %+v, %v; want no new summary", again, err)
	}
}
