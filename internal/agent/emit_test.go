package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// TestNoStreamEventInsideTransaction is issue 10, item 1: a turn's stream events reach the
// client only between its transactions, so a client that stops reading never holds a
// database connection idle in transaction. While each event is delivered, no connection of
// the database may be in a transaction.
func TestNoStreamEventInsideTransaction(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t, 10)
	owner, _ := db.Owner(t, "alice")
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("c1", "list_tasks", `{}`), scripted.Call("c2", "create_task", `{"title":"Buy milk"}`))),
		scripted.Reply(scripted.Text("Added it.")),
	)
	r := agent.New(agent.Config{Model: model, Tools: reg, Store: db.Store, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour}, agent.Hooks{})
	super, err := pgx.Connect(ctx, db.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(ctx)
	var seen []string
	emit := func(e agent.StreamEvent) {
		seen = append(seen, e.Type)
		var n int
		if err := super.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND pid <> pg_backend_pid() AND (state LIKE 'idle in transaction%' OR backend_xid IS NOT NULL)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			t.Errorf("%s event delivered while %d connection(s) were in a transaction", e.Type, n)
		}
	}
	v, err := r.Start(ctx, agent.Input{OwnerID: owner.ID, Message: "add milk"}, emit)
	if err != nil || v.Status != steward.StatusSuspended {
		t.Fatalf("start: %v, %+v", err, v)
	}
	var ds []steward.Decision
	for _, p := range v.Pending {
		ds = append(ds, steward.Decision{CallID: p.CallID, Approve: true, ArgsHash: p.ArgsHash})
	}
	if v, err = r.Confirm(ctx, owner.ID, v.TurnID, ds, emit); err != nil || v.Status != steward.StatusCompleted {
		t.Fatalf("confirm: %v, %+v", err, v)
	}
	t.Logf("events: %v", seen)
	if len(seen) < 6 {
		t.Errorf("events %v, want tool calls, results, text and the final ones", seen)
	}
}
