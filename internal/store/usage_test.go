package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	. "github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestDailyUsageCounter: admission reads the day's budget use from a counter the database
// keeps with the turns — a message per chat or cli turn started, each turn's cost as it
// grows — exactly, under concurrent turns, and without giving budget back when the owner
// deletes a conversation.
func TestDailyUsageCounter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.Open(t, 10)
	s := d.Store
	owner, _ := d.Owner(t, "alice")
	other, _ := d.Owner(t, "bob")
	usage := func(id uuid.UUID) steward.DailyUsage {
		t.Helper()
		var u steward.DailyUsage
		err := s.WithOwner(ctx, id, func(tx *Tx) error {
			var err error
			_, u, err = tx.Safety.AdmitState(ctx)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	var conv uuid.UUID
	err := s.WithOwner(ctx, owner.ID, func(tx *Tx) error {
		c, err := tx.Conversations.Create(ctx, "plans")
		if err != nil {
			return err
		}
		conv = c.ID
		for i, trigger := range []steward.Trigger{steward.TriggerChat, steward.TriggerChat, steward.TriggerCLI, steward.TriggerWebhook, steward.TriggerSchedule} {
			turn, err := tx.Turns.Create(ctx, conv, trigger, "scripted", time.Now(), time.Hour)
			if err != nil {
				return err
			}
			for _, cost := range []int64{100 * int64(i+1), 250 * int64(i+1)} { // the cost grows as the turn goes on
				turn.CostMicros = cost
				if turn, err = tx.Turns.Save(ctx, turn); err != nil {
					return err
				}
			}
			turn.Status = steward.StatusCompleted // a save that leaves the cost alone adds nothing
			if _, err = tx.Turns.Save(ctx, turn); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// chat, chat, cli count as messages; every turn's cost counts: 250·(1+2+3+4+5).
	if u := usage(owner.ID); u.Messages != 3 || u.CostMicros != 3750 {
		t.Errorf("usage = %d messages, %d µ$; want 3 and 3750", u.Messages, u.CostMicros)
	}

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			err := s.WithOwner(ctx, owner.ID, func(tx *Tx) error {
				_, err := tx.Turns.Create(ctx, conv, steward.TriggerChat, "scripted", time.Now(), time.Hour)
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if u := usage(owner.ID); u.Messages != 11 {
		t.Errorf("usage after 8 concurrent turns = %d messages, want 11", u.Messages)
	}

	err = s.WithOwner(ctx, owner.ID, func(tx *Tx) error { return tx.Conversations.Delete(ctx, conv) })
	if err != nil {
		t.Fatal(err)
	}
	if u := usage(owner.ID); u.Messages != 11 || u.CostMicros != 3750 {
		t.Errorf("usage after deleting the conversation = %d messages, %d µ$; want 11 and 3750 still", u.Messages, u.CostMicros)
	}
	if u := usage(other.ID); u.Messages != 0 || u.CostMicros != 0 {
		t.Errorf("bob's usage = %+v, want none", u)
	}
}
