package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"
	. "github.com/stewardhq/steward/internal/store"
)

// seedTrading gives an owner a paper account with settings and keys, a price, a position and
// an order (client id "order-call").
func seedTrading(ctx context.Context, tx *Tx, name string) (string, error) {
	if _, err := tx.Trading.Account(ctx, 100_00, true); err != nil {
		return "", err
	}
	cap := int64(500_00)
	if err := tx.Trading.SetSettings(ctx, steward.TradingSettings{OrderCapMinor: &cap, Symbols: []string{"AAPL"}}); err != nil {
		return "", err
	}
	if err := tx.Trading.SetKeys(ctx, []byte("sealed keys of "+name)); err != nil {
		return "", err
	}
	if err := tx.Prices.Set(ctx, steward.Price{Symbol: "AAPL", PriceMinor: 187_20, UpdatedAt: time.Now()}); err != nil {
		return "", err
	}
	if err := tx.Trading.SetPosition(ctx, steward.Position{Symbol: "AAPL", Qty: 3, CostMinor: 500_00}); err != nil {
		return "", err
	}
	if err := tx.Trading.SetCash(ctx, 42_00); err != nil {
		return "", err
	}
	qty := int64(3)
	o, err := tx.TradeOrders.AddOrder(ctx, steward.Order{ClientOrderID: "order-call", Broker: "paper", Symbol: "AAPL", Side: "buy", Qty: &qty,
		Type: "market", TimeInForce: "day", Status: "new", EstimateMinor: 561_60, CreatedAt: time.Now()})
	return o.ID, err
}

// probeTrading: bob reads none of alice's trading rows and changes none; what he writes is his.
func probeTrading(t *testing.T, ctx context.Context, tx *Tx, a seeded, none func(string, int, error), refused func(string, error)) {
	t.Helper()
	covers("Trading.Account", "Trading.SetSettings", "Trading.SetCash", "Trading.SetKeys", "Prices.Set", "Prices.Get",
		"Prices.List", "Trading.Positions", "Trading.Position", "Trading.SetPosition", "TradeOrders.AddOrder", "TradeOrders.Order",
		"TradeOrders.OrderByClientID", "TradeOrders.Orders", "TradeOrders.UpdateOrder", "TradeOrders.NotionalSince")
	acct, err := tx.Trading.Account(ctx, 1, true)
	if err != nil || acct.CashMinor != 42_00 || string(acct.Keys) != "sealed keys of bob" {
		t.Errorf("trading account: %+v, %v: want bob's own", acct, err)
	}
	prices, err := tx.Prices.List(ctx)
	none("trading prices", len(prices), err)
	ps, err := tx.Trading.Positions(ctx)
	none("trading positions", len(ps), err)
	os, err := tx.TradeOrders.Orders(ctx, 100)
	none("trading orders", len(os), err)
	_, err = tx.TradeOrders.Order(ctx, a.order)
	refused("trading order", err)
	_, err = tx.TradeOrders.UpdateOrder(ctx, a.order, steward.OrderUpdate{Status: "canceled", At: time.Now()})
	refused("trading update order", err)
	if n, err := tx.TradeOrders.NotionalSince(ctx, time.Now().Add(-time.Hour)); err != nil || n != 561_60 {
		t.Errorf("trading notional: %d, %v: want bob's own 561.60", n, err)
	}
	// His own writes under alice's names stay his.
	if err := tx.Prices.Set(ctx, steward.Price{Symbol: "AAPL", PriceMinor: 1, UpdatedAt: time.Now()}); err != nil {
		t.Errorf("trading set price: %v", err)
	}
	if p, err := tx.Prices.Get(ctx, "AAPL"); err != nil || p.PriceMinor != 1 {
		t.Errorf("trading price: %+v, %v", p, err)
	}
	if err := tx.Trading.SetPosition(ctx, steward.Position{Symbol: "AAPL", Qty: 0}); err != nil {
		t.Errorf("trading set position: %v", err)
	}
	if p, err := tx.Trading.Position(ctx, "AAPL"); err != nil || p.Qty != 0 {
		t.Errorf("trading position after selling his own: %+v, %v", p, err)
	}
	if err := tx.Trading.SetPosition(ctx, steward.Position{Symbol: "MSFT", Qty: 1, CostMinor: 1}); err != nil {
		t.Errorf("trading set position: %v", err)
	}
	if o, err := tx.TradeOrders.OrderByClientID(ctx, "order-call"); err != nil || o.ID == a.order {
		t.Errorf("trading order by client id: %+v, %v: want bob's own", o, err)
	}
	if err := tx.Trading.SetSettings(ctx, steward.TradingSettings{}); err != nil {
		t.Errorf("trading settings: %v", err)
	}
	if err := tx.Trading.SetCash(ctx, 0); err != nil {
		t.Errorf("trading cash: %v", err)
	}
	if err := tx.Trading.SetKeys(ctx, nil); err != nil {
		t.Errorf("trading keys: %v", err)
	}
}

// checkTrading: alice's trading rows after bob's probes are as seeded.
func checkTrading(t *testing.T, ctx context.Context, tx *Tx, a seeded) {
	t.Helper()
	acct, err := tx.Trading.Account(ctx, 1, false)
	if err != nil || acct.CashMinor != 42_00 || string(acct.Keys) != "sealed keys of alice" || acct.Settings.OrderCapMinor == nil || len(acct.Settings.Symbols) != 1 {
		t.Errorf("alice's trading account after bob: %+v, %v", acct, err)
	}
	if p, err := tx.Prices.Get(ctx, "AAPL"); err != nil || p.PriceMinor != 187_20 {
		t.Errorf("alice's price after bob: %+v, %v", p, err)
	}
	if p, err := tx.Trading.Position(ctx, "AAPL"); err != nil || p.Qty != 3 {
		t.Errorf("alice's position after bob: %+v, %v", p, err)
	}
	if o, err := tx.TradeOrders.Order(ctx, a.order); err != nil || o.Status != "new" {
		t.Errorf("alice's order after bob: %+v, %v", o, err)
	}
}
