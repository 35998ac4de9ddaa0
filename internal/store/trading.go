package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/steward"
)

// Trading is the owner's trading account (migrations/00039_trading.sql, docs/ARCHITECTURE.md
// §20): the paper broker's cash and positions, the owner's settings and sealed Alpaca keys.
type Trading struct{ *conn }

// TradeOrders is every order Steward placed for the owner, with either broker.
type TradeOrders struct{ *conn }

// Prices is the owner's price table, the paper broker's quotes.
type Prices struct{ *conn }

func int8Of(p *int64) pgtype.Int8 {
	if p == nil {
		return pgtype.Int8{}
	}
	return pgtype.Int8{Int64: *p, Valid: true}
}

func ptrOf(v pgtype.Int8) *int64 {
	if !v.Valid {
		return nil
	}
	n := v.Int64
	return &n
}

func paperAccount(r db.TradingAccount) steward.PaperAccount {
	return steward.PaperAccount{CashMinor: r.CashMinor, Keys: r.AlpacaKeys, Settings: steward.TradingSettings{
		OrderCapMinor: ptrOf(r.OrderCapMinor), DailyCapMinor: ptrOf(r.DailyCapMinor), Symbols: r.Symbols, CommissionMinor: r.CommissionMinor}}
}

func order(r db.TradingOrder) steward.Order {
	o := steward.Order{ID: r.ID.String(), ClientOrderID: r.ClientOrderID, Broker: r.Broker, Symbol: r.Symbol, Side: r.Side,
		Qty: ptrOf(r.Qty), NotionalMinor: ptrOf(r.NotionalMinor), Type: r.Type, LimitPriceMinor: ptrOf(r.LimitPriceMinor),
		TimeInForce: r.TimeInForce, Status: r.Status, EstimateMinor: r.EstimateMinor, FilledQty: r.FilledQty,
		FilledPriceMinor: ptrOf(r.FilledPriceMinor), CommissionMinor: r.CommissionMinor, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.BrokerOrderID != nil {
		o.BrokerOrderID = *r.BrokerOrderID
	}
	if r.Reason != nil {
		o.Reason = *r.Reason
	}
	return o
}

// Account reads the owner's trading account, opening it with cash first when there is none;
// with lock it holds the row until the transaction ends (one order at a time per owner).
func (t Trading) Account(ctx context.Context, cash int64, lock bool) (steward.PaperAccount, error) {
	if err := t.q.EnsureTradingAccount(ctx, db.EnsureTradingAccountParams{OwnerID: t.ownerID, CashMinor: cash}); err != nil {
		return steward.PaperAccount{}, fmt.Errorf("open trading account: %w", err)
	}
	get := t.q.GetTradingAccount
	if lock {
		get = t.q.LockTradingAccount
	}
	r, err := get(ctx, t.ownerID)
	if err != nil {
		return steward.PaperAccount{}, notFound("trading account", err)
	}
	return paperAccount(r), nil
}

// SetSettings stores the owner's own caps, allow-list and commission.
func (t Trading) SetSettings(ctx context.Context, s steward.TradingSettings) error {
	n, err := t.q.UpdateTradingSettings(ctx, db.UpdateTradingSettingsParams{OwnerID: t.ownerID, OrderCapMinor: int8Of(s.OrderCapMinor),
		DailyCapMinor: int8Of(s.DailyCapMinor), Symbols: s.Symbols, CommissionMinor: s.CommissionMinor})
	return rowsOrNotFound("trading settings", n, err)
}

// SetCash sets the paper account's cash.
func (t Trading) SetCash(ctx context.Context, cash int64) error {
	n, err := t.q.SetTradingCash(ctx, db.SetTradingCashParams{OwnerID: t.ownerID, CashMinor: cash})
	return rowsOrNotFound("trading cash", n, err)
}

// SetKeys stores the owner's sealed Alpaca keys (nil removes them).
func (t Trading) SetKeys(ctx context.Context, sealed []byte) error {
	n, err := t.q.SetTradingAlpacaKeys(ctx, db.SetTradingAlpacaKeysParams{OwnerID: t.ownerID, AlpacaKeys: sealed})
	return rowsOrNotFound("trading keys", n, err)
}

// Set sets a symbol's price in the owner's price table.
func (t Prices) Set(ctx context.Context, p steward.Price) error {
	err := t.q.SetTradingPrice(ctx, db.SetTradingPriceParams{OwnerID: t.ownerID, Symbol: p.Symbol, PriceMinor: p.PriceMinor, UpdatedAt: p.UpdatedAt})
	return notFoundOrNil("set price", err)
}

// Get reads a symbol's price; none is ErrNotFound.
func (t Prices) Get(ctx context.Context, symbol string) (steward.Price, error) {
	r, err := t.q.GetTradingPrice(ctx, db.GetTradingPriceParams{OwnerID: t.ownerID, Symbol: symbol})
	if err != nil {
		return steward.Price{}, notFound("price", err)
	}
	return steward.Price{Symbol: r.Symbol, PriceMinor: r.PriceMinor, UpdatedAt: r.UpdatedAt}, nil
}

// List lists the owner's price table.
func (t Prices) List(ctx context.Context) ([]steward.Price, error) {
	rows, err := t.q.ListTradingPrices(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list prices: %w", err)
	}
	out := make([]steward.Price, len(rows))
	for i, r := range rows {
		out[i] = steward.Price{Symbol: r.Symbol, PriceMinor: r.PriceMinor, UpdatedAt: r.UpdatedAt}
	}
	return out, nil
}

// Positions lists the paper positions.
func (t Trading) Positions(ctx context.Context) ([]steward.Position, error) {
	rows, err := t.q.ListTradingPositions(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list positions: %w", err)
	}
	out := make([]steward.Position, len(rows))
	for i, r := range rows {
		out[i] = steward.Position{Symbol: r.Symbol, Qty: r.Qty, CostMinor: r.CostMinor}
	}
	return out, nil
}

// Position reads one paper position; none is a zero position.
func (t Trading) Position(ctx context.Context, symbol string) (steward.Position, error) {
	r, err := t.q.GetTradingPosition(ctx, db.GetTradingPositionParams{OwnerID: t.ownerID, Symbol: symbol})
	if errors.Is(err, pgx.ErrNoRows) {
		return steward.Position{Symbol: symbol}, nil
	}
	if err != nil {
		return steward.Position{}, notFound("position", err)
	}
	return steward.Position{Symbol: r.Symbol, Qty: r.Qty, CostMinor: r.CostMinor}, nil
}

// SetPosition stores a paper position; zero shares remove it.
func (t Trading) SetPosition(ctx context.Context, p steward.Position) error {
	if p.Qty == 0 {
		_, err := t.q.DeleteTradingPosition(ctx, db.DeleteTradingPositionParams{OwnerID: t.ownerID, Symbol: p.Symbol})
		return notFoundOrNil("delete position", err)
	}
	err := t.q.SetTradingPosition(ctx, db.SetTradingPositionParams{OwnerID: t.ownerID, Symbol: p.Symbol, Qty: p.Qty, CostMinor: p.CostMinor})
	return notFoundOrNil("set position", err)
}

// AddOrder records a new order; a second with the same client order id is ErrConflict.
func (t TradeOrders) AddOrder(ctx context.Context, o steward.Order) (steward.Order, error) {
	r, err := t.q.InsertTradingOrder(ctx, db.InsertTradingOrderParams{OwnerID: t.ownerID, ClientOrderID: o.ClientOrderID, Broker: o.Broker,
		Symbol: o.Symbol, Side: o.Side, Qty: int8Of(o.Qty), NotionalMinor: int8Of(o.NotionalMinor), Type: o.Type,
		LimitPriceMinor: int8Of(o.LimitPriceMinor), TimeInForce: o.TimeInForce, Status: o.Status, EstimateMinor: o.EstimateMinor,
		CreatedAt: o.CreatedAt})
	if err != nil {
		return steward.Order{}, notFound("add order", err)
	}
	return order(r), nil
}

// Order reads an order by its id; none (or not an id) is ErrNotFound.
func (t TradeOrders) Order(ctx context.Context, id string) (steward.Order, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return steward.Order{}, fmt.Errorf("order %q: %w", id, ErrNotFound)
	}
	r, err := t.q.GetTradingOrder(ctx, db.GetTradingOrderParams{OwnerID: t.ownerID, ID: u})
	if err != nil {
		return steward.Order{}, notFound("order", err)
	}
	return order(r), nil
}

// OrderByClientID reads an order by its client order id; none is ErrNotFound.
func (t TradeOrders) OrderByClientID(ctx context.Context, clientID string) (steward.Order, error) {
	r, err := t.q.GetTradingOrderByClientID(ctx, db.GetTradingOrderByClientIDParams{OwnerID: t.ownerID, ClientOrderID: clientID})
	if err != nil {
		return steward.Order{}, notFound("order", err)
	}
	return order(r), nil
}

// Orders lists the newest orders first.
func (t TradeOrders) Orders(ctx context.Context, limit int) ([]steward.Order, error) {
	rows, err := t.q.ListTradingOrders(ctx, db.ListTradingOrdersParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list orders: %w", err)
	}
	out := make([]steward.Order, len(rows))
	for i, r := range rows {
		out[i] = order(r)
	}
	return out, nil
}

// UpdateOrder records what the broker said of an order.
func (t TradeOrders) UpdateOrder(ctx context.Context, id string, u steward.OrderUpdate) (steward.Order, error) {
	oid, err := uuid.Parse(id)
	if err != nil {
		return steward.Order{}, fmt.Errorf("order %q: %w", id, ErrNotFound)
	}
	p := db.UpdateTradingOrderParams{OwnerID: t.ownerID, ID: oid, Status: u.Status, FilledQty: u.FilledQty,
		FilledPriceMinor: int8Of(u.FilledPriceMinor), CommissionMinor: u.CommissionMinor, UpdatedAt: u.At}
	if u.BrokerOrderID != "" {
		p.BrokerOrderID = &u.BrokerOrderID
	}
	if u.Reason != "" {
		p.Reason = &u.Reason
	}
	r, err := t.q.UpdateTradingOrder(ctx, p)
	if err != nil {
		return steward.Order{}, notFound("update order", err)
	}
	return order(r), nil
}

// NotionalSince sums the estimates of the orders placed since (the rejected aside).
func (t TradeOrders) NotionalSince(ctx context.Context, since time.Time) (int64, error) {
	n, err := t.q.TradingNotionalSince(ctx, db.TradingNotionalSinceParams{OwnerID: t.ownerID, Since: since})
	if err != nil {
		return 0, fmt.Errorf("day's notional: %w", err)
	}
	return n, nil
}
