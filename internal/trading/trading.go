// Package trading is the owner's brokerage (docs/TRADING.md, docs/ARCHITECTURE.md §20): a
// paper broker in PostgreSQL per owner (cash, positions, orders, fills at a quote from the
// owner's price table) or Alpaca (Trading API v2, through the egress guard), behind one
// service that the trading tools (internal/tools/tradingtools), the web app and the CLI call.
// Caps are code, before the gate and before anyone is asked: a per-order and a daily notional
// cap (the deployment's, tightened by the owner's own), an optional symbol allow-list, and no
// quote means no order. The journaled call id is the order's client_order_id: one call is one
// order, and a call retried after a crash looks its order up instead of placing another.
package trading

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// The modes of STEWARD_TRADING.
const (
	Off    = "off"
	Paper  = "paper"
	Alpaca = "alpaca"
)

// Config is the deployment's trading settings (internal/config).
type Config struct {
	// Mode is off, paper or alpaca.
	Mode string
	// OrderCapMinor and DailyCapMinor are the notional caps in cents: an owner's own may
	// only be lower.
	OrderCapMinor, DailyCapMinor int64
	// StartingCashMinor is a new paper account's cash.
	StartingCashMinor int64
}

// Service is the owner's brokerage.
type Service struct {
	Store  *store.Store
	Sealer *secret.Sealer
	Config Config
	// Alpaca is the Alpaca client (mode alpaca).
	Alpaca *AlpacaClient
	// Now is the clock (nil: the system clock).
	Now steward.Clock
}

// The views the tools, the web app and the CLI share are the leaf's (internal/steward).
type (
	OrderRequest = steward.OrderRequest
	Quote        = steward.Quote
	Caps         = steward.TradingCaps
	Account      = steward.TradingAccount
	Holding      = steward.Holding
)

var symbolPattern = regexp.MustCompile(`^[A-Z][A-Z0-9.]{0,9}$`)

func invalid(format string, a ...any) error { return steward.Errorf(steward.CodeInvalid, format, a...) }

// refused is an order the caps or a missing quote stop: nothing wrong with how it was asked
// (the model reads it as a refusal to tell the owner, tools.ServiceError), but the state of
// the account or the prices does not allow it.
func refused(format string, a ...any) error {
	return steward.Errorf(steward.CodeConflict, format, a...)
}

// CheckSymbol upper-cases and checks a ticker symbol.
func CheckSymbol(s string) (string, error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if !symbolPattern.MatchString(s) {
		return "", invalid("%q is not a ticker symbol (letters, digits and dots, such as AAPL or BRK.B)", s)
	}
	return s, nil
}

// Check normalises and checks an order for mode.
func CheckOrder(r *OrderRequest, mode string) error {
	var err error
	if r.Symbol, err = CheckSymbol(r.Symbol); err != nil {
		return err
	}
	r.Side, r.Type, r.TimeInForce = strings.ToLower(r.Side), strings.ToLower(r.Type), strings.ToLower(r.TimeInForce)
	if r.Type == "" {
		r.Type = "market"
	}
	if r.TimeInForce == "" {
		r.TimeInForce = "day"
	}
	switch {
	case r.Side != "buy" && r.Side != "sell":
		return invalid("side must be buy or sell")
	case r.Type != "market" && r.Type != "limit":
		return invalid("type must be market or limit")
	case r.TimeInForce != "day" && r.TimeInForce != "gtc":
		return invalid("time_in_force must be day or gtc")
	}
	return checkAmount(r, mode)
}

// checkAmount checks what an order buys or sells: whole shares or dollars (notional), and a
// limit price exactly when it is a limit order.
func checkAmount(r *OrderRequest, mode string) error {
	switch {
	case (r.Qty > 0) == (r.NotionalMinor > 0):
		return invalid("give either qty (whole shares) or notional (dollars), not both")
	case r.Qty < 0 || r.Qty > MaxQty:
		return invalid("qty must be a whole number of shares from 1 to %d", MaxQty)
	case r.Type == "limit" && r.LimitPriceMinor <= 0:
		return invalid("a limit order needs limit_price")
	case r.Type == "market" && r.LimitPriceMinor > 0:
		return invalid("limit_price is only for a limit order")
	case r.NotionalMinor > 0 && mode == Paper:
		return invalid("the paper broker trades whole shares: give qty instead of notional")
	case r.NotionalMinor > 0 && (r.Type != "market" || r.TimeInForce != "day"):
		return invalid("an order by notional must be a market order for the day")
	}
	return nil
}

// estimate is the order's notional at the quote: a limit order's at its limit when that is
// higher (a buy may cost up to it).
func estimate(r OrderRequest, quote int64) int64 {
	if r.NotionalMinor > 0 {
		return r.NotionalMinor
	}
	price := quote
	if r.Type == "limit" && r.LimitPriceMinor > price {
		price = r.LimitPriceMinor
	}
	return r.Qty * price
}

// Describe words an order for a person: Buy 10 AAPL at market.
func Describe(r OrderRequest) string {
	what := fmt.Sprintf("%d %s", r.Qty, r.Symbol)
	if r.Qty == 1 {
		what = "1 share of " + r.Symbol
	} else if r.Qty > 1 {
		what = fmt.Sprintf("%d shares of %s", r.Qty, r.Symbol)
	}
	if r.NotionalMinor > 0 {
		what = Money(r.NotionalMinor) + " of " + r.Symbol
	}
	how := "at market"
	if r.Type == "limit" {
		how = "limit " + Money(r.LimitPriceMinor)
	}
	tif := "for the day"
	if r.TimeInForce == "gtc" {
		tif = "good till cancelled"
	}
	return fmt.Sprintf("%s %s %s, %s", strings.ToUpper(r.Side[:1])+r.Side[1:], what, how, tif)
}

// On reports whether trading is configured.
func (s *Service) On() bool { return s != nil && (s.Config.Mode == Paper || s.Config.Mode == Alpaca) }

func (s *Service) on() error {
	if !s.On() {
		return steward.Errorf(steward.CodeNotFound, "trading is off on this server (STEWARD_TRADING=paper or alpaca turns it on)")
	}
	return nil
}

func (s *Service) broker() string { return s.Config.Mode }

// dayStart is the start of the current UTC day: the daily cap's window.
func (s *Service) dayStart() time.Time {
	now := s.Now.Now().UTC()
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
}

// caps reads the caps in force for the owner and what is used of them today, in tx.
func (s *Service) caps(ctx context.Context, tx *store.Tx, set steward.TradingSettings) (Caps, error) {
	c := Caps{OrderCapMinor: s.Config.OrderCapMinor, DailyCapMinor: s.Config.DailyCapMinor, Symbols: set.Symbols}
	if set.OrderCapMinor != nil && *set.OrderCapMinor < c.OrderCapMinor {
		c.OrderCapMinor = *set.OrderCapMinor
	}
	if set.DailyCapMinor != nil && *set.DailyCapMinor < c.DailyCapMinor {
		c.DailyCapMinor = *set.DailyCapMinor
	}
	used, err := tx.TradeOrders.NotionalSince(ctx, s.dayStart())
	if err != nil {
		return Caps{}, err
	}
	c.UsedTodayMinor, c.LeftTodayMinor = used, max(0, c.DailyCapMinor-used)
	return c, nil
}

// refuse is the caps' verdict on an order of estimate est: nil, or a refusal naming the cap.
func refuse(c Caps, symbol string, est int64) error {
	if len(c.Symbols) > 0 && !slices.Contains(c.Symbols, symbol) {
		return refused("refused by the symbol allow-list: %s is not one of %s", symbol, strings.Join(c.Symbols, ", "))
	}
	if est > c.OrderCapMinor {
		return refused("refused by the per-order cap: this order is about %s, over the per-order cap of %s", Money(est), Money(c.OrderCapMinor))
	}
	if est > c.LeftTodayMinor {
		return refused("refused by the daily cap: this order is about %s and only %s of the daily cap of %s is left today",
			Money(est), Money(c.LeftTodayMinor), Money(c.DailyCapMinor))
	}
	return nil
}

// Words says what the caps leave today.
func CapsWords(c Caps) string {
	s := fmt.Sprintf("Caps: %s per order; %s of %s left today", Money(c.OrderCapMinor), Money(c.LeftTodayMinor), Money(c.DailyCapMinor))
	if len(c.Symbols) > 0 {
		s += "; only " + strings.Join(c.Symbols, ", ")
	}
	return s + "."
}

// Quote is a symbol's price: from Alpaca's market data when configured, else from the
// owner's price table. None is an error in words: no quote, no order.
func (s *Service) Quote(ctx context.Context, ownerID uuid.UUID, symbol string) (Quote, error) {
	if err := s.on(); err != nil {
		return Quote{}, err
	}
	symbol, err := CheckSymbol(symbol)
	if err != nil {
		return Quote{}, err
	}
	if s.Config.Mode == Alpaca && s.Alpaca.DataURL != "" {
		keys, err := s.keys(ctx, ownerID)
		if err != nil {
			return Quote{}, err
		}
		return s.Alpaca.Quote(ctx, keys, symbol)
	}
	var p steward.Price
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		p, err = tx.Prices.Get(ctx, symbol)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return Quote{}, refused("no quote for %s, so no order: set one with `steward trading price %s 187.20` or on the Trading page", symbol, symbol)
	}
	if err != nil {
		return Quote{}, err
	}
	return Quote{Symbol: symbol, PriceMinor: p.PriceMinor, Price: Money(p.PriceMinor), Source: "your price table", At: p.UpdatedAt}, nil
}

// SetPrice sets a symbol's price in the owner's price table; open paper limit orders it
// makes marketable fill at it.
func (s *Service) SetPrice(ctx context.Context, ownerID uuid.UUID, symbol, price string) (steward.Price, error) {
	if err := s.on(); err != nil {
		return steward.Price{}, err
	}
	sym, err := CheckSymbol(symbol)
	if err != nil {
		return steward.Price{}, err
	}
	cents, err := ParseDollars(price)
	if err != nil {
		return steward.Price{}, err
	}
	p := steward.Price{Symbol: sym, PriceMinor: cents, UpdatedAt: s.Now.Now()}
	return p, s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if err := tx.Prices.Set(ctx, p); err != nil {
			return err
		}
		if s.Config.Mode != Paper {
			return nil
		}
		acct, err := tx.Trading.Account(ctx, s.Config.StartingCashMinor, true)
		if err != nil {
			return err
		}
		return s.fillOpen(ctx, tx, &acct, p)
	})
}

// Prices lists the owner's price table.
func (s *Service) Prices(ctx context.Context, ownerID uuid.UUID) ([]steward.Price, error) {
	var out []steward.Price
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		out, err = tx.Prices.List(ctx)
		return err
	})
	return out, err
}

// Preview checks an order against the caps at the current quote, before anyone is asked,
// and words it for the approval card: side, quantity, symbol, the estimated notional at the
// quote and the caps left today. A refusal names the cap; no quote refuses it.
func (s *Service) Preview(ctx context.Context, ownerID uuid.UUID, r OrderRequest) (string, error) {
	if err := s.on(); err != nil {
		return "", err
	}
	if err := CheckOrder(&r, s.Config.Mode); err != nil {
		return "", err
	}
	q, err := s.Quote(ctx, ownerID, r.Symbol)
	if err != nil {
		return "", err
	}
	est := estimate(r, q.PriceMinor)
	var c Caps
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		acct, err := tx.Trading.Account(ctx, s.Config.StartingCashMinor, false)
		if err != nil {
			return err
		}
		c, err = s.caps(ctx, tx, acct.Settings)
		return err
	})
	if err != nil {
		return "", err
	}
	if err := refuse(c, r.Symbol, est); err != nil {
		return "", err
	}
	where := "paper account"
	if s.Config.Mode == Alpaca {
		where = "Alpaca account (" + s.Alpaca.Kind() + ")"
	}
	return fmt.Sprintf("%s on your %s: about %s at %s a share (quote from %s). %s",
		Describe(r), where, Money(est), q.Price, q.Source, CapsWords(c)), nil
}

// Estimate is an order's notional at the current quote (a household policy's minimum is
// compared with it); no quote is an error.
func (s *Service) Estimate(ctx context.Context, ownerID uuid.UUID, r OrderRequest) (*steward.Money, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	if err := CheckOrder(&r, s.Config.Mode); err != nil {
		return nil, err
	}
	q, err := s.Quote(ctx, ownerID, r.Symbol)
	if err != nil {
		return nil, err
	}
	return &steward.Money{Minor: estimate(r, q.PriceMinor), Currency: "USD"}, nil
}

// PlaceOrder places the order of call clientID once: the caps checked again at the quote
// under the owner's account lock, the order recorded with clientID, then filled by the
// paper broker in that transaction or sent to Alpaca. A second call with the same clientID
// returns the first order — looked up at Alpaca when its outcome was not known — and never
// places another. An order sent to Alpaca with no answer is recorded unknown and the error
// wraps steward.ErrOutcomeUnknown.
func (s *Service) PlaceOrder(ctx context.Context, ownerID uuid.UUID, clientID string, r OrderRequest) (steward.Order, error) {
	if err := s.on(); err != nil {
		return steward.Order{}, err
	}
	if err := CheckOrder(&r, s.Config.Mode); err != nil {
		return steward.Order{}, err
	}
	q, err := s.Quote(ctx, ownerID, r.Symbol)
	if err != nil {
		return steward.Order{}, err
	}
	var o steward.Order
	fresh := false
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		acct, err := tx.Trading.Account(ctx, s.Config.StartingCashMinor, true)
		if err != nil {
			return err
		}
		if o, err = tx.TradeOrders.OrderByClientID(ctx, clientID); !errors.Is(err, store.ErrNotFound) {
			return err
		}
		est := estimate(r, q.PriceMinor)
		c, err := s.caps(ctx, tx, acct.Settings)
		if err != nil {
			return err
		}
		if err := refuse(c, r.Symbol, est); err != nil {
			return err
		}
		now := s.Now.Now()
		o = steward.Order{ClientOrderID: clientID, Broker: s.broker(), Symbol: r.Symbol, Side: r.Side, Type: r.Type,
			TimeInForce: r.TimeInForce, Status: "sending", EstimateMinor: est, CreatedAt: now}
		if r.Qty > 0 {
			o.Qty = &r.Qty
		} else {
			o.NotionalMinor = &r.NotionalMinor
		}
		if r.LimitPriceMinor > 0 {
			o.LimitPriceMinor = &r.LimitPriceMinor
		}
		if s.Config.Mode == Paper {
			o.Status = "new"
		}
		if o, err = tx.TradeOrders.AddOrder(ctx, o); err != nil {
			return err
		}
		fresh = true
		if s.Config.Mode == Paper {
			o, err = s.fill(ctx, tx, &acct, o, q.PriceMinor)
		}
		return err
	})
	if err != nil || s.Config.Mode == Paper {
		return o, err
	}
	return s.send(ctx, ownerID, o, fresh)
}

// CancelOrder cancels an open order by its id.
func (s *Service) CancelOrder(ctx context.Context, ownerID uuid.UUID, id string) (steward.Order, error) {
	if err := s.on(); err != nil {
		return steward.Order{}, err
	}
	var o steward.Order
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		if _, err = tx.Trading.Account(ctx, s.Config.StartingCashMinor, true); err != nil {
			return err
		}
		if o, err = tx.TradeOrders.Order(ctx, id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return steward.Errorf(steward.CodeNotFound, "no order %q: list_orders gives the ids", id)
			}
			return err
		}
		if !open(o.Status) {
			return steward.Errorf(steward.CodeConflict, "order %s is %s: only an open order can be cancelled", id, o.Status)
		}
		if o.Broker == Paper {
			o, err = tx.TradeOrders.UpdateOrder(ctx, o.ID, steward.OrderUpdate{Status: "canceled", Reason: "cancelled by the owner", At: s.Now.Now()})
		}
		return err
	})
	if err != nil || o.Broker == Paper {
		return o, err
	}
	return s.cancelAlpaca(ctx, ownerID, o)
}

// open reports whether an order may still fill.
func open(status string) bool {
	return status == "new" || status == "accepted" || status == "partially_filled"
}

// Orders lists the owner's newest orders (at most limit); with Alpaca, orders whose outcome
// was not known are looked up first.
func (s *Service) Orders(ctx context.Context, ownerID uuid.UUID, limit int) ([]steward.Order, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	var out []steward.Order
	read := func() error {
		return s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
			var err error
			out, err = tx.TradeOrders.Orders(ctx, limit)
			return err
		})
	}
	if err := read(); err != nil {
		return nil, err
	}
	if s.Config.Mode == Alpaca && s.refresh(ctx, ownerID, out) {
		return out, read()
	}
	return out, nil
}

// Settings reads the owner's own trading settings.
func (s *Service) Settings(ctx context.Context, ownerID uuid.UUID) (steward.TradingSettings, Caps, error) {
	if err := s.on(); err != nil {
		return steward.TradingSettings{}, Caps{}, err
	}
	var set steward.TradingSettings
	var c Caps
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		acct, err := tx.Trading.Account(ctx, s.Config.StartingCashMinor, false)
		if err != nil {
			return err
		}
		set = acct.Settings
		c, err = s.caps(ctx, tx, set)
		return err
	})
	return set, c, err
}

// SetSettings stores the owner's own caps (only ever below the deployment's: a higher one
// is kept but the deployment's applies), allow-list and paper commission.
func (s *Service) SetSettings(ctx context.Context, ownerID uuid.UUID, set steward.TradingSettings) error {
	if err := s.on(); err != nil {
		return err
	}
	for i, sym := range set.Symbols {
		var err error
		if set.Symbols[i], err = CheckSymbol(sym); err != nil {
			return err
		}
	}
	if len(set.Symbols) > 200 {
		return invalid("at most 200 symbols in the allow-list")
	}
	for _, c := range []*int64{set.OrderCapMinor, set.DailyCapMinor} {
		if c != nil && (*c < 0 || *c > MaxPriceMinor) {
			return invalid("a cap must be from 0 to 10,000,000 dollars")
		}
	}
	if set.CommissionMinor < 0 || set.CommissionMinor > 100000 {
		return invalid("the commission must be from 0 to 1,000 dollars an order")
	}
	return s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if _, err := tx.Trading.Account(ctx, s.Config.StartingCashMinor, true); err != nil {
			return err
		}
		return tx.Trading.SetSettings(ctx, set)
	})
}
