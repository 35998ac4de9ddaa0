package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// A database-local write is claimed, run and journaled in one transaction (docs/ARCHITECTURE.md
// §2, §6): while it runs, no other transaction sees the turn claimed; a confirm arriving then
// waits on the claim's row lock and gets the conflict once the first commits, and the write
// happens once.
func TestConcurrentConfirmDuringMergedClaimAndExecute(t *testing.T) {
	t.Parallel()
	h := newHarness(t, scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("w1", "hold_task", `{"title":"buy milk"}`))),
		scripted.Reply(scripted.Text("done"))))
	running, release := make(chan struct{}), make(chan struct{})
	type args struct {
		Title string `json:"title"`
	}
	hold := tools.New("hold_task", "Create a task, slowly.", steward.KindWrite, func(ctx context.Context, env tools.Env, a args) (any, error) {
		task, err := env.Data.CreateTask(ctx, steward.NewTask{Title: a.Title})
		close(running)
		<-release
		return task, err
	})
	reg, err := tools.NewRegistry(append(toolstest.Tools(), hold)...)
	if err != nil {
		t.Fatal(err)
	}
	h.runner.Tools = reg
	v := h.start("remind me to buy milk")
	if v.Status != steward.StatusSuspended {
		t.Fatalf("view = %+v, want suspended", v)
	}

	type outcome struct {
		v   steward.View
		err error
	}
	first, second := make(chan outcome, 1), make(chan outcome, 1)
	go func() {
		got, err := h.confirm(v, approveAll(v))
		first <- outcome{got, err}
	}()
	select {
	case <-running:
	case <-time.After(30 * time.Second):
		t.Fatal("the approved write never ran")
	}
	// The write is running: its claim is not committed yet, so the turn still reads suspended.
	var seen steward.Status
	if err := h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
		turn, err := tx.Turns.Get(h.ctx, v.TurnID)
		seen = turn.Status
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if seen != steward.StatusSuspended {
		t.Errorf("while the write runs, another transaction sees the turn %s: the claim committed before the write (want one transaction)", seen)
	}
	go func() {
		got, err := h.confirm(v, approveAll(v))
		second <- outcome{got, err}
	}()
	time.Sleep(200 * time.Millisecond) // let the second confirm reach the claim's row lock
	close(release)
	a, b := <-first, <-second
	if a.err != nil || a.v.Status != steward.StatusCompleted {
		t.Fatalf("first confirm = %+v, %v; want completed", a.v, a.err)
	}
	if steward.ErrorCode(b.err) != steward.CodeConflict {
		t.Fatalf("second confirm = %+v, %v; want a conflict (409)", b.v, b.err)
	}
	if n := len(h.tasks()); n != 1 {
		t.Fatalf("%d tasks, want exactly 1", n)
	}
	if j := h.journal(v.TurnID); j["w1"].Status != steward.CallSucceeded {
		t.Fatalf("journal = %+v, want w1 succeeded", j["w1"])
	}
}

// A batch that only waits for the owner saves the suspended turn in the gate's transaction;
// when that save is refused (a NUL in the model's text cannot be stored), the batch is decided
// again without it and the turn fails with the unsaved error, its pending call journaled.
func TestSuspendMergedIntoGateFallsBackWhenTheSaveIsRefused(t *testing.T) {
	t.Parallel()
	resp := scripted.Calls(scripted.Call("w1", "create_task", `{"title":"buy milk"}`))
	resp.Message.Parts = append([]steward.Part{{Text: "on it \x00 now"}}, resp.Message.Parts...)
	h := newHarness(t, scripted.New(scripted.Reply(resp)))
	v := h.start("remind me to buy milk")
	if v.Status != steward.StatusFailed || v.Error != "the turn's result could not be saved" {
		t.Fatalf("view = %+v, want failed: the turn's result could not be saved", v)
	}
	if j := h.journal(v.TurnID); j["w1"].Status != steward.CallPending {
		t.Fatalf("journal = %+v, want w1 pending", j)
	}
	if n := len(h.tasks()); n != 0 {
		t.Fatalf("%d tasks, want none", n)
	}
}
