// Package tradingtools is the trading toolset (docs/TRADING.md, docs/ARCHITECTURE.md §20):
// get_account, get_positions, get_quote and list_orders (reads) and place_order and
// cancel_order (writes), over the owner's brokerage (internal/trading, through the Broker
// port). Both writes are External — journaled executing before they run, run once, never on
// an "always" rule — and place_order's Preview checks the caps at the current quote before
// anyone is asked: a refused order never reaches the owner, and its card says the estimated
// notional and the caps left today.
package tradingtools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Broker is the owner's brokerage (internal/trading.Service implements it).
type Broker interface {
	Account(ctx context.Context, ownerID uuid.UUID) (steward.TradingAccount, error)
	Positions(ctx context.Context, ownerID uuid.UUID) ([]steward.Holding, error)
	Quote(ctx context.Context, ownerID uuid.UUID, symbol string) (steward.Quote, error)
	Orders(ctx context.Context, ownerID uuid.UUID, limit int) ([]steward.Order, error)
	Preview(ctx context.Context, ownerID uuid.UUID, r steward.OrderRequest) (string, error)
	Estimate(ctx context.Context, ownerID uuid.UUID, r steward.OrderRequest) (*steward.Money, error)
	PlaceOrder(ctx context.Context, ownerID uuid.UUID, clientID string, r steward.OrderRequest) (steward.Order, error)
	CancelOrder(ctx context.Context, ownerID uuid.UUID, id string) (steward.Order, error)
}

// Tools returns the trading tools over b. With a broker outside (Alpaca: remote says so)
// every tool's output is a stranger's text — a rejection's reason, a symbol's name — and
// taints the turn that reads it (§3); the paper broker's is the owner's own data.
func Tools(b Broker, remote bool) []tools.Tool {
	place := tools.WithPreview(placeOrderTool(b), func(ctx context.Context, env tools.Env, a placeOrderArgs) (string, error) {
		s, err := b.Preview(ctx, env.OwnerID, a.request())
		return s, tools.ServiceError(ctx, "", err) // the service's words name the argument at fault
	})
	// The order's notional at the quote, for a household policy's minimum.
	place.Estimate = func(ctx context.Context, env tools.Env, raw json.RawMessage) (*steward.Money, error) {
		var a placeOrderArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		if err := a.Check(); err != nil {
			return nil, err
		}
		return b.Estimate(ctx, env.OwnerID, a.request())
	}
	out := []tools.Tool{getAccountTool(b), getPositionsTool(b), getQuoteTool(b), listOrdersTool(b), place, cancelOrderTool(b)}
	for i := range out {
		out[i].Untrusted = remote
		if out[i].Kind == steward.KindWrite {
			// An order leaves Postgres: journaled executing first, never run twice, and only the
			// owner's yes runs it (no rule, no auto mode).
			out[i].External, out[i].Rules = true, steward.OnlyOwnerYes
		}
	}
	return out
}

func money(cents int64) string { return tools.Money(cents, "USD") }

type noArgs struct{}

func getAccountTool(b Broker) tools.Tool {
	return tools.Say(tools.New("get_account",
		"Read the owner's brokerage account: cash, the positions' market value, equity, buying power, unrealised P&L, "+
			"and the caps (per order, per day, what is left today, the allowed symbols). Amounts are in cents (USD).",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, _ noArgs) (any, error) {
			a, err := b.Account(ctx, env.OwnerID)
			return a, tools.ServiceError(ctx, "", err)
		}),
		func(noArgs) string { return "Read the trading account" },
		func(_ noArgs, a steward.TradingAccount) string {
			return fmt.Sprintf("Equity %s, cash %s; %s left today", money(a.EquityMinor), money(a.CashMinor), money(a.Caps.LeftTodayMinor))
		})
}

func getPositionsTool(b Broker) tools.Tool {
	return tools.Say(tools.New("get_positions",
		"List the owner's positions: symbol, shares, cost, price, market value and unrealised P&L (cents, USD).",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, _ noArgs) (any, error) {
			hs, err := b.Positions(ctx, env.OwnerID)
			if hs == nil {
				hs = []steward.Holding{}
			}
			return map[string]any{"positions": hs}, tools.ServiceError(ctx, "", err)
		}),
		func(noArgs) string { return "List the positions" },
		func(_ noArgs, o struct {
			Positions []steward.Holding `json:"positions"`
		}) string {
			return tools.Count(len(o.Positions), "position")
		})
}

type quoteArgs struct {
	Symbol string `json:"symbol" jsonschema:"the ticker symbol, such as AAPL"`
}

func getQuoteTool(b Broker) tools.Tool {
	return tools.Say(tools.New("get_quote",
		"Read a symbol's current price (cents, USD) and where it comes from. Never guess a price: without a quote no order can be placed.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a quoteArgs) (any, error) {
			q, err := b.Quote(ctx, env.OwnerID, a.Symbol)
			return q, tools.ServiceError(ctx, "symbol", err)
		}),
		func(a quoteArgs) string { return "Quote " + tools.Clip(strings.ToUpper(a.Symbol), 12) },
		func(a quoteArgs, q steward.Quote) string { return q.Symbol + " at " + money(q.PriceMinor) })
}

type listOrdersArgs struct {
	Limit int `json:"limit,omitempty" jsonschema:"the most orders to return, newest first (default 20, at most 100)"`
}

func (a *listOrdersArgs) Check() error { return tools.OrDefaultIn("limit", &a.Limit, 20, 100) }

func listOrdersTool(b Broker) tools.Tool {
	return tools.Say(tools.New("list_orders",
		"List the owner's orders, newest first, with their id (for cancel_order), status and fills. Status unknown means "+
			"the broker did not answer when it was sent: it may or may not have been placed and is never sent again.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a listOrdersArgs) (any, error) {
			os, err := b.Orders(ctx, env.OwnerID, a.Limit)
			if os == nil {
				os = []steward.Order{}
			}
			return map[string]any{"orders": os}, tools.ServiceError(ctx, "", err)
		}),
		func(listOrdersArgs) string { return "List the orders" },
		func(_ listOrdersArgs, o struct {
			Orders []steward.Order `json:"orders"`
		}) string {
			return tools.Count(len(o.Orders), "order")
		})
}

// placeOrderArgs are the arguments of place_order.
type placeOrderArgs struct {
	Symbol      string  `json:"symbol" jsonschema:"the ticker symbol, such as AAPL"`
	Side        string  `json:"side" enum:"buy,sell"`
	Qty         int64   `json:"qty,omitempty" jsonschema:"whole shares; give qty or notional, not both"`
	Notional    float64 `json:"notional,omitempty" jsonschema:"dollars' worth to trade (Alpaca only, a market order for the day); give qty or notional"`
	Type        string  `json:"type,omitempty" enum:"market,limit" jsonschema:"market (the default) or limit"`
	LimitPrice  float64 `json:"limit_price,omitempty" jsonschema:"a limit order's price in dollars, such as 185.50"`
	TimeInForce string  `json:"time_in_force,omitempty" enum:"day,gtc" jsonschema:"day (the default) or gtc (good till cancelled)"`

	notional, limit int64
}

// Check reads the dollar amounts into cents.
func (a *placeOrderArgs) Check() error {
	var ok bool
	if a.Notional != 0 {
		if a.notional, ok = steward.CentsOf(a.Notional); !ok {
			return tools.ArgErrorf("notional", "must be dollars above 0 with at most two decimals")
		}
	}
	if a.LimitPrice != 0 {
		if a.limit, ok = steward.CentsOf(a.LimitPrice); !ok {
			return tools.ArgErrorf("limit_price", "must be dollars above 0 with at most two decimals")
		}
	}
	if (a.Qty > 0) == (a.notional > 0) {
		return tools.ArgErrorf("qty", "give either qty (whole shares) or notional (dollars)")
	}
	return nil
}

func (a placeOrderArgs) request() steward.OrderRequest {
	return steward.OrderRequest{Symbol: a.Symbol, Side: a.Side, Qty: a.Qty, NotionalMinor: a.notional, Type: a.Type,
		LimitPriceMinor: a.limit, TimeInForce: a.TimeInForce}
}

func placeOrderTool(b Broker) tools.Tool {
	return tools.Say(tools.New("place_order",
		"Place an order with the owner's broker (asks the owner first; the per-order and daily caps and the allowed symbols are "+
			"checked at the current quote before that, and a refusal names the cap). Read get_quote and get_account first.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a placeOrderArgs) (any, error) {
			o, err := b.PlaceOrder(ctx, env.OwnerID, ClientOrderID(env), a.request())
			if err != nil {
				return nil, tools.ServiceError(ctx, "", err) // the service's words name the argument at fault
			}
			return map[string]any{"order": o}, nil
		}), sayPlaceOrder, saidPlaceOrder)
}

// ClientOrderID is a call's idempotency key at the broker: its turn and its journaled id (a
// model's call ids are unique only within a turn), within Alpaca's 128 characters.
func ClientOrderID(env tools.Env) string {
	id := env.CallID
	if len(id) > 64 {
		sum := sha256.Sum256([]byte(id))
		id = hex.EncodeToString(sum[:16])
	}
	return env.TurnID.String() + "/" + id
}

func sayPlaceOrder(a placeOrderArgs) string {
	side := "Buy"
	if a.Side == "sell" {
		side = "Sell"
	}
	what := fmt.Sprintf("%d %s", a.Qty, tools.Clip(strings.ToUpper(a.Symbol), 12))
	if a.Qty == 0 {
		if c, ok := steward.CentsOf(a.Notional); ok {
			what = money(c) + " of " + tools.Clip(strings.ToUpper(a.Symbol), 12)
		}
	}
	if c, ok := steward.CentsOf(a.LimitPrice); ok && a.Type == "limit" {
		return side + " " + what + ", limit " + money(c)
	}
	return side + " " + what + " at market"
}

func saidPlaceOrder(_ placeOrderArgs, o struct {
	Order steward.Order `json:"order"`
}) string {
	s := "Order " + o.Order.Status
	if o.Order.FilledPriceMinor != nil {
		s += fmt.Sprintf(": %d at %s", o.Order.FilledQty, money(*o.Order.FilledPriceMinor))
	}
	if o.Order.Reason != "" {
		s += " (" + tools.Clip(o.Order.Reason, 80) + ")"
	}
	return s
}

type cancelOrderArgs struct {
	ID string `json:"id" jsonschema:"the order's id, from list_orders"`
}

func cancelOrderTool(b Broker) tools.Tool {
	return tools.Say(tools.New("cancel_order",
		"Cancel an open order by its id from list_orders (asks the owner first).",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a cancelOrderArgs) (any, error) {
			o, err := b.CancelOrder(ctx, env.OwnerID, strings.TrimSpace(a.ID))
			if err != nil {
				return nil, tools.ServiceError(ctx, "id", err)
			}
			return map[string]any{"order": o}, nil
		}),
		func(a cancelOrderArgs) string { return "Cancel order " + tools.Clip(a.ID, 40) },
		func(_ cancelOrderArgs, o struct {
			Order steward.Order `json:"order"`
		}) string {
			return "Order " + o.Order.Status
		})
}
