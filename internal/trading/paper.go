package trading

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Fill is the paper broker's verdict on an order at a price: filled (with the account's
// cash and the position after it) or rejected with a reason, or left open (a limit the
// price does not reach).
type Fill struct {
	Status   string
	Reason   string
	Cash     int64
	Position steward.Position
}

// Execute is the paper broker's fill of qty shares at price (cents) with commission, against
// cash and the position held: pure, so the property test checks what it adds up to. A buy
// needs the cash for the shares and the commission; a sell needs the shares (no short
// selling) and leaves the cost of the shares kept in proportion.
func Execute(side string, qty, price, commission, cash int64, pos steward.Position) Fill {
	value := qty * price
	switch side {
	case "buy":
		if value+commission > cash {
			return Fill{Status: "rejected", Reason: fmt.Sprintf("insufficient cash: the order needs %s and the account has %s", Money(value+commission), Money(cash)), Cash: cash, Position: pos}
		}
		pos.Qty += qty
		pos.CostMinor += value
		return Fill{Status: "filled", Cash: cash - value - commission, Position: pos}
	default:
		if qty > pos.Qty {
			return Fill{Status: "rejected", Reason: fmt.Sprintf("you hold %d shares of %s: the paper broker does not sell short", pos.Qty, pos.Symbol), Cash: cash, Position: pos}
		}
		if cash+value < commission {
			return Fill{Status: "rejected", Reason: "the commission is more than the cash and the sale", Cash: cash, Position: pos}
		}
		pos.CostMinor -= pos.CostMinor * qty / pos.Qty
		pos.Qty -= qty
		if pos.Qty == 0 {
			pos.CostMinor = 0
		}
		return Fill{Status: "filled", Cash: cash + value - commission, Position: pos}
	}
}

// marketable is the price a paper order fills at now, or false: a market order at the quote,
// a limit order at the quote when the quote reaches its limit.
func marketable(o steward.Order, quote int64) (int64, bool) {
	if o.Type != "limit" || o.LimitPriceMinor == nil {
		return quote, true
	}
	if (o.Side == "buy" && quote <= *o.LimitPriceMinor) || (o.Side == "sell" && quote >= *o.LimitPriceMinor) {
		return quote, true
	}
	return 0, false
}

// fill fills a new paper order at the quote when it is marketable, in tx under the account's
// lock; acct follows the cash.
func (s *Service) fill(ctx context.Context, tx *store.Tx, acct *steward.PaperAccount, o steward.Order, quote int64) (steward.Order, error) {
	price, ok := marketable(o, quote)
	if !ok {
		return o, nil
	}
	pos, err := tx.Trading.Position(ctx, o.Symbol)
	if err != nil {
		return o, err
	}
	f := Execute(o.Side, *o.Qty, price, acct.Settings.CommissionMinor, acct.CashMinor, pos)
	u := steward.OrderUpdate{Status: f.Status, Reason: f.Reason, At: s.Now.Now()}
	if f.Status == "filled" {
		u.FilledQty, u.FilledPriceMinor, u.CommissionMinor = *o.Qty, &price, acct.Settings.CommissionMinor
		if err := tx.Trading.SetCash(ctx, f.Cash); err != nil {
			return o, err
		}
		if err := tx.Trading.SetPosition(ctx, f.Position); err != nil {
			return o, err
		}
		acct.CashMinor = f.Cash
	}
	return tx.TradeOrders.UpdateOrder(ctx, o.ID, u)
}

// fillOpen fills the open paper orders of a symbol whose price was just set.
func (s *Service) fillOpen(ctx context.Context, tx *store.Tx, acct *steward.PaperAccount, p steward.Price) error {
	orders, err := tx.TradeOrders.Orders(ctx, 500)
	if err != nil {
		return err
	}
	for i := len(orders) - 1; i >= 0; i-- { // oldest first
		o := orders[i]
		if o.Broker != Paper || o.Symbol != p.Symbol || !open(o.Status) || o.Qty == nil {
			continue
		}
		if _, err := s.fill(ctx, tx, acct, o, p.PriceMinor); err != nil {
			return err
		}
	}
	return nil
}

// paperAccount reads the paper account and its positions valued at the price table.
func (s *Service) paperAccount(ctx context.Context, ownerID uuid.UUID) (Account, []Holding, error) {
	var a Account
	var hs []Holding
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		acct, err := tx.Trading.Account(ctx, s.Config.StartingCashMinor, false)
		if err != nil {
			return err
		}
		if a.Caps, err = s.caps(ctx, tx, acct.Settings); err != nil {
			return err
		}
		positions, err := tx.Trading.Positions(ctx)
		if err != nil {
			return err
		}
		prices, err := tx.Prices.List(ctx)
		if err != nil {
			return err
		}
		bySymbol := make(map[string]int64, len(prices))
		for _, p := range prices {
			bySymbol[p.Symbol] = p.PriceMinor
		}
		a.Broker, a.Currency, a.CashMinor, a.BuyingPowerMinor = Paper, "USD", acct.CashMinor, acct.CashMinor
		for _, p := range positions {
			h := Holding{Symbol: p.Symbol, Qty: p.Qty, CostMinor: p.CostMinor, ValueMinor: p.CostMinor}
			if price, ok := bySymbol[p.Symbol]; ok {
				h.PriceMinor, h.ValueMinor = &price, p.Qty*price
				h.PnLMinor = h.ValueMinor - p.CostMinor
			} else {
				a.Unpriced = append(a.Unpriced, p.Symbol)
			}
			a.PositionsValueMinor += h.ValueMinor
			a.PnLMinor += h.PnLMinor
			hs = append(hs, h)
		}
		a.EquityMinor = a.CashMinor + a.PositionsValueMinor
		return nil
	})
	return a, hs, err
}

// Account reads the account: cash, the positions' value, equity, buying power, unrealised
// P&L and the caps left today.
func (s *Service) Account(ctx context.Context, ownerID uuid.UUID) (Account, error) {
	a, _, err := s.Portfolio(ctx, ownerID)
	return a, err
}

// Positions reads the positions, valued at their quotes.
func (s *Service) Positions(ctx context.Context, ownerID uuid.UUID) ([]Holding, error) {
	_, hs, err := s.Portfolio(ctx, ownerID)
	return hs, err
}

// Portfolio reads the account and its positions together.
func (s *Service) Portfolio(ctx context.Context, ownerID uuid.UUID) (Account, []Holding, error) {
	if err := s.on(); err != nil {
		return Account{}, nil, err
	}
	if s.Config.Mode == Alpaca {
		return s.alpacaPortfolio(ctx, ownerID)
	}
	return s.paperAccount(ctx, ownerID)
}

// PortfolioLine is the account in one line for the morning briefing (autonomy.Portfolio):
// equity, cash, unrealised P&L, positions and today's orders; "" when trading is off.
func (s *Service) PortfolioLine(ctx context.Context, ownerID uuid.UUID) (string, error) {
	if !s.On() {
		return "", nil
	}
	a, hs, err := s.Portfolio(ctx, ownerID)
	if err != nil {
		return "", err
	}
	orders, err := s.Orders(ctx, ownerID, 100)
	if err != nil {
		return "", err
	}
	today := 0
	for _, o := range orders {
		if !o.CreatedAt.Before(s.dayStart()) {
			today++
		}
	}
	pnl := Money(a.PnLMinor)
	if a.PnLMinor > 0 {
		pnl = "+" + pnl
	}
	return fmt.Sprintf("%s account: equity %s (cash %s), unrealised P&L %s, %s, %s today.",
		a.Broker, Money(a.EquityMinor), Money(a.CashMinor), pnl, count(len(hs), "position"), count(today, "order")), nil
}

// count words n things: 1 order, 2 orders.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
