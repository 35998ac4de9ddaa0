package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"
	. "github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// A suspension saved after the owner asked a running turn to stop — the cancel racing the
// loop's last check — is saved cancelled, and no confirm can claim it.
func TestSuspensionAfterCancelRequestIsCancelled(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t, 2)
	owner, _ := db.Owner(t, "alice")
	err := db.Store.WithOwner(ctx, owner.ID, func(tx *Tx) error {
		conv, err := tx.Conversations.Create(ctx, "c")
		if err != nil {
			return err
		}
		turn, err := tx.Turns.Create(ctx, conv.ID, steward.TriggerChat, "scripted", time.Now(), time.Hour)
		if err != nil {
			return err
		}
		asked, err := tx.Turns.Cancel(ctx, turn.ID, time.Now())
		if err != nil {
			return err
		}
		if asked.Status != steward.StatusRunning || asked.CancelRequestedAt == nil || asked.Version != turn.Version {
			t.Fatalf("cancel of a running turn: %s v%d (requested %v), want running v%d with the request", asked.Status, asked.Version, asked.CancelRequestedAt, turn.Version)
		}
		exp := time.Now().Add(time.Hour)
		turn.Status, turn.State, turn.ExpiresAt = steward.StatusSuspended, &steward.State{SchemaVersion: steward.StateSchemaVersion,
			Pending: []steward.PendingCall{{CallID: "c1", Tool: "create_task"}}}, &exp
		if _, err := tx.Turns.Save(ctx, turn); err != nil {
			return err
		}
		got, err := tx.Turns.Get(ctx, turn.ID)
		if err != nil {
			return err
		}
		if got.Status != steward.StatusCancelled || got.State != nil || got.Error != steward.CancelledNote {
			t.Errorf("saved suspended after a cancel request: %s %q (state %v), want cancelled", got.Status, got.Error, got.State != nil)
		}
		if _, err := tx.Turns.Claim(ctx, turn.ID, time.Now(), time.Minute); err == nil {
			t.Error("a confirm claimed the cancelled turn")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
