package trading_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// TestHouseholdSecondYes: a household policy on place_order above 500 USD (the existing
// mechanism, compared with the order's notional at the quote) holds an order of about 748.80
// USD after its owner's yes until the member it names says yes too; only then is it placed.
// An order of about 374.40 USD, under the minimum, needs only the owner's yes.
func TestHouseholdSecondYes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("o1", "place_order", `{"symbol":"AAPL","side":"buy","qty":2}`))),
		scripted.Reply(scripted.Text("Done.")),
		scripted.Reply(scripted.Calls(scripted.Call("o1", "place_order", `{"symbol":"AAPL","side":"buy","qty":4}`))),
		scripted.Reply(scripted.Text("Done.")))
	e := newEnv(t, model, nil)
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
	small, err := e.decide(e.start(t, "buy two apple"), true)
	if err != nil || small.Status != steward.StatusCompleted || len(e.orders(t)) != 1 {
		t.Fatalf("an order under the minimum: %+v, %v; orders %+v", small, err, e.orders(t))
	}
	v := e.start(t, "buy four apple")
	held, err := e.decide(v, true)
	if err != nil || held.Status != steward.StatusSuspended || held.Awaiting == "" || len(e.orders(t)) != 1 {
		t.Fatalf("after the owner's yes: %+v, %v; orders %+v", held, err, e.orders(t))
	}
	inbox, err := e.App.Household.Inbox(ctx, bob.ID)
	if err != nil || len(inbox) != 1 || inbox[0].Tool != "place_order" || inbox[0].Amount != "748.80 USD" {
		t.Fatalf("bob's inbox: %+v, %v", inbox, err)
	}
	if _, err := e.App.Household.Decide(ctx, bob.ID, inbox[0].ID, true, ""); err != nil {
		t.Fatalf("bob's yes: %v", err)
	}
	os := e.orders(t)
	if len(os) != 2 || os[0].Status != "filled" || *os[0].Qty != 4 {
		t.Fatalf("after bob's yes: %+v", os)
	}
}

// TestBriefingPortfolioLine: with trading on, the morning briefing carries the account in one
// line (the offline demo model writes it as it is).
func TestBriefingPortfolioLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, nil, map[string]string{"STEWARD_TRADING_PAPER_CASH": "10000"})
	e.price(t, "AAPL", "187.20")
	if _, err := e.App.Trading.PlaceOrder(ctx, e.owner, "b1", steward.OrderRequest{Symbol: "AAPL", Side: "buy", Qty: 2}); err != nil {
		t.Fatal(err)
	}
	e.price(t, "AAPL", "190")
	if _, err := e.App.Scheduler.AddSchedule(ctx, e.owner, autonomy.JobMorningBriefing, "0 7 * * *", "UTC", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := autonomy.Setup(ctx, e.App.Store, e.owner); err != nil { // the owner allows notify
		t.Fatal(err)
	}
	run, _, err := e.App.Scheduler.RunJob(ctx, e.owner, autonomy.JobMorningBriefing, time.Now().Truncate(time.Second), store.RunByCLI)
	if err != nil || run.Status != store.RunCompleted {
		t.Fatalf("briefing run: %+v, %v", run, err)
	}
	notes, err := e.App.Activity.Notifications(ctx, e.owner)
	want := "Portfolio: paper account: equity 10005.60 USD (cash 9625.60 USD), unrealised P&L +5.60 USD, 1 position, 1 order today."
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0].Message, want) {
		t.Fatalf("briefing: %+v, %v; want %q", notes, err, want)
	}
}
