package main

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/testdb"
)

// TestTradingCommand: `steward trading` is off until STEWARD_TRADING says otherwise; then the
// owner sets prices and caps and reads the paper account, positions and orders in words; a
// bad price or symbol is refused in words (exit 1).
func TestTradingCommand(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	wantOK(t, runCLI(t, env, "owners", "add", "alice"))
	wantOneLineError(t, runCLI(t, env, "trading", "account"), "trading is off")
	env["STEWARD_TRADING"] = "paper"
	r := runCLI(t, env, "trading", "price", "aapl", "187.20")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "AAPL is 187.20 USD in your price table.") {
		t.Errorf("price: %q", r.stdout)
	}
	wantOneLineError(t, runCLI(t, env, "trading", "price", "AAPL", "3.141"), "is not an amount of dollars")
	wantOneLineError(t, runCLI(t, env, "trading", "price", "NOT A SYMBOL", "3"), "is not a ticker symbol")
	r = runCLI(t, env, "trading", "caps", "--order", "500", "--daily", "2000.50", "--symbols", "AAPL,msft")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "Caps: 500.00 USD per order; 2000.50 USD of 2000.50 USD left today; only AAPL, MSFT.") {
		t.Errorf("caps: %q", r.stdout)
	}
	r = runCLI(t, env, "trading", "account")
	wantOK(t, r)
	for _, want := range []string{"Account:        paper", "Cash:           100000.00 USD", "Equity:         100000.00 USD"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("account lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, c := range [][]string{{"positions"}, {"orders"}} {
		r = runCLI(t, env, append([]string{"trading"}, c...)...)
		wantOK(t, r)
		if !strings.Contains(r.stdout, "No ") {
			t.Errorf("%s: %q", c[0], r.stdout)
		}
	}
	r = runCLI(t, env, "trading", "prices")
	if !strings.Contains(r.stdout, "AAPL") || !strings.Contains(r.stdout, "187.20 USD") {
		t.Errorf("prices: %q", r.stdout)
	}
}
