package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/webtools"
)

// paidSearch is a search backend that, like Gemini's grounded search, makes a model call.
type paidSearch struct{}

func (paidSearch) Search(context.Context, string, int) (steward.SearchResult, error) {
	return steward.SearchResult{Answer: "Sunny.", Sources: []steward.SearchSource{}, Model: "search-model",
		Usage: steward.Usage{InputTokens: 300, OutputTokens: 30}}, nil
}

// TestToolModelCallsCountAgainstTheTurn: web_search's own model call is priced at its model
// and added to the turn's usage and cost — what the owner's daily budget counts — and the
// story shows it (tool_spend).
func TestToolModelCallsCountAgainstTheTurn(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 4)
	owner, _ := db.Owner(t, "alice")
	reg, err := tools.NewRegistry(webtools.Search(paidSearch{}))
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("s1", "web_search", `{"query":"weather in Lisbon"}`))),
		scripted.Reply(scripted.Text("It is sunny in Lisbon.")),
	)
	r := agent.New(agent.Config{Model: model, Tools: reg, Store: db.Store, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour,
		Price: func(m string, u steward.Usage) int64 {
			if m == "search-model" {
				return 10 * (u.InputTokens + u.OutputTokens)
			}
			return 0
		}}, agent.Hooks{})
	v, err := r.Start(context.Background(), agent.Input{OwnerID: owner.ID, Message: "weather in Lisbon?"}, nil)
	if err != nil || v.Status != steward.StatusCompleted {
		t.Fatalf("turn: %+v, %v", v, err)
	}
	var turn steward.Turn
	var spends int
	if err := db.Store.WithOwner(context.Background(), owner.ID, func(tx *store.Tx) error {
		if turn, err = tx.Turns.Get(context.Background(), v.TurnID); err != nil {
			return err
		}
		evs, err := tx.Journal.TurnEvents(context.Background(), v.TurnID)
		for _, e := range evs {
			if e.Kind == "tool_spend" {
				spends++
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if turn.CostMicros != 3300 || turn.Usage.InputTokens < 300 {
		t.Errorf("turn cost %d µ$, usage %+v: want the search's 3300 µ$ and its 300 input tokens counted", turn.CostMicros, turn.Usage)
	}
	if spends != 1 {
		t.Errorf("%d tool_spend events, want 1", spends)
	}
}
