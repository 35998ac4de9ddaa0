package store_test

import (
	"context"
	"testing"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// Every STEWARD_DB_EXEC_MODE runs an owner's transaction (RLS settings, typed parameters,
// JSON) and the door's key lookup; an owner still sees only its own rows.
func TestEveryExecModeServesOwners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.New(t)
	door, err := store.OpenDoor(ctx, d.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	alice, _, err := door.CreateOwner(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	bob, _, err := door.CreateOwner(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range append([]string{""}, config.DBExecModes...) {
		u, err := store.WithExecMode(d.AppURL, mode)
		if err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(ctx, u, 2)
		if err != nil {
			t.Fatalf("%q: %v", mode, err)
		}
		var conv steward.Conversation
		for range 2 { // the second time from a cache, where the mode has one
			err = s.WithOwner(ctx, alice.ID, func(tx *store.Tx) error {
				if conv, err = tx.Conversations.Create(ctx, "mode "+mode); err != nil {
					return err
				}
				turn, err := tx.Turns.Create(ctx, conv.ID, steward.TriggerChat, "m")
				if err != nil {
					return err
				}
				return tx.Journal.AppendEvents(ctx, &turn.ID, []steward.NewEvent{{Seq: 1, Kind: "turn_started", Data: []byte(`{"mode":"` + mode + `"}`)}})
			})
			if err != nil {
				t.Fatalf("%q: %v", mode, err)
			}
		}
		// The turn loop's pipelined transaction: reads sharing a round trip (Together),
		// answered from the batch, and deferred writes.
		for range 2 {
			err = s.InOwner(ctx, alice.ID, func(tx agent.Tx) error {
				var got steward.Conversation
				var msgs []steward.StoredMessage
				if err := tx.Together(ctx, func() (err error) {
					got, err = tx.Conversations.Get(ctx, conv.ID)
					return err
				}, func() (err error) {
					msgs, err = tx.Conversations.Messages(ctx, conv.ID)
					return err
				}); err != nil {
					return err
				}
				if got.ID != conv.ID || got.Title != "mode "+mode || msgs == nil {
					t.Errorf("%q: together read %+v, %v", mode, got, msgs)
				}
				return tx.Conversations.Touch(ctx, conv.ID, "")
			})
			if err != nil {
				t.Fatalf("%q: pipelined: %v", mode, err)
			}
		}
		err = s.WithOwner(ctx, bob.ID, func(tx *store.Tx) error {
			_, err := tx.Conversations.Get(ctx, conv.ID)
			return err
		})
		if steward.ErrorCode(err) != steward.CodeNotFound {
			t.Fatalf("%q: bob reads alice's conversation: %v, want not found", mode, err)
		}
		s.Close()
	}
	if got, _ := store.WithExecMode("host=db user=u", "describe_exec"); got != "host=db user=u default_query_exec_mode=describe_exec" {
		t.Fatalf("keyword/value url = %q", got)
	}
}
