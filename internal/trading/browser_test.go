package trading_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/llm/scripted"
)

// pageHas waits until the main text shows want, then reads it (polled: after a POST and its
// 303 the page is a new one).
func pageHas(dst *string, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.Search(`//main//*[contains(text(),`+strconv.Quote(want)+`)]`)),
		browsertest.Into(dst, chromedp.Poll[string](`(() => { const m = document.querySelector("main"); const t = m ? m.innerText : "";
			return t.includes(`+strconv.Quote(want)+`) ? t : ""; })()`)))
}

// TestBrowserTradingAtPhoneWidth: on a phone (390×844) the owner sets a price on the Trading
// page (a bad one refused in words, the symbol kept), asks for an order in the chat, reads the
// card — side, quantity, symbol, the notional at the quote, the caps left today — approves it,
// and the Trading page shows the fill, the cash, the position and its P&L, within the width.
func TestBrowserTradingAtPhoneWidth(t *testing.T) {
	t.Parallel()
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("o1", "place_order", `{"symbol":"AAPL","side":"buy","qty":2}`))),
		scripted.Reply(scripted.Text("Bought 2 AAPL.")))
	e := newEnv(t, model, nil)
	ctx := browsertest.Start(t, 390, 844, 120*time.Second)
	base := e.Server.URL
	var empty, refused, kept, priced, card, decision, filled, moved string
	var width int
	err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=api_key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=api_key]`), e.key),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		chromedp.Navigate(base+"/trading"),
		pageHas(&empty, "No prices yet"),
		chromedp.SendKeys(chromedp.CSS(`#tr-symbol`), "aapl"),
		chromedp.SendKeys(chromedp.CSS(`#tr-price`), "187.204"),
		chromedp.Click(chromedp.Search(`//button[text()="Set price"]`)),
		pageHas(&refused, "is not an amount of dollars"),
		browsertest.Into(&kept, chromedp.Poll[string](`document.querySelector("#tr-symbol").value`)),
		chromedp.SetValue(chromedp.CSS(`#tr-price`), "187.20"),
		chromedp.Click(chromedp.Search(`//button[text()="Set price"]`)),
		chromedp.WaitVisible(chromedp.CSS(`ul.prices`)), pageHas(&priced, "187.20 USD"),
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		chromedp.SetValue(chromedp.CSS(`textarea[name=message]`), "buy 2 apple shares"),
		chromedp.Click(chromedp.Search(`//button[text()="Send"]`)),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card button[data-choice=approve]`)),
		browsertest.Into(&card, chromedp.Text(chromedp.CSS(`fieldset.card`))),
	)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Shot(t, ctx, "trading-card-phone.png")
	actx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	// Scrolled to the middle first: scrolled only just into view, a tall card's buttons sit
	// under the composer at this height and the click lands there.
	err = chromedp.Do(actx,
		browsertest.Into(new(chromedp.Void), chromedp.Evaluate[chromedp.Void](`document.querySelector("fieldset.card button[data-choice=approve]").scrollIntoView({block: "center"})`)),
		chromedp.Sleep(300*time.Millisecond),
		chromedp.Click(chromedp.CSS(`fieldset.card button[data-choice=approve]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.decision.approved`)),
		browsertest.Into(&decision, chromedp.Text(chromedp.CSS(`p.decision.approved`))))
	if err != nil {
		browsertest.Shot(t, ctx, "trading-approve-fail.png")
		t.Fatalf("approve: %v; orders %+v", err, e.orders(t))
	}
	err = chromedp.Do(ctx, chromedp.Navigate(base+"/trading"), pageHas(&filled, "2 at 187.20 USD"))
	if err != nil {
		var main string
		_ = chromedp.Do(ctx, browsertest.Into(&main, chromedp.Text(chromedp.CSS(`main`))))
		t.Fatalf("trading page after the fill: %v\n%s", err, main)
	}
	if _, err := e.App.Trading.SetPrice(t.Context(), e.owner, "AAPL", "190"); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Reload(), pageHas(&moved, "+5.60 USD"),
		browsertest.Into(&width, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Shot(t, ctx, "trading-phone.png")
	if !strings.Contains(empty, "No orders yet") || !strings.Contains(empty, "This is a paper account") || !strings.Contains(empty, "Not investment advice") {
		t.Errorf("empty page: %q", empty)
	}
	if !strings.Contains(refused, `"187.204" is not an amount of dollars`) || kept != "aapl" {
		t.Errorf("bad price: %q, symbol kept %q", refused, kept)
	}
	if !strings.Contains(priced, "AAPL 187.20 USD") {
		t.Errorf("priced: %q", priced)
	}
	for _, want := range []string{"Buy 2 shares of AAPL at market", "about 374.40 USD", "187.20 USD a share", "5000.00 USD of 5000.00 USD left today"} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q: %q", want, card)
		}
	}
	if !strings.Contains(decision, "Approved") {
		t.Errorf("decision: %q", decision)
	}
	for _, want := range []string{"Buy 2 AAPL", "filled", "99625.60 USD", "Caps: 1000.00 USD per order; 4625.60 USD of 5000.00 USD left today."} {
		if !strings.Contains(filled, want) {
			t.Errorf("trading page lacks %q:\n%s", want, filled)
		}
	}
	if !strings.Contains(moved, "100005.60 USD") || width > 390 {
		t.Errorf("after the price moved (page %d px wide): %s", width, moved)
	}
}
