package tradingtools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
	"github.com/stewardhq/steward/internal/tools/tradingtools"
	"github.com/stewardhq/steward/internal/trading"
)

// desk is one owner's paper brokerage over a real database: 10,000 USD to start, caps of
// 1,000 USD an order and 5,000 USD a day, AAPL at 187.20 in the price table.
type desk struct {
	svc   *trading.Service
	owner uuid.UUID
	reg   *tools.Registry
	turn  uuid.UUID
}

var now = time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)

func newDesk(t *testing.T, d testdb.Opened, name string) desk {
	t.Helper()
	o, _ := d.Owner(t, name)
	svc := &trading.Service{Store: d.Store, Now: func() time.Time { return now },
		Config: trading.Config{Mode: trading.Paper, OrderCapMinor: 1000_00, DailyCapMinor: 5000_00, StartingCashMinor: 10000_00}}
	if _, err := svc.SetPrice(context.Background(), o.ID, "AAPL", "187.20"); err != nil {
		t.Fatal(err)
	}
	return desk{svc: svc, owner: o.ID, reg: registry(t, svc, false), turn: uuid.New()}
}

func registry(t *testing.T, b tradingtools.Broker, remote bool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(tradingtools.Tools(b, remote)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func (d desk) env(callID string) tools.Env {
	return tools.Env{OwnerID: d.owner, TurnID: d.turn, CallID: callID, Now: func() time.Time { return now }}
}

// run calls a trading tool as call callID of the desk's turn and decodes its output into v.
func (d desk) run(t *testing.T, reg *tools.Registry, callID, name, args string, v any) error {
	t.Helper()
	out, err := reg.Run(context.Background(), d.env(callID), name, json.RawMessage(args))
	if err == nil && v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("%s output %s: %v", name, out, err)
		}
	}
	return err
}

func (d desk) orders(t *testing.T) []steward.Order {
	t.Helper()
	os, err := d.svc.Orders(context.Background(), d.owner, 100)
	if err != nil {
		t.Fatal(err)
	}
	return os
}

// noOrders is the owner's real brokerage with its writes refused: a tool declared a read must
// run over it, and one declared a write must be refused by it.
type noOrders struct{ tradingtools.Broker }

var errWrote = errors.New("an order reached the broker")

func (noOrders) PlaceOrder(context.Context, uuid.UUID, string, steward.OrderRequest) (steward.Order, error) {
	return steward.Order{}, errWrote
}

func (noOrders) CancelOrder(context.Context, uuid.UUID, string) (steward.Order, error) {
	return steward.Order{}, errWrote
}

// TestTradingTools runs the trading tools' tests over one real database, an owner each.
func TestTradingTools(t *testing.T) {
	d := testdb.Open(t, 4)
	for name, test := range map[string]func(*testing.T, desk){
		"AreWhatTheyDeclare": areWhatTheyDeclare,
		"TradeOnce":          tradeOnce,
		"RefuseOverTheCaps":  refuseOverTheCaps,
		"RefuseBadArguments": refuseBadArguments,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newDesk(t, d, name))
		})
	}
}

// areWhatTheyDeclare: the four reads are reads (untrusted when the broker is outside Steward:
// its words are a stranger's), the two writes leave Postgres and only the owner's yes runs
// them, and place_order previews and estimates before the gate. The declaration is true of
// what each does: every read runs over a broker that refuses orders, every write is stopped
// by that refusal.
func areWhatTheyDeclare(t *testing.T, d desk) {
	want := map[string]string{
		"get_account":   "read",
		"get_positions": "read",
		"get_quote":     "read",
		"list_orders":   "read",
		"place_order":   "write external only-owner-yes preview estimate",
		"cancel_order":  "write external only-owner-yes",
	}
	args := map[string]string{"get_quote": `{"symbol":"AAPL"}`, "place_order": `{"symbol":"AAPL","side":"buy","qty":1}`,
		"cancel_order": `{"id":"` + uuid.NewString() + `"}`}
	guarded := registry(t, noOrders{d.svc}, false)
	for _, remote := range []bool{false, true} {
		reg := registry(t, d.svc, remote)
		if names := reg.Names(); len(names) != len(want) {
			t.Fatalf("the trading tools are %q; want the %d of this table", names, len(want))
		}
		for name, policy := range want {
			tool, _ := reg.Get(name)
			if remote && tool.Kind == steward.KindRead {
				policy += " untrusted"
			} else if remote {
				policy = strings.Replace(policy, "only-owner-yes", "only-owner-yes untrusted", 1)
			}
			if got := toolstest.Policy(tool); got != policy {
				t.Errorf("%s (remote %v) declares %q; want %q", name, remote, got, policy)
			}
			if tool.AlwaysOffered() && tool.Kind == steward.KindWrite {
				t.Errorf("%s offers an \"always\" rule: an order is the owner's yes every time", name)
			}
		}
	}
	for name := range want {
		a := args[name]
		if a == "" {
			a = `{}`
		}
		tool, _ := guarded.Get(name)
		err := d.run(t, guarded, "c-"+name, name, a, nil)
		switch {
		case tool.Kind == steward.KindRead && err != nil:
			t.Errorf("%s, a read, failed over a broker that refuses orders: %v", name, err)
		case tool.Kind == steward.KindWrite && !errors.Is(err, errWrote):
			t.Errorf("%s, a write, = %v over a broker that refuses orders; want stopped by the refusal", name, err)
		}
	}
	if os := d.orders(t); len(os) != 0 {
		t.Errorf("the reads placed orders: %+v", os)
	}
}

// tradeOnce: quote, preview, buy, see the position; an order's call run twice places one
// order; a limit order below the market stays open and can be cancelled once.
func tradeOnce(t *testing.T, d desk) {
	var q steward.Quote
	if err := d.run(t, d.reg, "q1", "get_quote", `{"symbol":" aapl "}`, &q); err != nil || q.Symbol != "AAPL" || q.PriceMinor != 187_20 {
		t.Fatalf("get_quote = %+v, %v; want AAPL at 18720 cents", q, err)
	}
	place, _ := d.reg.Get("place_order")
	buy := json.RawMessage(`{"symbol":"AAPL","side":"buy","qty":5}`)
	card, err := place.Preview(context.Background(), d.env("o1"), buy)
	if err != nil {
		t.Fatal(err)
	}
	for _, words := range []string{"Buy 5 shares of AAPL", "about 936.00 USD", "187.20 USD a share", "left today"} {
		if !strings.Contains(card, words) {
			t.Errorf("the approval card %q does not say %q", card, words)
		}
	}
	if est, err := place.Estimate(context.Background(), d.env("o1"), buy); err != nil || est == nil || est.Minor != 936_00 || est.Currency != "USD" {
		t.Errorf("estimate = %+v, %v; want 93600 USD", est, err)
	}
	if len(d.orders(t)) != 0 {
		t.Fatal("the preview placed an order")
	}

	var placed, again struct {
		Order steward.Order `json:"order"`
	}
	if err := d.run(t, d.reg, "o1", "place_order", string(buy), &placed); err != nil {
		t.Fatal(err)
	}
	if placed.Order.Status != "filled" || placed.Order.FilledQty != 5 || placed.Order.ClientOrderID != d.turn.String()+"/o1" {
		t.Errorf("placed %+v; want 5 filled, keyed by the turn and call", placed.Order)
	}
	if err := d.run(t, d.reg, "o1", "place_order", string(buy), &again); err != nil || again.Order.ID != placed.Order.ID {
		t.Errorf("the same call again = %+v, %v; want the first order %s", again.Order, err, placed.Order.ID)
	}
	if got := d.reg.SayResult("place_order", buy, mustJSON(t, placed), false); got != "Order filled: 5 at $187.20" {
		t.Errorf("place_order's result reads %q", got)
	}

	var positions struct {
		Positions []steward.Holding `json:"positions"`
	}
	if err := d.run(t, d.reg, "p1", "get_positions", `{}`, &positions); err != nil || len(positions.Positions) != 1 ||
		positions.Positions[0].Symbol != "AAPL" || positions.Positions[0].Qty != 5 {
		t.Errorf("positions = %+v, %v; want 5 AAPL", positions, err)
	}
	var account steward.TradingAccount
	if err := d.run(t, d.reg, "a1", "get_account", `{}`, &account); err != nil || account.CashMinor != 10000_00-936_00 {
		t.Errorf("account = %+v, %v; want 9064.00 USD cash", account, err)
	}

	var limit struct {
		Order steward.Order `json:"order"`
	}
	if err := d.run(t, d.reg, "o2", "place_order", `{"symbol":"AAPL","side":"buy","qty":1,"type":"limit","limit_price":150.5}`, &limit); err != nil || limit.Order.Status != "new" {
		t.Fatalf("a limit order below the market = %+v, %v; want it open", limit.Order, err)
	}
	var cancelled struct {
		Order steward.Order `json:"order"`
	}
	if err := d.run(t, d.reg, "c1", "cancel_order", `{"id":" `+limit.Order.ID+` "}`, &cancelled); err != nil || cancelled.Order.Status != "canceled" {
		t.Errorf("cancel = %+v, %v; want canceled", cancelled.Order, err)
	}
	err = d.run(t, d.reg, "c2", "cancel_order", `{"id":"`+limit.Order.ID+`"}`, nil)
	if r, ok := errors.AsType[*tools.Refusal](err); !ok || !strings.Contains(r.Error(), "only an open order") {
		t.Errorf("cancelling it again = %v; want a refusal saying only an open order can be cancelled", err)
	}
	var listed struct {
		Orders []steward.Order `json:"orders"`
	}
	if err := d.run(t, d.reg, "l1", "list_orders", `{}`, &listed); err != nil || len(listed.Orders) != 2 {
		t.Errorf("list_orders = %+v, %v; want the 2 orders", listed, err)
	}
}

// refuseOverTheCaps: an order over the per-order cap is refused at its preview, naming the
// cap, before anyone is asked — and refused again if it is run all the same; no quote, no
// order. Neither leaves an order behind.
func refuseOverTheCaps(t *testing.T, d desk) {
	place, _ := d.reg.Get("place_order")
	big := json.RawMessage(`{"symbol":"AAPL","side":"buy","qty":100}`)
	if card, err := place.Preview(context.Background(), d.env("o1"), big); !tools.ForModel(err) || !strings.Contains(err.Error(), "1000.00 USD") {
		t.Errorf("preview of 18,720 USD against a 1,000 USD cap = %q, %v; want a refusal the model reads, naming the cap", card, err)
	}
	if err := d.run(t, d.reg, "o1", "place_order", string(big), nil); !tools.ForModel(err) || !strings.Contains(err.Error(), "1000.00 USD") {
		t.Errorf("place_order over the cap = %v; want a refusal naming the cap", err)
	}
	err := d.run(t, d.reg, "o2", "place_order", `{"symbol":"MSFT","side":"buy","qty":1}`, nil)
	if _, ok := errors.AsType[*tools.Refusal](err); !ok || !strings.Contains(err.Error(), "no quote for MSFT") {
		t.Errorf("an order with no quote = %v; want a refusal saying there is no quote", err)
	}
	if os := d.orders(t); len(os) != 0 {
		t.Errorf("refused orders left %+v", os)
	}
}

// refuseBadArguments: a mistake in the arguments is an *ArgError the model can correct,
// naming the argument at fault, and places nothing.
func refuseBadArguments(t *testing.T, d desk) {
	for _, c := range []struct{ tool, args, field, says string }{
		{"place_order", `{"symbol":"AAPL","side":"buy"}`, "qty", "either qty"},
		{"place_order", `{"symbol":"AAPL","side":"buy","qty":1,"notional":100}`, "qty", "either qty"},
		{"place_order", `{"symbol":"AAPL","side":"buy","notional":0.001}`, "notional", "two decimals"},
		{"place_order", `{"symbol":"AAPL","side":"buy","qty":1,"type":"limit","limit_price":-3}`, "limit_price", "above 0"},
		{"place_order", `{"symbol":"AAPL","side":"hold","qty":1}`, "", "side"},
		{"place_order", `{"symbol":"AAPL","side":"buy","qty":1,"type":"stop"}`, "", "type"},
		{"place_order", `{"symbol":"AAPL","side":"buy","qty":-2}`, "qty", "either qty"},
		{"place_order", `{"symbol":"AAPL","side":"buy","qty":100000000}`, "", "qty must be a whole number"},
		{"place_order", `{"symbol":"$$$","side":"buy","qty":1}`, "", "not a ticker symbol"},
		{"place_order", `{"side":"buy","qty":1}`, "", "symbol"},
		{"get_quote", `{"symbol":"not a symbol"}`, "symbol", "not a ticker symbol"},
		{"list_orders", `{"limit":101}`, "limit", "100"},
		{"cancel_order", `{}`, "", "id"},
		{"get_account", `{"all":true}`, "", "all"},
	} {
		err := d.run(t, d.reg, "x", c.tool, c.args, nil)
		ae, ok := errors.AsType[*tools.ArgError](err)
		if !ok {
			t.Errorf("%s(%s) = %v; want an *ArgError", c.tool, c.args, err)
			continue
		}
		if ae.Field != c.field || !strings.Contains(ae.Error(), c.says) {
			t.Errorf("%s(%s) = %q (field %q); want field %q and %q", c.tool, c.args, ae, ae.Field, c.field, c.says)
		}
	}
	if os := d.orders(t); len(os) != 0 {
		t.Errorf("refused arguments placed %+v", os)
	}
	err := d.run(t, d.reg, "x", "cancel_order", `{"id":"`+uuid.NewString()+`"}`, nil)
	if _, ok := errors.AsType[*tools.Refusal](err); !ok || !strings.Contains(err.Error(), "list_orders gives the ids") {
		t.Errorf("cancelling an unknown order = %v; want a refusal pointing at list_orders", err)
	}
}

// TestClientOrderID: a call's key at the broker is its turn and call id — the same call the
// same key, another turn's call of the same id another — within Alpaca's 128 characters
// however long the model's call id.
func TestClientOrderID(t *testing.T) {
	turn := uuid.New()
	short := tradingtools.ClientOrderID(tools.Env{TurnID: turn, CallID: "o1"})
	if short != turn.String()+"/o1" {
		t.Errorf("key %q; want the turn and the call id", short)
	}
	if other := tradingtools.ClientOrderID(tools.Env{TurnID: uuid.New(), CallID: "o1"}); other == short {
		t.Error("two turns' calls o1 share a key")
	}
	long := strings.Repeat("x", 500)
	a := tradingtools.ClientOrderID(tools.Env{TurnID: turn, CallID: long})
	b := tradingtools.ClientOrderID(tools.Env{TurnID: turn, CallID: long + "y"})
	if len(a) > 128 || a == b || a != tradingtools.ClientOrderID(tools.Env{TurnID: turn, CallID: long}) {
		t.Errorf("long call ids: keys %q and %q; want each at most 128 characters, stable and distinct", a, b)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
