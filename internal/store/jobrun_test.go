package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	. "github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestSuspendedRunFollowsItsTurn: a job run that suspended for approval takes its turn's
// final status when the owner decides, instead of waiting in the activity feed forever.
func TestSuspendedRunFollowsItsTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t, 2)
	s := db.Store
	owner, _ := db.Owner(t, "alice")
	for _, tc := range []struct {
		final steward.Status
		want  RunStatus
	}{{steward.StatusCompleted, "completed"}, {steward.StatusAborted, "aborted"}, {steward.StatusFailed, "failed"}} {
		err := s.WithOwner(ctx, owner.ID, func(tx *Tx) error {
			conv, err := tx.Conversations.Create(ctx, "briefing")
			if err != nil {
				return err
			}
			turn, err := tx.Turns.Create(ctx, conv.ID, steward.TriggerSchedule, "m", time.Now(), time.Hour)
			if err != nil {
				return err
			}
			now := time.Now()
			run, claimed, err := tx.Runs.Claim(ctx, NewRun{Job: "morning-briefing-" + string(tc.final), Trigger: RunBySchedule, ScheduledFor: now, Status: "running", Now: now})
			if err != nil || !claimed {
				t.Fatalf("claim: %v %v", claimed, err)
			}
			if _, err := tx.Runs.Finish(ctx, run.ID, "suspended", &turn.ID, "", now); err != nil {
				return err
			}
			exp := now.Add(time.Hour)
			turn.Status, turn.State, turn.ExpiresAt = steward.StatusSuspended, &steward.State{SchemaVersion: steward.StateSchemaVersion}, &exp
			if turn, err = tx.Turns.Save(ctx, turn); err != nil {
				return err
			}
			if got, _ := tx.Runs.Get(ctx, run.ID); got.Status != "suspended" {
				t.Fatalf("run before the decision: %s", got.Status)
			}
			// The owner decides; the resumed turn ends.
			if turn, err = tx.Turns.Claim(ctx, turn.ID, now, time.Minute); err != nil {
				return err
			}
			turn.Status, turn.State = tc.final, nil
			if _, err = tx.Turns.Save(ctx, turn); err != nil {
				return err
			}
			got, err := tx.Runs.Get(ctx, run.ID)
			if err != nil || got.Status != tc.want || got.FinishedAt == nil {
				t.Errorf("turn %s: run %+v, %v; want %s", tc.final, got, err, tc.want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestStaleRunIsFailed: a run left running by a dead process is failed by the sweep.
func TestStaleRunIsFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t, 2)
	s := db.Store
	owner, _ := db.Owner(t, "alice")
	err := s.WithOwner(ctx, owner.ID, func(tx *Tx) error {
		now := time.Now().Add(-time.Hour)
		run, _, err := tx.Runs.Claim(ctx, NewRun{Job: "weekly-review", Trigger: RunBySchedule, ScheduledFor: now, Status: "running", Now: now})
		if err != nil {
			return err
		}
		if n, err := tx.Runs.FailStale(ctx, time.Now().Add(-2*time.Hour)); err != nil || n != 0 {
			t.Fatalf("a run younger than the limit was swept: %d, %v", n, err)
		}
		if n, err := tx.Runs.FailStale(ctx, time.Now().Add(-30*time.Minute)); err != nil || n != 1 {
			t.Fatalf("swept %d, %v; want 1", n, err)
		}
		got, err := tx.Runs.Get(ctx, run.ID)
		if err != nil || got.Status != "failed" {
			t.Fatalf("run = %+v, %v", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
