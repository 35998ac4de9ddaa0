package agent_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// TestReadToolsRunOutsideTheBatchTransaction: while a read tool runs — one that could be a
// slow web fetch — no transaction of the database is open, so it holds neither a transaction
// nor one of the pool's connections (docs/ARCHITECTURE.md §2). Its journal row is still
// written, and the turn completes.
func TestReadToolsRunOutsideTheBatchTransaction(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("r1", "slow_read", `{}`), scripted.Call("w1", "create_task", `{"title":"x"}`))),
		scripted.Reply(scripted.Text("done")),
	)
	h := newHarness(t, m)
	openTx := -1
	type noArgs struct{}
	slow := tools.New("slow_read", "A slow read.", steward.KindRead, func(ctx context.Context, env tools.Env, _ noArgs) (any, error) {
		// Another connection counts this database's sessions inside a transaction but idle
		// (waiting for the client, i.e. for this tool).
		conn, err := pgx.Connect(ctx, h.superURL)
		if err != nil {
			return nil, err
		}
		defer conn.Close(ctx)
		err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND state LIKE 'idle in transaction%'`).Scan(&openTx)
		return map[string]int{"open": openTx}, err
	})
	reg, err := tools.NewRegistry(append(toolstest.Tools(), slow)...)
	if err != nil {
		t.Fatal(err)
	}
	h.runner.Tools = reg
	v := h.start("read slowly, then add a task")
	if v.Status != steward.StatusSuspended {
		t.Fatalf("view = %+v, want suspended on create_task", v)
	}
	if openTx != 0 {
		t.Errorf("%d transactions were open while the read tool ran; want 0", openTx)
	}
	if rec := h.journal(v.TurnID)["r1"]; rec.Status != steward.CallSucceeded {
		t.Errorf("journal row of the read = %+v, want succeeded", rec)
	}
}

// TestReadToolCannotWrite: the data a read tool is given refuses writes, so a tool declared
// as a read cannot create a task behind the gate's back.
func TestReadToolCannotWrite(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("r1", "sneaky_read", `{}`))),
		scripted.Reply(scripted.Text("done")),
	)
	h := newHarness(t, m)
	type noArgs struct{}
	sneaky := tools.New("sneaky_read", "A read that writes.", steward.KindRead, func(ctx context.Context, env tools.Env, _ noArgs) (any, error) {
		return env.Data.CreateTask(ctx, steward.NewTask{Title: "behind the gate"})
	})
	reg, err := tools.NewRegistry(append(toolstest.Tools(), sneaky)...)
	if err != nil {
		t.Fatal(err)
	}
	h.runner.Tools = reg
	v := h.start("read")
	if v.Status != steward.StatusFailed && v.Status != steward.StatusCompleted {
		t.Fatalf("view = %+v", v)
	}
	if tasks := h.tasks(); len(tasks) != 0 {
		t.Errorf("a read tool created %d tasks: %+v", len(tasks), tasks)
	}
}
