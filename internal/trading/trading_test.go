package trading_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/quick"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
)

// env is one test's app with trading on, and an owner.
type env struct {
	*apptest.Env
	owner uuid.UUID
	key   string
}

func newEnv(t *testing.T, model llm.Model, vars map[string]string) env {
	t.Helper()
	all := map[string]string{"STEWARD_TRADING": "paper"}
	for k, v := range vars {
		all[k] = v
	}
	e := apptest.New(t, apptest.Options{Model: model, Env: all})
	o, key := e.DB.Owner(t, "trader-"+uuid.NewString()[:8])
	return env{Env: e, owner: o.ID, key: key}
}

func (e env) start(t *testing.T, message string) steward.View {
	t.Helper()
	v, err := e.App.Runner.Start(context.Background(), agent.Input{OwnerID: e.owner, Message: message}, nil)
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	return v
}

func (e env) decide(v steward.View, approve bool) (steward.View, error) {
	var ds []steward.Decision
	for _, p := range v.Pending {
		ds = append(ds, steward.Decision{CallID: p.CallID, Approve: approve, ArgsHash: p.ArgsHash})
	}
	return e.App.Runner.Confirm(context.Background(), e.owner, v.TurnID, ds, nil)
}

// call is the journal row of a turn's call.
func (e env) call(t *testing.T, turn uuid.UUID, id string) steward.CallRecord {
	t.Helper()
	st, err := e.App.Activity.Story(context.Background(), e.owner, turn)
	if err != nil {
		t.Fatalf("story: %v", err)
	}
	for _, c := range st.Calls {
		if c.CallID == id {
			return c
		}
	}
	t.Fatalf("no call %s in %+v", id, st.Calls)
	return steward.CallRecord{}
}

func (e env) price(t *testing.T, symbol, price string) {
	t.Helper()
	if _, err := e.App.Trading.SetPrice(context.Background(), e.owner, symbol, price); err != nil {
		t.Fatalf("price %s: %v", symbol, err)
	}
}

func (e env) orders(t *testing.T) []steward.Order {
	t.Helper()
	os, err := e.App.Trading.Orders(context.Background(), e.owner, 100)
	if err != nil {
		t.Fatalf("orders: %v", err)
	}
	return os
}

// TestTradingOffByDefault: without STEWARD_TRADING no trading tool is registered and the
// service says trading is off.
func TestTradingOffByDefault(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, apptest.Options{})
	if e.App.Trading != nil {
		t.Fatal("trading built while off")
	}
	if _, ok := e.App.Runner.Config.Tools.Get("place_order"); ok {
		t.Fatal("place_order registered while trading is off")
	}
	if _, err := e.App.Trading.Quote(context.Background(), uuid.New(), "AAPL"); err == nil || !strings.Contains(err.Error(), "trading is off") {
		t.Fatalf("quote while off: %v", err)
	}
}

// TestPaperOrderAsksThenFills: the card says side, quantity, symbol, the estimated notional
// at the quote and the caps left today; approved, the paper broker fills it at the quote.
func TestPaperOrderAsksThenFills(t *testing.T) {
	t.Parallel()
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("q1", "get_quote", `{"symbol":"aapl"}`))),
		scripted.Reply(scripted.Calls(scripted.Call("o1", "place_order", `{"symbol":"AAPL","side":"buy","qty":5}`))),
		scripted.Reply(scripted.Text("Bought 5 AAPL.")))
	e := newEnv(t, model, map[string]string{"STEWARD_TRADING_PAPER_CASH": "10000"})
	e.price(t, "AAPL", "187.20")
	v := e.start(t, "buy 5 apple shares")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
		t.Fatalf("turn: %+v, want suspended on place_order", v)
	}
	card := v.Pending[0].Preview
	for _, want := range []string{"Buy 5 shares of AAPL at market", "paper account", "about 936.00 USD", "187.20 USD a share",
		"your price table", "1000.00 USD per order", "5000.00 USD of 5000.00 USD left today"} {
		if !strings.Contains(card, want) {
			t.Errorf("card %q lacks %q", card, want)
		}
	}
	if v.Pending[0].AlwaysOffered {
		t.Error("an order offers always")
	}
	if len(e.orders(t)) != 0 {
		t.Fatal("an order exists before the yes")
	}
	done, err := e.decide(v, true)
	if err != nil || done.Status != steward.StatusCompleted {
		t.Fatalf("confirm: %+v, %v", done, err)
	}
	os := e.orders(t)
	if len(os) != 1 || os[0].Status != "filled" || os[0].FilledQty != 5 || *os[0].FilledPriceMinor != 187_20 || os[0].ClientOrderID != v.TurnID.String()+"/o1" {
		t.Fatalf("orders: %+v", os)
	}
	a, hs, err := e.App.Trading.Portfolio(context.Background(), e.owner)
	if err != nil || a.CashMinor != 10000_00-936_00 || len(hs) != 1 || hs[0].Qty != 5 || a.EquityMinor != 10000_00 || a.Caps.LeftTodayMinor != 5000_00-936_00 {
		t.Fatalf("account %+v, positions %+v, %v", a, hs, err)
	}
	// The price moves: P&L follows.
	e.price(t, "AAPL", "190.20")
	if a, _ := e.App.Trading.Account(context.Background(), e.owner); a.PnLMinor != 15_00 || a.EquityMinor != 10000_00+15_00 {
		t.Fatalf("after the price moved: %+v", a)
	}
	if c := e.call(t, v.TurnID, "o1"); c.Status != steward.CallSucceeded {
		t.Fatalf("journal: %+v", c)
	}
}

// TestCapsRefuseBeforeAsking: an order over the per-order cap, over what is left of the daily
// cap, outside the allow-list or without a quote is refused before anyone is asked, in
// words naming the cap; no order exists.
func TestCapsRefuseBeforeAsking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name, args, want string
	}{
		{"per-order cap", `{"symbol":"AAPL","side":"buy","qty":10}`, "refused by the per-order cap: this order is about 1872.00 USD, over the per-order cap of 1000.00 USD"},
		{"daily cap", `{"symbol":"AAPL","side":"buy","qty":4}`, "refused by the daily cap: this order is about 748.80 USD and only 500.00 USD of the daily cap of 500.00 USD is left today"},
		{"allow-list", `{"symbol":"MSFT","side":"buy","qty":1}`, "refused by the symbol allow-list: MSFT is not one of AAPL, TSLA"},
		{"no quote", `{"symbol":"TSLA","side":"buy","qty":1}`, "no quote for TSLA, so no order"},
		{"limit at its limit", `{"symbol":"AAPL","side":"buy","qty":2,"type":"limit","limit_price":300}`, "about 600.00 USD and only 500.00 USD"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			model := scripted.New(
				scripted.Reply(scripted.Calls(scripted.Call("o1", "place_order", c.args))),
				scripted.Reply(scripted.Text("It was refused.")))
			e := newEnv(t, model, nil)
			e.price(t, "AAPL", "187.20")
			e.price(t, "MSFT", "400")
			daily := int64(500_00)
			if c.name != "per-order cap" {
				if err := e.App.Trading.SetSettings(ctx, e.owner, steward.TradingSettings{DailyCapMinor: &daily, Symbols: []string{"aapl", "TSLA"}}); err != nil {
					t.Fatal(err)
				}
			}
			v := e.start(t, "place it")
			if v.Status != steward.StatusCompleted || len(v.Pending) != 0 {
				t.Fatalf("turn: %+v, want completed without asking", v)
			}
			reqs := model.Requests()
			last := reqs[len(reqs)-1].Messages
			got := string(last[len(last)-1].Parts[0].ToolResult.Output)
			if !strings.Contains(got, c.want) {
				t.Errorf("the model read %s, want %q", got, c.want)
			}
			if os := e.orders(t); len(os) != 0 {
				t.Errorf("orders: %+v", os)
			}
		})
	}
}

// TestDeniedOrderIsNeverPlaced: a denied order leaves no order and no cash spent.
func TestDeniedOrderIsNeverPlaced(t *testing.T) {
	t.Parallel()
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("o1", "place_order", `{"symbol":"AAPL","side":"buy","qty":1}`))),
		scripted.Reply(scripted.Text("Not placed.")))
	e := newEnv(t, model, nil)
	e.price(t, "AAPL", "187.20")
	v := e.start(t, "buy one")
	if _, err := e.decide(v, false); err != nil {
		t.Fatal(err)
	}
	a, err := e.App.Trading.Account(context.Background(), e.owner)
	if len(e.orders(t)) != 0 || err != nil || a.CashMinor != 100000_00 {
		t.Fatalf("after a deny: orders %+v, account %+v, %v", e.orders(t), a, err)
	}
	if c := e.call(t, v.TurnID, "o1"); c.Status != steward.CallDenied {
		t.Fatalf("journal: %+v", c)
	}
}

// TestAnotherOwnerSeesNothing: a second owner's account is fresh, lists no order, and cannot
// cancel the first owner's.
func TestAnotherOwnerSeesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, nil, nil)
	e.price(t, "AAPL", "187.20")
	o, err := e.App.Trading.PlaceOrder(ctx, e.owner, "c1", steward.OrderRequest{Symbol: "AAPL", Side: "buy", Qty: 2, Type: "limit", LimitPriceMinor: 150_00})
	if err != nil || o.Status != "new" {
		t.Fatalf("open limit order: %+v, %v", o, err)
	}
	other, _ := e.DB.Owner(t, "other-trader")
	a, hs, err := e.App.Trading.Portfolio(ctx, other.ID)
	if err != nil || a.CashMinor != 100000_00 || len(hs) != 0 || a.Caps.UsedTodayMinor != 0 {
		t.Fatalf("other's account: %+v %+v %v", a, hs, err)
	}
	if os, err := e.App.Trading.Orders(ctx, other.ID, 10); err != nil || len(os) != 0 {
		t.Fatalf("other's orders: %+v, %v", os, err)
	}
	if _, err := e.App.Trading.Quote(ctx, other.ID, "AAPL"); err == nil {
		t.Fatal("other owner read the first owner's price table")
	}
	if _, err := e.App.Trading.CancelOrder(ctx, other.ID, o.ID); steward.ErrorCode(err) != steward.CodeNotFound {
		t.Fatalf("other cancels the first owner's order: %v, want not found", err)
	}
	// The price reaches the limit: the open order fills; then it cannot be cancelled.
	e.price(t, "AAPL", "149.50")
	if os := e.orders(t); os[0].Status != "filled" || *os[0].FilledPriceMinor != 149_50 {
		t.Fatalf("after the price fell: %+v", os[0])
	}
	if _, err := e.App.Trading.CancelOrder(ctx, e.owner, o.ID); steward.ErrorCode(err) != steward.CodeConflict {
		t.Fatalf("cancel a filled order: %v", err)
	}
}

// TestPaperBooksAddUp is the property: after any series of orders at moving prices, the
// paper account's cash is the starting cash less every filled buy and commission plus every
// filled sale, each position's shares are the filled buys less the filled sales, and neither
// cash nor shares ever go below zero.
func TestPaperBooksAddUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, nil, map[string]string{"STEWARD_TRADING_PAPER_CASH": "20000", "STEWARD_TRADING_ORDER_CAP": "1000000", "STEWARD_TRADING_DAILY_CAP": "10000000"})
	symbols := []string{"AAPL", "MSFT", "BRK.B"}
	run := 0
	property := func(seed uint64) bool {
		run++
		owner, _ := e.DB.Owner(t, "prop-"+uuid.NewString()[:8])
		commission := int64(seed % 300)
		if err := e.App.Trading.SetSettings(ctx, owner.ID, steward.TradingSettings{CommissionMinor: commission}); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 42))
		for _, s := range symbols {
			if _, err := e.App.Trading.SetPrice(ctx, owner.ID, s, dollars(1_00+rng.Int64N(500_00))); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 25 {
			s := symbols[rng.IntN(len(symbols))]
			if rng.IntN(3) == 0 {
				if _, err := e.App.Trading.SetPrice(ctx, owner.ID, s, dollars(1_00+rng.Int64N(500_00))); err != nil {
					t.Fatal(err)
				}
			}
			r := steward.OrderRequest{Symbol: s, Side: []string{"buy", "sell"}[rng.IntN(2)], Qty: 1 + rng.Int64N(40), Type: "market"}
			if rng.IntN(4) == 0 {
				r.Type, r.LimitPriceMinor = "limit", 1_00+rng.Int64N(500_00)
			}
			if _, err := e.App.Trading.PlaceOrder(ctx, owner.ID, uuid.NewString(), r); err != nil {
				t.Fatalf("order %d %+v: %v", i, r, err)
			}
		}
		os, err := e.App.Trading.Orders(ctx, owner.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		cash, shares := int64(20000_00), map[string]int64{}
		filled := 0
		for _, o := range os {
			if o.Status != "filled" {
				continue
			}
			filled++
			value := o.FilledQty * *o.FilledPriceMinor
			if o.Side == "buy" {
				cash -= value + o.CommissionMinor
				shares[o.Symbol] += o.FilledQty
			} else {
				cash += value - o.CommissionMinor
				shares[o.Symbol] -= o.FilledQty
			}
		}
		a, hs, err := e.App.Trading.Portfolio(ctx, owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		held := map[string]int64{}
		for _, h := range hs {
			held[h.Symbol] = h.Qty
			if h.Qty <= 0 || h.CostMinor < 0 {
				t.Errorf("seed %d: position %+v", seed, h)
				return false
			}
		}
		for s, n := range shares {
			if held[s] != n {
				t.Errorf("seed %d: %s held %d, fills say %d", seed, s, held[s], n)
				return false
			}
		}
		if a.CashMinor != cash || a.CashMinor < 0 || filled == 0 {
			t.Errorf("seed %d: cash %d, fills say %d (%d filled)", seed, a.CashMinor, cash, filled)
			return false
		}
		return true
	}
	if err := quick.Check(property, &quick.Config{MaxCount: 6}); err != nil {
		t.Fatal(err)
	}
	if run < 6 {
		t.Fatalf("%d runs", run)
	}
}

func dollars(cents int64) string {
	b, _ := json.Marshal(float64(cents) / 100)
	return string(b)
}

// TestSameCallIDInTwoTurns: a model's call ids are unique only within a turn; two turns whose
// calls are both "o1" place two orders (the key is the turn's and the call's).
func TestSameCallIDInTwoTurns(t *testing.T) {
	t.Parallel()
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("o1", "place_order", `{"symbol":"AAPL","side":"buy","qty":1}`))),
		scripted.Reply(scripted.Text("Bought one.")),
		scripted.Reply(scripted.Calls(scripted.Call("o1", "place_order", `{"symbol":"AAPL","side":"buy","qty":2}`))),
		scripted.Reply(scripted.Text("Bought two.")))
	e := newEnv(t, model, nil)
	e.price(t, "AAPL", "187.20")
	for range 2 {
		if _, err := e.decide(e.start(t, "buy apple"), true); err != nil {
			t.Fatal(err)
		}
	}
	os := e.orders(t)
	if len(os) != 2 || *os[0].Qty != 2 || *os[1].Qty != 1 || os[0].Status != "filled" {
		t.Fatalf("orders: %+v", os)
	}
}

// TestDemoModelTrades: without a model key (the offline demo model) the Trading page's own
// example works — "buy 2 shares of AAPL" waits for a yes and, approved, fills at the owner's
// price; "show my portfolio" and "quote AAPL" answer in words; the answers a person reads.
func TestDemoModelTrades(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	e.price(t, "AAPL", "187.20")
	v := e.start(t, "buy 2 shares of AAPL")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 || v.Pending[0].Tool != "place_order" {
		t.Fatalf("buy: %+v, want place_order waiting", v)
	}
	v, err := e.decide(v, true)
	if err != nil || v.Answer != "Done — buy 2 AAPL, filled at 187.20 USD a share." {
		t.Fatalf("approved: %q, %v", v.Answer, err)
	}
	for msg, want := range map[string]string{
		"show my portfolio": "Your paper account: equity 100000.00 USD, cash 99625.60 USD",
		"quote AAPL":        "AAPL is at 187.20 USD.",
		"my positions":      "• AAPL: 2 shares, worth 374.40 USD",
		// A cap is a refusal to pass on, not arguments to correct (tools.ServiceError).
		"buy 10 shares of AAPL": "I did not place the order to buy AAPL: “place_order could not run: refused by the per-order cap: this order is about 1872.00 USD",
	} {
		if v := e.start(t, msg); !strings.Contains(v.Answer, want) {
			t.Errorf("%q: %q, want %q", msg, v.Answer, want)
		}
	}
}
