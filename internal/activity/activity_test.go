package activity_test

import (
	"context"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestRuns: the activity feed lists the owner's job runs and webhook runs with their
// status and turn, newest first, and none of another owner's.
func TestRuns(t *testing.T) {
	ctx := context.Background()
	o := testdb.Open(t, 4)
	alice, _ := o.Owner(t, "alice")
	bob, _ := o.Owner(t, "bob")
	t0 := time.Date(2031, 5, 1, 7, 0, 0, 0, time.UTC)
	var turnID = steward.Turn{}.ID
	err := o.Store.WithOwner(ctx, alice.ID, func(tx *store.Tx) error {
		conv, err := tx.Conversations.Create(ctx, "briefing")
		if err != nil {
			return err
		}
		turn, err := tx.Turns.Create(ctx, conv.ID, steward.TriggerSchedule, "m", time.Now(), time.Hour)
		if err != nil {
			return err
		}
		turnID = turn.ID
		run, _, err := tx.Runs.Claim(ctx, store.NewRun{Job: "morning-briefing", Trigger: store.RunBySchedule,
			ScheduledFor: t0, Status: store.RunRunning, Now: t0})
		if err != nil {
			return err
		}
		if _, err := tx.Runs.Finish(ctx, run.ID, store.RunCompleted, &turn.ID, "", t0); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A later transaction: runs are listed by when they were recorded.
	err = o.Store.WithOwner(ctx, alice.ID, func(tx *store.Tx) error {
		hook, err := tx.Webhooks.Create(ctx, "wh_activityfeed00001", "github", "whsec_c2VjcmV0c2VjcmV0c2VjcmV0")
		if err != nil {
			return err
		}
		t1 := t0.Add(time.Minute)
		_, _, err = tx.Deliveries.Enqueue(ctx, hook.ID, "msg-1", []byte(`{}`), store.NewRun{Job: "webhook:github",
			Trigger: store.RunByWebhook, ScheduledFor: t1, Now: t1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := &activity.Service{Store: o.Store}
	runs, err := svc.Runs(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("alice's runs = %+v, want the webhook run and the job run", runs)
	}
	if r := runs[0]; r.Trigger != store.RunByWebhook || r.Job != "webhook:github" || r.Status != store.RunQueued {
		t.Errorf("newest run = %+v, want the queued webhook run", r)
	}
	if r := runs[1]; r.Trigger != store.RunBySchedule || r.Job != "morning-briefing" || r.Status != store.RunCompleted ||
		r.TurnID == nil || *r.TurnID != turnID {
		t.Errorf("older run = %+v, want the completed morning-briefing with its turn %s", r, turnID)
	}
	other, err := svc.Runs(ctx, bob.ID)
	if err != nil || len(other) != 0 {
		t.Errorf("bob's runs = %+v, %v; want none", other, err)
	}
}
