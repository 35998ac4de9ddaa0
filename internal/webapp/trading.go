package webapp

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/trading"
)

// The Trading page (docs/TRADING.md, docs/ARCHITECTURE.md §20): the owner's account (cash,
// equity, unrealised P&L, the caps left today), positions at their quotes, the newest orders
// with their status — an order whose outcome is unknown said so — and the paper broker's price
// table, which only the owner sets. Orders themselves are only placed through the agent, on
// the owner's yes. It reads and writes only through trading.Service (§7).

const priceAction = "/trading/price"

func (a *web) tradingPage(w http.ResponseWriter, r *http.Request) {
	a.trading(w, r, http.StatusOK, "")
}

// trading renders the page; msg is the error of the price form.
func (a *web) trading(w http.ResponseWriter, r *http.Request, status int, msg string) {
	me := current(r)
	if !a.d.Trading.On() {
		a.write(w, r, "trading", http.StatusOK, func(p *page) {
			p.raw(`<h1>Trading</h1><p>Trading is off on this server (STEWARD_TRADING).</p>`)
		})
		return
	}
	ctx := r.Context()
	acct, holdings, accErr := a.d.Trading.Portfolio(ctx, me.OwnerID)
	if _, ok := invalid(accErr); accErr != nil && !ok {
		a.fail(w, r, accErr)
		return
	}
	orders, err := a.d.Trading.Orders(ctx, me.OwnerID, 50)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	prices, err := a.d.Trading.Prices(ctx, me.OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "trading", status, func(p *page) {
		p.raw(`<h1>Trading</h1>`).pageError(r, msg, priceAction)
		if f, ok := takeFlash(w, r); ok {
			f.show(p)
		}
		p.raw(`<p class="meta">Not investment advice. Steward proposes orders and places only those you approve, within your caps.`)
		if a.d.Trading.Config.Mode == trading.Paper {
			p.raw(` This is a paper account: no real money moves.</p>`)
		} else {
			p.raw(` Orders go to Alpaca (` + a.d.Trading.Alpaca.Kind() + `); live trading is at your own risk.</p>`)
		}
		if accErr != nil {
			m, _ := invalid(accErr)
			p.raw(`<p class="error" role="alert">`).text(m).raw(`</p>`)
		} else {
			tradingAccount(p, acct, holdings)
		}
		tradingOrders(p, orders)
		p.raw(`<h2>Prices</h2>`)
		if len(prices) == 0 {
			p.raw(`<p>No prices yet. The paper broker fills orders only at a price you set here; no price, no order.</p>`)
		} else {
			p.raw(`<ul class="prices">`)
			for _, x := range prices {
				p.raw(`<li><strong>`).text(x.Symbol).raw(`</strong> `).text(trading.Money(x.PriceMinor)).raw(` <span class="meta">set `).
					text(x.UpdatedAt.UTC().Format("2 Jan 15:04 UTC")).raw(`</span></li>`)
			}
			p.raw(`</ul>`)
		}
		p.raw(`<form method="post" action="`+priceAction+`" class="price-form">`).formError(r, priceAction, msg).
			raw(`<label for="tr-symbol">Symbol</label><input id="tr-symbol" name="symbol" type="text" required maxlength="10" autocomplete="off" autocapitalize="characters" placeholder="AAPL"`).
			value(r, priceAction, "symbol", "").
			raw(`><label for="tr-price">Price (dollars)</label><input id="tr-price" name="price" type="text" inputmode="decimal" required maxlength="14" autocomplete="off" placeholder="187.20"`).
			value(r, priceAction, "price", "").
			raw(`>`).hidden(me.csrf).raw(`<button type="submit">Set price</button></form>`)
	})
}

// tradingAccount writes the account's figures and its positions.
func tradingAccount(p *page, acct trading.Account, holdings []trading.Holding) {
	money := trading.Money
	p.raw(`<h2>Account</h2><dl class="fields">`)
	for _, f := range [][2]string{{"Account", acct.Broker}, {"Cash", money(acct.CashMinor)}, {"Positions", money(acct.PositionsValueMinor)},
		{"Equity", money(acct.EquityMinor)}, {"Unrealised P&L", signed(acct.PnLMinor)}} {
		p.raw(`<div><dt>`).text(f[0]).raw(`</dt><dd>`).text(f[1]).raw(`</dd></div>`)
	}
	p.raw(`</dl><p class="caps">`).text(trading.CapsWords(acct.Caps)).raw(`</p>`)
	if len(acct.Unpriced) > 0 {
		p.raw(`<p class="meta">No price for `).text(strings.Join(acct.Unpriced, ", ")).raw(`: valued at cost.</p>`)
	}
	p.raw(`<h2>Positions</h2>`)
	if len(holdings) == 0 {
		p.raw(`<p>No positions.</p>`)
		return
	}
	p.raw(`<div class="scroll"><table class="positions stack"><thead><tr><th scope="col">Symbol</th><th scope="col" class="num">Shares</th>` +
		`<th scope="col" class="num">Price</th><th scope="col" class="num">Value</th><th scope="col" class="num">Cost</th><th scope="col" class="num">P&amp;L</th></tr></thead><tbody>`)
	for _, h := range holdings {
		price := "no price"
		if h.PriceMinor != nil {
			price = money(*h.PriceMinor)
		}
		p.raw(`<tr><td data-label="Symbol">`).text(h.Symbol).raw(`</td><td class="num" data-label="Shares">`).text(strconv.FormatInt(h.Qty, 10)).
			raw(`</td><td class="num" data-label="Price">`).text(price).raw(`</td><td class="num" data-label="Value">`).text(money(h.ValueMinor)).
			raw(`</td><td class="num" data-label="Cost">`).text(money(h.CostMinor)).raw(`</td><td class="num" data-label="P&amp;L">`).text(signed(h.PnLMinor)).raw(`</td></tr>`)
	}
	p.raw(`</tbody></table></div>`)
}

// signed words a profit or loss with its sign.
func signed(cents int64) string {
	if cents > 0 {
		return "+" + trading.Money(cents)
	}
	return trading.Money(cents)
}

// orderStatus words an order's status for a person.
var orderStatus = map[string]string{"sending": "sending", "new": "open", "accepted": "open", "partially_filled": "partly filled",
	"filled": "filled", "canceled": "cancelled", "rejected": "rejected", "expired": "expired",
	"unknown": "unknown: the broker did not answer; it may or may not have been placed and is never sent again"}

// tradingOrders writes the newest orders.
func tradingOrders(p *page, orders []steward.Order) {
	p.raw(`<h2>Orders</h2>`)
	if len(orders) == 0 {
		p.raw(`<p>No orders yet. Ask Steward ("buy 5 shares of AAPL"); every order waits for your yes.</p>`)
		return
	}
	p.raw(`<div class="scroll"><table class="orders stack"><thead><tr><th scope="col">When</th><th scope="col">Order</th>` +
		`<th scope="col">Status</th><th scope="col" class="num">Fill</th></tr></thead><tbody>`)
	for _, o := range orders {
		what := strings.ToUpper(o.Side[:1]) + o.Side[1:] + " " + o.Symbol
		if o.Qty != nil {
			what = fmt.Sprintf("%s %d %s", strings.ToUpper(o.Side[:1])+o.Side[1:], *o.Qty, o.Symbol)
		} else if o.NotionalMinor != nil {
			what += " for " + trading.Money(*o.NotionalMinor)
		}
		if o.LimitPriceMinor != nil {
			what += ", limit " + trading.Money(*o.LimitPriceMinor)
		}
		fill := "—"
		if o.FilledPriceMinor != nil {
			fill = fmt.Sprintf("%d at %s", o.FilledQty, trading.Money(*o.FilledPriceMinor))
		}
		st := orderStatus[o.Status]
		if o.Reason != "" && o.Status != "unknown" {
			st += " (" + o.Reason + ")"
		}
		p.raw(`<tr class="order-` + o.Status + `"><td data-label="When">`).text(o.CreatedAt.UTC().Format("2 Jan 15:04")).raw(`</td><td data-label="Order">`).text(what).
			raw(`</td><td data-label="Status">`).text(st).raw(`</td><td class="num" data-label="Fill">`).text(fill).raw(`</td></tr>`)
	}
	p.raw(`</tbody></table></div>`)
}

func (a *web) setPrice(w http.ResponseWriter, r *http.Request) {
	if !a.d.Trading.On() {
		http.NotFound(w, r)
		return
	}
	_, err := a.d.Trading.SetPrice(r.Context(), current(r).OwnerID, r.PostFormValue("symbol"), r.PostFormValue("price"))
	a.done(w, r, err, "/trading", func(status int, msg string) { a.trading(w, r, status, msg) })
}
