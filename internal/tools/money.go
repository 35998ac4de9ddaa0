package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/stewardhq/steward/internal/steward"
)

// checkMoney verifies, when the registry is built, that the arguments a money tool names
// exist in its schema as a required integer (the amount) and a required string (the
// currency), so the gate never meets a money call whose amount nobody reads
// (docs/ARCHITECTURE.md §2: money fails closed).
func (t Tool) checkMoney() error {
	if t.Money == nil {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(t.params, &s); err != nil {
		return fmt.Errorf("tool %q: read schema: %w", t.Name, err)
	}
	for _, a := range []struct{ role, name, typ string }{
		{"amount", t.Money.Amount, "integer"},
		{"currency", t.Money.Currency, "string"},
	} {
		if a.name == "" {
			return fmt.Errorf("tool %q: money %s argument not named", t.Name, a.role)
		}
		p, ok := s.Properties[a.name]
		if !ok {
			return fmt.Errorf("tool %q: money %s argument %q is not in its schema", t.Name, a.role, a.name)
		}
		if !bytes.Equal(p.Type, []byte(`"`+a.typ+`"`)) {
			return fmt.Errorf("tool %q: money %s argument %q has type %s, want %q", t.Name, a.role, a.name, p.Type, a.typ)
		}
		if !slices.Contains(s.Required, a.name) {
			return fmt.Errorf("tool %q: money %s argument %q is optional, want required", t.Name, a.role, a.name)
		}
	}
	return nil
}

// MoneyIn reads the amount a call of t moves from its arguments: nil for a tool that moves
// no money, an error when the amount is not a whole, non-negative number of minor units in
// an ISO 4217 code. An unreadable amount is never zero: the gate denies the call.
func (t Tool) MoneyIn(args json.RawMessage) (*steward.Money, error) {
	if t.Money == nil {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return nil, fmt.Errorf("tool %s: arguments: %w", t.Name, err)
	}
	var m steward.Money
	if a := bytes.TrimSpace(fields[t.Money.Amount]); len(a) == 0 || string(a) == "null" {
		return nil, fmt.Errorf("tool %s: no amount %q", t.Name, t.Money.Amount)
	}
	if err := json.Unmarshal(fields[t.Money.Amount], &m.Minor); err != nil {
		return nil, fmt.Errorf("tool %s: amount %q: %w", t.Name, t.Money.Amount, err)
	}
	if err := json.Unmarshal(fields[t.Money.Currency], &m.Currency); err != nil {
		return nil, fmt.Errorf("tool %s: currency %q: %w", t.Name, t.Money.Currency, err)
	}
	if m.Minor < 0 {
		return nil, fmt.Errorf("tool %s: amount %d is negative", t.Name, m.Minor)
	}
	if !steward.IsCurrencyCode(m.Currency) {
		return nil, fmt.Errorf("tool %s: %q is not an ISO 4217 currency code", t.Name, m.Currency)
	}
	return &m, nil
}
