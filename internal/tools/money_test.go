package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"
)

// payTool is a money-moving write whose amount and currency are declared by name.
func payTool(amount, currency string) Tool {
	type payArgs struct {
		To         string  `json:"to"`
		Amount     int64   `json:"amount_minor"`
		Currency   string  `json:"currency"`
		Tip        float64 `json:"tip"`
		MaybeMinor *int64  `json:"maybe_minor,omitempty"`
	}
	pay := New("pay", "Pay someone.", steward.KindWrite, func(_ context.Context, _ Env, a payArgs) (any, error) {
		return map[string]any{"paid": a.Amount}, nil
	})
	pay.Money = &MoneyArgs{Amount: amount, Currency: currency}
	return pay
}

// TestRegistryChecksMoneyArgs: a tool whose declared money arguments its schema does not
// have (or has with the wrong type, or optional) is refused when the registry is built, so
// no money tool can reach the gate with an amount nobody reads (issue 9, money fails closed).
func TestRegistryChecksMoneyArgs(t *testing.T) {
	t.Parallel()
	if _, err := NewRegistry(payTool("amount_minor", "currency")); err != nil {
		t.Fatalf("a well-declared money tool: %v", err)
	}
	for _, tc := range []struct {
		name, amount, currency, want string
	}{
		{"amount missing", "amount", "currency", `"amount"`},
		{"currency missing", "amount_minor", "ccy", `"ccy"`},
		{"amount not an integer", "tip", "currency", `"tip"`},
		{"amount a string", "to", "currency", `"to"`},
		{"currency not a string", "amount_minor", "amount_minor", `"amount_minor"`},
		{"amount optional", "maybe_minor", "currency", `"maybe_minor"`},
		{"no amount named", "", "currency", "amount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewRegistry(payTool(tc.amount, tc.currency))
			if err == nil {
				t.Fatalf("NewRegistry accepted money args %q/%q", tc.amount, tc.currency)
			}
			if !strings.Contains(err.Error(), "pay") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name the tool and %s", err, tc.want)
			}
		})
	}
}

// TestMoneyIn reads the amount a call moves; anything but a whole, non-negative number of
// minor units in an ISO 4217 code is an error, never zero.
func TestMoneyIn(t *testing.T) {
	t.Parallel()
	pay := payTool("amount_minor", "currency")
	m, err := pay.MoneyIn(json.RawMessage(`{"to":"bob","amount_minor":1250,"currency":"EUR"}`))
	if err != nil || m == nil || *m != (steward.Money{Minor: 1250, Currency: "EUR"}) {
		t.Fatalf("MoneyIn = %+v, %v; want 1250 EUR", m, err)
	}
	for _, args := range []string{
		`{"to":"bob","currency":"EUR"}`,
		`{"to":"bob","amount_minor":null,"currency":"EUR"}`,
		`{"to":"bob","amount_minor":"12","currency":"EUR"}`,
		`{"to":"bob","amount_minor":12.5,"currency":"EUR"}`,
		`{"to":"bob","amount_minor":-5,"currency":"EUR"}`,
		`{"to":"bob","amount_minor":1e30,"currency":"EUR"}`,
		`{"to":"bob","amount_minor":12,"currency":""}`,
		`{"to":"bob","amount_minor":12,"currency":"eur"}`,
		`{"to":"bob","amount_minor":12}`,
		`not json`,
	} {
		if m, err := pay.MoneyIn(json.RawMessage(args)); err == nil {
			t.Errorf("MoneyIn(%s) = %+v, want an error", args, m)
		}
	}
	if m, err := New("noop", "x", steward.KindWrite, func(context.Context, Env, struct{}) (any, error) { return nil, nil }).MoneyIn(nil); m != nil || err != nil {
		t.Errorf("a tool that moves no money: %+v, %v", m, err)
	}
}
