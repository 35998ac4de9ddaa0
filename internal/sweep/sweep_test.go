package sweep_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/benchcycle"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/sweep"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestSweepSkipsOwnersWithNothingToDo: the sweep finds its owners in one door-side query (as
// steward_door, the runtime's role) and opens a transaction only for them. With nothing due
// anywhere it sends the application's pool not one statement; once alice's suspended turn is
// past its expiry, her turn is expired in one owner transaction and bob — whose turn is
// still waiting — costs none.
func TestSweepSkipsOwnersWithNothingToDo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var proxy *benchcycle.Proxy
	var trace *testdb.Buffer
	o := testdb.OpenAs(t, 2, func(d testdb.DB) string {
		var u string
		u, proxy, trace = testdb.Counted(t, d.AppURL)
		return u
	})
	door, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	alice, _ := o.Owner(t, "alice")
	bob, _ := o.Owner(t, "bob")
	start := time.Now()
	aliceTurn := suspended(t, o.Store, alice.ID, start.Add(time.Hour))
	bobTurn := suspended(t, o.Store, bob.ID, start.Add(3*time.Hour))

	now := start
	sw := &sweep.Sweeper{Store: o.Store, Owners: door, Now: func() time.Time { return now }}
	before := proxy.Counts()
	swept, err := sw.Sweep(ctx)
	if err != nil || swept != (sweep.Swept{}) {
		t.Fatalf("sweep with nothing due = %+v, %v; want nothing swept", swept, err)
	}
	if n := proxy.Counts().Sub(before).RoundTrips; n != 0 {
		t.Errorf("a sweep with nothing due took %d round trips on the application's pool; want 0 (no owner transaction)", n)
	}

	now = start.Add(2 * time.Hour)
	// Each owner transaction begins by naming its owner (Store.WithOwner).
	begins := func() int { return strings.Count(trace.String(), "set_config('app.owner_id'") }
	began := begins()
	swept, err = sw.Sweep(ctx)
	if err != nil || swept.Expired != 1 {
		t.Fatalf("sweep = %+v, %v; want alice's turn expired", swept, err)
	}
	if n := begins() - began; n != 1 {
		t.Errorf("the sweep ran %d owner transactions; want 1 (alice's), none for bob", n)
	}
	if got := status(t, o.Store, alice.ID, aliceTurn); got != steward.StatusExpired {
		t.Errorf("alice's turn is %s; want expired", got)
	}
	if got := status(t, o.Store, bob.ID, bobTurn); got != steward.StatusSuspended {
		t.Errorf("bob's turn is %s; want still suspended", got)
	}
}

// suspended stores a turn of owner suspended until expires.
func suspended(t *testing.T, s *store.Store, owner uuid.UUID, expires time.Time) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := s.WithOwner(context.Background(), owner, func(tx *store.Tx) error {
		ctx := context.Background()
		conv, err := tx.Conversations.Create(ctx, "sweep")
		if err != nil {
			return err
		}
		turn, err := tx.Turns.Create(ctx, conv.ID, steward.TriggerChat, "m", time.Now(), time.Hour)
		if err != nil {
			return err
		}
		turn.Status, turn.State, turn.ExpiresAt = steward.StatusSuspended, &steward.State{SchemaVersion: steward.StateSchemaVersion}, &expires
		turn, err = tx.Turns.Save(ctx, turn)
		id = turn.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func status(t *testing.T, s *store.Store, owner, id uuid.UUID) steward.Status {
	t.Helper()
	var turn steward.Turn
	err := s.WithOwner(context.Background(), owner, func(tx *store.Tx) error {
		var err error
		turn, err = tx.Turns.Get(context.Background(), id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return turn.Status
}
