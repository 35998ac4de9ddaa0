package agent_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// threeCalls is a turn that needs three model calls: two reads, then the answer.
func threeCalls() *scripted.Model {
	return scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("r1", "lookup", `{"key":"a"}`))),
		scripted.Reply(scripted.Calls(scripted.Call("r2", "lookup", `{"key":"b"}`))),
		scripted.Reply(scripted.Text("a and b are known")),
	)
}

// nearDeadline is a context whose deadline is always closer than the harness's margin.
func nearDeadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	t.Cleanup(cancel)
	return ctx
}

// TestTurnContinuesPastDeadline: a turn whose invocation's deadline is near stops between
// steps as continuing after one model call, is handed on, and each ContinueTurn takes it one
// step further; without a deadline it completes, with three model calls in all and each read
// run once.
func TestTurnContinuesPastDeadline(t *testing.T) {
	t.Parallel()
	model := threeCalls()
	h := newHarness(t, model)
	var handed []uuid.UUID
	h.runner.ContinueMargin = 2 * time.Hour
	h.runner.SetHooks(agent.Hooks{Continue: func(_ context.Context, owner, turn uuid.UUID) error {
		if owner != h.owner {
			t.Errorf("continue for owner %s, want %s", owner, h.owner)
		}
		handed = append(handed, turn)
		return nil
	}})
	var events []string
	v, err := h.runner.Start(nearDeadline(t), agent.Input{OwnerID: h.owner, Message: "look up a and b"}, func(e agent.StreamEvent) { events = append(events, e.Type) })
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != steward.StatusContinuing || len(handed) != 1 || handed[0] != v.TurnID || len(model.Requests()) != 1 {
		t.Fatalf("after start: status %s, handed %v, %d model calls; want continuing, handed once, 1 call", v.Status, handed, len(model.Requests()))
	}
	if last := events[len(events)-1]; last != "continuing" {
		t.Fatalf("stream events %v, want the last to be continuing", events)
	}
	got, err := h.runner.Turn(h.ctx, h.owner, v.TurnID)
	if err != nil || got.Status != steward.StatusContinuing {
		t.Fatalf("stored turn %s, %v; want continuing", got.Status, err)
	}
	v, err = h.runner.ContinueTurn(nearDeadline(t), h.owner, v.TurnID)
	if err != nil || v.Status != steward.StatusContinuing || len(handed) != 2 || len(model.Requests()) != 2 {
		t.Fatalf("first continuation: %s, %v, handed %d, %d calls; want continuing again after call 2", v.Status, err, len(handed), len(model.Requests()))
	}
	v, err = h.runner.ContinueTurn(h.ctx, h.owner, v.TurnID)
	if err != nil || v.Status != steward.StatusCompleted || v.Answer != "a and b are known" {
		t.Fatalf("last continuation: %+v, %v; want completed with the answer", v, err)
	}
	if n := len(model.Requests()); n != 3 || h.lookups.Load() != 2 {
		t.Fatalf("%d model calls, %d lookups; want 3 and 2", n, h.lookups.Load())
	}
	// The third call saw both reads' results: the state went across the continuations.
	if req := model.Requests()[2]; len(req.Messages) != 5 {
		t.Fatalf("third call had %d messages, want 5 (user, call, result, call, result)", len(req.Messages))
	}
	if _, err := h.runner.ContinueTurn(h.ctx, h.owner, v.TurnID); steward.ErrorCode(err) != steward.CodeConflict {
		t.Fatalf("continuing a completed turn: %v, want conflict", err)
	}
}

// TestContinueTurnOnce: many invocations continuing the same turn at once: one runs it, the
// others get a conflict, and nothing runs twice.
func TestContinueTurnOnce(t *testing.T) {
	t.Parallel()
	model := threeCalls()
	h := newHarness(t, model)
	h.runner.ContinueMargin = 2 * time.Hour
	h.runner.SetHooks(agent.Hooks{Continue: func(context.Context, uuid.UUID, uuid.UUID) error { return nil }})
	v, err := h.runner.Start(nearDeadline(t), agent.Input{OwnerID: h.owner, Message: "look up a and b"}, nil)
	if err != nil || v.Status != steward.StatusContinuing {
		t.Fatalf("start: %s, %v", v.Status, err)
	}
	var ok, conflicts atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			got, err := h.runner.ContinueTurn(h.ctx, h.owner, v.TurnID)
			switch {
			case err == nil && got.Status == steward.StatusCompleted:
				ok.Add(1)
			case steward.ErrorCode(err) == steward.CodeConflict:
				conflicts.Add(1)
			default:
				t.Errorf("continue: %+v, %v", got, err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || conflicts.Load() != 19 || len(model.Requests()) != 3 || h.lookups.Load() != 2 {
		t.Fatalf("%d completed, %d conflicts, %d model calls, %d lookups; want 1, 19, 3, 2", ok.Load(), conflicts.Load(), len(model.Requests()), h.lookups.Load())
	}
}

// TestLostContinuationIsDrained: a turn whose hand-off failed stays continuing; the
// work spine's drain finds its item across owners (Door.ScanDueWork), enqueued with the
// continuing save, once it waited long enough, and continuing it finishes it.
func TestLostContinuationIsDrained(t *testing.T) {
	t.Parallel()
	model := threeCalls()
	h := newHarness(t, model)
	h.runner.ContinueMargin = 2 * time.Hour
	h.runner.SetHooks(agent.Hooks{Continue: func(context.Context, uuid.UUID, uuid.UUID) error { return context.DeadlineExceeded }})
	v, err := h.runner.Start(nearDeadline(t), agent.Input{OwnerID: h.owner, Message: "look up a and b"}, nil)
	if err != nil || v.Status != steward.StatusContinuing {
		t.Fatalf("start: %s, %v; want continuing although the hand-off failed", v.Status, err)
	}
	scan := func(due time.Time) []store.WorkRef {
		refs, err := h.door.ScanDueWork(h.ctx, map[string]time.Time{agent.ContinueKind: due}, time.Now(), 10)
		if err != nil {
			t.Fatal(err)
		}
		return refs
	}
	if refs := scan(time.Now().Add(-time.Minute)); len(refs) != 0 {
		t.Fatalf("scan for a fresh continuing turn: %+v; want it left alone", refs)
	}
	refs := scan(time.Now().Add(time.Second))
	if len(refs) != 1 || refs[0] != (store.WorkRef{OwnerID: h.owner, Kind: agent.ContinueKind, Key: v.TurnID.String()}) {
		t.Fatalf("scan: %+v; want the turn", refs)
	}
	if _, err := h.runner.ContinueTurn(h.ctx, refs[0].OwnerID, v.TurnID); err != nil {
		t.Fatal(err)
	}
	var turn steward.Turn
	err = h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
		turn, err = tx.Turns.Get(h.ctx, v.TurnID)
		return err
	})
	if err != nil || turn.Status != steward.StatusCompleted || len(model.Requests()) != 3 {
		t.Fatalf("turn %s, %v, %d model calls; want completed after 3", turn.Status, err, len(model.Requests()))
	}
}
