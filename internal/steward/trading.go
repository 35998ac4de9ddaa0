package steward

import (
	"errors"
	"math"
	"time"
)

// The trading domain (docs/TRADING.md, docs/ARCHITECTURE.md §20). Money is in integer cents
// of USD; quantities are whole shares.

// TradingSettings is an owner's own trading settings: caps that only tighten the
// deployment's (nil: the deployment's), the symbols orders may name (empty: any), the paper
// broker's commission per order, and whether Alpaca keys are stored (never the keys).
type TradingSettings struct {
	OrderCapMinor   *int64   `json:"order_cap_minor,omitempty"`
	DailyCapMinor   *int64   `json:"daily_cap_minor,omitempty"`
	Symbols         []string `json:"symbols,omitempty"`
	CommissionMinor int64    `json:"commission_minor"`
}

// PaperAccount is the paper broker's account row: its cash and the owner's settings; Keys is
// the owner's Alpaca keys as sealed (nil: none).
type PaperAccount struct {
	CashMinor int64
	Settings  TradingSettings
	Keys      []byte
}

// Position is shares of one symbol held, with what they cost in all.
type Position struct {
	Symbol    string `json:"symbol"`
	Qty       int64  `json:"qty"`
	CostMinor int64  `json:"cost_minor"`
}

// Order is an order Steward placed, with either broker. ClientOrderID is the journaled
// call's id: the broker's idempotency key.
type Order struct {
	ID               string    `json:"id"`
	ClientOrderID    string    `json:"client_order_id"`
	Broker           string    `json:"broker"`
	BrokerOrderID    string    `json:"broker_order_id,omitempty"`
	Symbol           string    `json:"symbol"`
	Side             string    `json:"side"`
	Qty              *int64    `json:"qty,omitempty"`
	NotionalMinor    *int64    `json:"notional_minor,omitempty"`
	Type             string    `json:"type"`
	LimitPriceMinor  *int64    `json:"limit_price_minor,omitempty"`
	TimeInForce      string    `json:"time_in_force"`
	Status           string    `json:"status"`
	EstimateMinor    int64     `json:"estimate_minor"`
	FilledQty        int64     `json:"filled_qty"`
	FilledPriceMinor *int64    `json:"filled_price_minor,omitempty"`
	CommissionMinor  int64     `json:"commission_minor"`
	Reason           string    `json:"reason,omitempty"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// OrderUpdate is what a broker said of an order since it was placed.
type OrderUpdate struct {
	Status           string
	BrokerOrderID    string
	FilledQty        int64
	FilledPriceMinor *int64
	CommissionMinor  int64
	Reason           string
	At               time.Time
}

// Price is a price the owner set in the paper broker's price table.
type Price struct {
	Symbol     string    `json:"symbol"`
	PriceMinor int64     `json:"price_minor"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// ErrOutcomeUnknown is a write whose effect outside Steward may or may not have happened (a
// broker that did not answer in time after the order was sent): the loop journals the call
// "unknown" and never sends it again (docs/ARCHITECTURE.md §2, §20).
var ErrOutcomeUnknown = errors.New("outcome unknown")

// OrderRequest is an order to place, its prices in cents.
type OrderRequest struct {
	Symbol          string
	Side            string // buy or sell
	Qty             int64  // whole shares; or
	NotionalMinor   int64  // dollars' worth (Alpaca only)
	Type            string // market or limit
	LimitPriceMinor int64
	TimeInForce     string // day or gtc
}

// Quote is a symbol's price and where it came from.
type Quote struct {
	Symbol     string    `json:"symbol"`
	PriceMinor int64     `json:"price_minor"`
	Price      string    `json:"price"`
	Source     string    `json:"source"`
	At         time.Time `json:"as_of"`
}

// TradingCaps is what the caps allow and what is left of them today.
type TradingCaps struct {
	OrderCapMinor  int64    `json:"order_cap_minor"`
	DailyCapMinor  int64    `json:"daily_cap_minor"`
	UsedTodayMinor int64    `json:"used_today_minor"`
	LeftTodayMinor int64    `json:"left_today_minor"`
	Symbols        []string `json:"symbols,omitempty"`
}

// TradingAccount is the trading account as the owner sees it.
type TradingAccount struct {
	Broker              string `json:"broker"`
	Currency            string `json:"currency"`
	CashMinor           int64  `json:"cash_minor"`
	PositionsValueMinor int64  `json:"positions_value_minor"`
	EquityMinor         int64  `json:"equity_minor"`
	BuyingPowerMinor    int64  `json:"buying_power_minor"`
	// PnLMinor is the unrealised profit or loss of the positions at their quotes.
	PnLMinor int64 `json:"unrealized_pnl_minor"`
	// Unpriced names positions without a quote (valued at cost).
	Unpriced []string    `json:"unpriced,omitempty"`
	Caps     TradingCaps `json:"caps"`
}

// Holding is a position as the owner sees it: valued at its quote when there is one.
type Holding struct {
	Symbol     string `json:"symbol"`
	Qty        int64  `json:"qty"`
	CostMinor  int64  `json:"cost_minor"`
	PriceMinor *int64 `json:"price_minor,omitempty"`
	ValueMinor int64  `json:"market_value_minor"`
	PnLMinor   int64  `json:"unrealized_pnl_minor"`
}

// CentsOf reads an amount of dollars a model gave as a JSON number into cents: false for
// more than two decimals, zero or less, or more than ten million dollars.
func CentsOf(v float64) (int64, bool) {
	c := math.Round(v * 100)
	if math.IsNaN(v) || math.Abs(v*100-c) > 1e-6 || c <= 0 || c > 1_000_000_000 {
		return 0, false
	}
	return int64(c), true
}
