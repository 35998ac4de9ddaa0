package autonomy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// continuingHarness is the harness whose turns stop as continuing after each model call
// when their context has a deadline (any deadline is within the margin), with the agent's
// Continued wired to the autonomy runner as the app wires it.
func continuingHarness(t *testing.T, handOff func(ownerID, turnID uuid.UUID) error) *harness {
	t.Helper()
	h := newHarnessWith(t, 2*time.Hour, handOff)
	if _, err := autonomy.Setup(h.ctx, h.store, h.owner); err != nil {
		t.Fatal(err)
	}
	return h
}

func withDeadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	t.Cleanup(cancel)
	return ctx
}

// TestContinuingRunFinishesWithItsTurn: a scheduled run whose turn stops before the
// invocation's deadline stays running (not failed), with its turn; the sweep does not fail
// it while the turn is continuing; when the continued turn completes, the run is completed
// exactly once and its notification delivered.
func TestContinuingRunFinishesWithItsTurn(t *testing.T) {
	t.Parallel()
	var handed []uuid.UUID
	h := continuingHarness(t, func(_, turnID uuid.UUID) error { handed = append(handed, turnID); return nil })
	at := time.Date(2026, 3, 29, 5, 0, 0, 0, time.UTC)
	h.clock.Set(at.Add(time.Second))
	run, claimed, err := h.sched.RunJob(withDeadline(t), h.owner, autonomy.JobMorningBriefing, at, store.RunBySchedule)
	if err != nil || !claimed {
		t.Fatalf("run job: %v, claimed %v", err, claimed)
	}
	if run.Status != store.RunRunning || run.TurnID == nil || len(handed) != 1 || handed[0] != *run.TurnID {
		t.Fatalf("after the first invocation: run %+v, handed %v; want running with its turn, handed on once", run, handed)
	}
	if got := h.turn(*run.TurnID); got.Status != steward.StatusContinuing {
		t.Fatalf("turn %s, want continuing", got.Status)
	}
	// A sweep long after: the run's turn is continuing, so the run is not stale.
	h.in(func(tx *store.Tx) error {
		n, err := tx.Runs.FailStale(h.ctx, time.Now().Add(time.Hour))
		if err == nil && n != 0 {
			t.Errorf("the sweep failed %d runs whose turn is continuing", n)
		}
		return err
	})
	v, err := h.runner.Agent.(*agent.Runner).ContinueTurn(h.ctx, h.owner, *run.TurnID)
	if err != nil || v.Status != steward.StatusCompleted {
		t.Fatalf("continue: %+v, %v; want completed", v, err)
	}
	runs := h.runs()
	if len(runs) != 1 || runs[0].Status != store.RunCompleted || runs[0].TurnID == nil || *runs[0].TurnID != v.TurnID || runs[0].FinishedAt == nil {
		t.Fatalf("runs %+v, want one completed run with the turn", runs)
	}
	if h.received.Load() != 1 {
		t.Fatalf("%d notifications delivered, want 1", h.received.Load())
	}
	finished := *runs[0].FinishedAt
	if _, err := h.runner.Agent.(*agent.Runner).ContinueTurn(h.ctx, h.owner, v.TurnID); steward.ErrorCode(err) != steward.CodeConflict {
		t.Fatalf("continuing the turn again: %v, want conflict", err)
	}
	h.runner.Continued(h.ctx, h.owner, v) // a repeated outcome changes nothing
	if runs := h.runs(); runs[0].Status != store.RunCompleted || !runs[0].FinishedAt.Equal(finished) {
		t.Fatalf("run after a repeat: %+v, want unchanged", runs[0])
	}
	if n := countEvents(t, h, "autonomy_run", `"completed"`); n != 1 {
		t.Fatalf("%d completed autonomy_run events, want exactly 1", n)
	}
}

// TestContinuedTurnEndsBeforeRunAttaches: the worker continues and completes the turn
// before the first invocation recorded the turn on its run (the hand-off raced ahead); the
// run is completed all the same, once.
func TestContinuedTurnEndsBeforeRunAttaches(t *testing.T) {
	t.Parallel()
	var h *harness
	h = continuingHarness(t, func(ownerID, turnID uuid.UUID) error {
		v, err := h.runner.Agent.(*agent.Runner).ContinueTurn(context.Background(), ownerID, turnID)
		if err != nil || v.Status != steward.StatusCompleted {
			t.Errorf("worker continue: %+v, %v", v, err)
		}
		return nil
	})
	at := time.Date(2026, 3, 30, 5, 0, 0, 0, time.UTC)
	h.clock.Set(at.Add(time.Second))
	run, _, err := h.sched.RunJob(withDeadline(t), h.owner, autonomy.JobMorningBriefing, at, store.RunBySchedule)
	if err != nil || run.Status != store.RunCompleted || run.TurnID == nil {
		t.Fatalf("run %+v, %v; want completed with its turn", run, err)
	}
	if n := countEvents(t, h, "autonomy_run", `"completed"`); n != 1 {
		t.Fatalf("%d completed autonomy_run events, want exactly 1", n)
	}
}

// countEvents counts the owner's recent audit events of kind whose data contains s.
func countEvents(t *testing.T, h *harness, kind, s string) int {
	t.Helper()
	n := 0
	h.in(func(tx *store.Tx) error {
		evs, err := tx.Journal.RecentEvents(h.ctx, 500)
		for _, e := range evs {
			if e.Kind == kind && strings.Contains(string(e.Data), s) {
				n++
			}
		}
		return err
	})
	return n
}
