package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The trading phrasings (docs/TRADING.md), so the Trading page's "buy 5 shares of AAPL" works
// without a model key: "buy|sell N [shares of] SYMBOL", "show my portfolio", "my positions",
// "quote SYMBOL" / "price of SYMBOL".

var (
	orderWords = regexp.MustCompile(`(?i)^(buy|sell) (\d{1,6}) (?:shares? (?:of )?)?\$?([A-Za-z][A-Za-z.]{0,9})$`)
	quoteWords = regexp.MustCompile(`(?i)^(?:quote|(?:what(?:'s| is) )?(?:the )?price of) \$?([A-Za-z][A-Za-z.]{0,9})$`)
)

// tradingQuestions map whole messages (lower case, no end punctuation) to a call.
var tradingQuestions = map[string]string{
	"show my portfolio":      "get_account",
	"how is my portfolio":    "get_account",
	"how's my portfolio":     "get_account",
	"my portfolio":           "get_account",
	"show my account":        "get_account",
	"my brokerage account":   "get_account",
	"my positions":           "get_positions",
	"show my positions":      "get_positions",
	"what do i own":          "get_positions",
	"list my orders":         "list_orders",
	"show my orders":         "list_orders",
	"my orders":              "list_orders",
	"what are my positions":  "get_positions",
	"what's in my portfolio": "get_positions",
}

// parseTrading recognises a trading phrasing in s (already cleaned).
func parseTrading(s string) (intent, bool) {
	if tool, ok := tradingQuestions[strings.ToLower(strings.ReplaceAll(s, "’", "'"))]; ok {
		return intent{tool: tool, args: []json.RawMessage{json.RawMessage(`{}`)}}, true
	}
	if m := orderWords.FindStringSubmatch(s); m != nil {
		qty, _ := strconv.Atoi(m[2]) // at most six digits
		if qty == 0 {
			return intent{}, false
		}
		a, _ := json.Marshal(map[string]any{"symbol": strings.ToUpper(m[3]), "side": strings.ToLower(m[1]), "qty": qty})
		return intent{tool: "place_order", args: []json.RawMessage{a}}, true
	}
	if m := quoteWords.FindStringSubmatch(strings.ReplaceAll(s, "’", "'")); m != nil {
		a, _ := json.Marshal(map[string]string{"symbol": strings.ToUpper(m[1])})
		return intent{tool: "get_quote", args: []json.RawMessage{a}}, true
	}
	return intent{}, false
}

// tradingAnswer words a trading tool's output; ok is false for another tool.
func tradingAnswer(tool string, out any) (string, bool) {
	cents := func(v any, key string) string {
		n, _ := field(v, key).(float64)
		return fmt.Sprintf("%.2f USD", n/100)
	}
	switch tool {
	case "get_account":
		caps, _ := field(out, "caps").(map[string]any)
		return fmt.Sprintf("Your %s account: equity %s, cash %s, unrealised P&L %s; %s of orders left today.",
			stringField(out, "broker"), cents(out, "equity_minor"), cents(out, "cash_minor"), cents(out, "unrealized_pnl_minor"),
			cents(caps, "left_today_minor")), true
	case "get_positions":
		items, _ := field(out, "positions").([]any)
		if len(items) == 0 {
			return "You hold no positions.", true
		}
		lines := []string{"Your positions:"}
		for _, it := range items {
			qty, _ := field(it, "qty").(float64)
			lines = append(lines, fmt.Sprintf("• %s: %.0f shares, worth %s", stringField(it, "symbol"), qty, cents(it, "market_value_minor")))
		}
		return strings.Join(lines, "\n"), true
	case "get_quote":
		return fmt.Sprintf("%s is at %s.", stringField(out, "symbol"), cents(out, "price_minor")), true
	case "list_orders":
		items, _ := field(out, "orders").([]any)
		if len(items) == 0 {
			return "No orders yet.", true
		}
		lines := []string{"Your orders, newest first:"}
		for _, it := range items {
			qty, _ := field(it, "qty").(float64)
			lines = append(lines, fmt.Sprintf("• %s %.0f %s: %s", stringField(it, "side"), qty, stringField(it, "symbol"), stringField(it, "status")))
		}
		return strings.Join(lines, "\n"), true
	case "place_order":
		out = field(out, "order")
		qty, _ := field(out, "qty").(float64)
		what := fmt.Sprintf("%s %.0f %s", stringField(out, "side"), qty, stringField(out, "symbol"))
		if stringField(out, "status") == "filled" {
			return fmt.Sprintf("Done — %s, filled at %s a share.", what, cents(out, "filled_price_minor")), true
		}
		return fmt.Sprintf("The order to %s is %s.", what, stringField(out, "status")), true
	}
	return "", false
}
