package trading_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// TestHouseholdSecondYes: a household policy on place_order (the existing mechanism) holds an
// order after its owner's yes until the member it names says yes too; only then is it placed.
// An order's amount is not an argument the household can read, so a policy's minimum covers
// every order (it fails closed, as for any call whose amount is unreadable).
func TestHouseholdSecondYes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, orderModel(`{"symbol":"AAPL","side":"buy","qty":2}`), nil)
	e.price(t, "AAPL", "187.20")
	bob, _ := e.DB.Owner(t, "bob-"+uuid.NewString()[:8])
	name := "family-" + uuid.NewString()[:8]
	if _, err := e.DB.Door.CreateHousehold(ctx, name); err != nil {
		t.Fatal(err)
	}
	for _, m := range []uuid.UUID{e.owner, bob.ID} {
		if err := e.DB.Door.AddHouseholdMember(ctx, name, m); err != nil {
			t.Fatal(err)
		}
	}
	min := int64(500_00)
	if _, err := e.DB.Door.AddHouseholdPolicy(ctx, store.HouseholdPolicy{Household: name, Tool: "place_order", MinAmountMinor: &min, Currency: "USD",
		Approvers: []uuid.UUID{bob.ID}}); err != nil {
		t.Fatal(err)
	}
	v := e.start(t, "buy two apple")
	held, err := e.decide(v, true)
	if err != nil || held.Status != steward.StatusSuspended || held.Awaiting == "" || len(e.orders(t)) != 0 {
		t.Fatalf("after the owner's yes: %+v, %v; orders %+v", held, err, e.orders(t))
	}
	inbox, err := e.App.Household.Inbox(ctx, bob.ID)
	if err != nil || len(inbox) != 1 || inbox[0].Tool != "place_order" {
		t.Fatalf("bob's inbox: %+v, %v", inbox, err)
	}
	if _, err := e.App.Household.Decide(ctx, bob.ID, inbox[0].ID, true, ""); err != nil {
		t.Fatalf("bob's yes: %v", err)
	}
	os := e.orders(t)
	if len(os) != 1 || os[0].Status != "filled" {
		t.Fatalf("after bob's yes: %+v", os)
	}
}
