package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	. "github.com/stewardhq/steward/internal/store"
)

// seedHousehold puts alice and bob in one household whose policy makes each one's
// create_task wait for the other, and files each one's suspended turn: each owner then has
// their own vote and a request from the other (household_members, household_approvals).
func seedHousehold(t *testing.T, ctx context.Context, s *Store, door *Door, a, b seeded) {
	t.Helper()
	if _, err := door.CreateHousehold(ctx, "home"); err != nil {
		t.Fatal(err)
	}
	for _, o := range []seeded{a, b} {
		if err := door.AddHouseholdMember(ctx, "home", o.owner.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := door.AddHouseholdPolicy(ctx, HouseholdPolicy{Household: "home", Tool: "create_task", Approvers: []uuid.UUID{a.owner.ID, b.owner.ID}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []seeded{a, b} {
		err := s.WithOwner(ctx, o.owner.ID, func(tx *Tx) error {
			n, err := tx.Household.Request(ctx, o.turn, []steward.HouseholdCall{{CallID: "c1", ArgsHash: "h", Tool: "create_task",
				Summary: `title="secret of ` + o.owner.Name + `"`}}, time.Now().Add(time.Hour))
			if err == nil && n != 1 {
				t.Fatalf("%s's request asked %d members, want 1", o.owner.Name, n)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// probeHousehold: through the household view bob sees alice's request to him — the call
// and nothing else — and can neither read nor decide anything else of hers.
func probeHousehold(t *testing.T, ctx context.Context, s *Store, a, b seeded) {
	covers("Household.Request", "Household.File", "Household.Votes", "Household.Close", "Household.DecideOwn", "Household.Inbox", "Household.Get", "Household.Decide", "Household.Expire",
		"Household.Governs")
	// Alice's own vote and bob's request to her: rows of hers.
	var aliceOwn, toAlice uuid.UUID
	err := s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		if err := tx.RawRow(ctx, `SELECT id FROM household_approvals WHERE owner_id = $1 AND requester_id = $1`, a.owner.ID).Scan(&aliceOwn); err != nil {
			return err
		}
		return tx.RawRow(ctx, `SELECT id FROM household_approvals WHERE owner_id = $1 AND requester_id = $2`, a.owner.ID, b.owner.ID).Scan(&toAlice)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The gate's question is about the caller's own household only: a policy naming another
	// member governs bob's create_task, nothing governs his notify.
	err = s.WithOwnerPipelined(ctx, b.owner.ID, func(tx *Tx) error {
		for tool, want := range map[string]bool{"create_task": true, "notify": false} {
			if got, err := tx.Household.Governs(ctx, tool, nil); err != nil || got != want {
				t.Errorf("bob's household governs %s: %v, %v; want %v", tool, got, err, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		in, err := tx.Household.Inbox(ctx, 100)
		if err != nil {
			return err
		}
		if len(in) != 1 || in[0].RequesterName != "alice" || in[0].Summary != `title="secret of alice"` || in[0].Tool != "create_task" {
			t.Errorf("bob's inbox = %+v; want alice's one request, the call only", in)
		}
		for _, id := range []uuid.UUID{aliceOwn, toAlice} {
			if _, err := tx.Household.Get(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("bob gets alice's household row %s: %v, want not found", id, err)
			}
			if _, err := tx.Household.Decide(ctx, id, true, "", time.Now()); !errors.Is(err, ErrNotFound) {
				t.Errorf("bob decides alice's household row %s: %v, want not found", id, err)
			}
		}
		if v, err := tx.Household.Votes(ctx, a.turn); err != nil || len(v) != 0 {
			t.Errorf("bob reads the votes on alice's turn: %+v, %v; want none", v, err)
		}
		if n, err := tx.Household.Request(ctx, a.turn, []steward.HouseholdCall{{CallID: "c2", ArgsHash: "h", Tool: "create_task"}}, time.Now().Add(time.Hour)); err != nil || n != 0 {
			t.Errorf("bob files alice's turn: %d, %v; want 0", n, err)
		}
		if err := tx.Household.DecideOwn(ctx, a.turn, "c1", true, "", time.Now()); err != nil {
			return err
		}
		// Expire touches the votes on bob's own turn only (his and his request to alice).
		if n, err := tx.Household.Expire(ctx, time.Now().Add(2*time.Hour)); err != nil || n != 2 {
			t.Errorf("bob's expire = %d, %v; want his own 2 votes", n, err)
		}
		return tx.Household.Close(ctx, a.turn)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The turn loop's deferred filing, in its pipelined transaction, files nothing of hers either.
	err = s.WithOwnerPipelined(ctx, b.owner.ID, func(tx *Tx) error {
		return tx.Household.File(ctx, a.turn, []steward.HouseholdCall{{CallID: "c3", ArgsHash: "h", Tool: "create_task"}}, time.Now().Add(time.Hour))
	})
	if err != nil {
		t.Fatal(err)
	}
	// Alice's votes are as they were: hers and bob's pending, no vote on c2 or c3.
	err = s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		v, err := tx.Household.Votes(ctx, a.turn)
		if err != nil {
			return err
		}
		if len(v) != 2 || v[0].Status != steward.VotePending || v[1].Status != steward.VotePending || v[0].CallID != "c1" || v[1].CallID != "c1" {
			t.Errorf("alice's votes after bob's probes = %+v; want her own and bob's on c1, pending", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
