package memory_test

import (
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/steward"
)

// TestBackgroundModelCallsCountAgainstTheBudget: the fact extraction after a turn and the
// summary of an old conversation are model calls made for the owner outside any turn; each
// is recorded, priced by the model that answered, and added to the owner's day (owner_usage,
// what admission reads) — even when the model recorded no fact.
func TestBackgroundModelCallsCountAgainstTheBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner("alice")
	withUsage := func(r llm.Response) llm.Response {
		r.Model, r.Usage = "gemini-fast-test", steward.Usage{InputTokens: 1000, OutputTokens: 100}
		return r
	}
	e.svc.Model = scripted.New(
		scripted.Reply(withUsage(scripted.Calls(scripted.Call("x1", memory.RecordFactsTool, `{"facts":[]}`)))),
		scripted.Reply(withUsage(scripted.Text("Nothing to remember."))),
		scripted.Reply(withUsage(scripted.Text("Alice talked about bread and boats."))),
	)
	e.svc.Price = func(model string, u steward.Usage) int64 {
		if model != "gemini-fast-test" {
			t.Errorf("priced as %q, want the model that answered", model)
		}
		return u.InputTokens + u.OutputTokens
	}
	conv, _ := e.turn(owner, nil, "Remind me to buy bread.", "Which bakery?")
	e.turn(owner, &conv, "The one on the corner.", "Noted.")
	e.drainAll(e.worker)
	if got := e.superCount(`SELECT COALESCE(sum(cost_micros), 0) FROM owner_usage WHERE owner_id = $1`, owner); got != 2200 {
		t.Fatalf("the owner's day after two extractions costs %d µ$, want 2200 (each call 1100)", got)
	}
	e.svc.SummarizeMin = 2
	e.svc.Now = func() time.Time { return time.Now().Add(40 * 24 * time.Hour) }
	if _, err := e.svc.Consolidate(e.ctx, owner); err != nil {
		t.Fatal(err)
	}
	if got := e.superCount(`SELECT COALESCE(sum(cost_micros), 0) FROM owner_usage WHERE owner_id = $1`, owner); got != 3300 {
		t.Errorf("after the summary the owner's day costs %d µ$, want 3300", got)
	}
	if got := e.superCount(`SELECT count(*) FROM model_calls WHERE owner_id = $1`, owner); got != 3 {
		t.Errorf("%d model calls recorded, want 3 (two extractions, one summary)", got)
	}
}
