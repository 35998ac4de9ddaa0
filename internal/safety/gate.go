// Package safety decides every write the model asks for, in code, never in the prompt, and
// admits or stops turns. The gate's order is fixed (docs/ARCHITECTURE.md §2), first match decides: kill
// switch → hard money caps → read-only mode → deny rules → household policy (asks) →
// tainted egress (asks) → auto mode → allow rules → ask the human.
package safety

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/tools"
)

// Gate implements agent.Gate.
type Gate struct {
	// AllowAuto permits owners in mode "auto" to run writes without asking. It is for
	// development only and off unless configured.
	AllowAuto bool
}

var _ agent.Gate = (*Gate)(nil)

// Decide returns the verdict for one write call.
//
// A household policy naming other members for the call is decided before the owner's own
// allow rules and auto mode, like the caps: the call is asked (ReasonHousehold), so the
// suspension files the members' votes. It grants nothing: a deny, by the caps, read-only
// mode or a rule, still refuses.
func (g *Gate) Decide(ctx context.Context, tx agent.Tx, req steward.GateRequest) (steward.GateDecision, error) {
	// The rules and the household's policy first, in one round trip: in a batch of
	// decisions (agent.Tx.Together) with the other calls' too.
	var rules []steward.Rule
	var governed bool
	if err := tx.Together(ctx, func() (err error) {
		rules, err = tx.Rules.For(ctx, req.Tool)
		return err
	}, func() (err error) {
		governed, err = tx.Household.Governs(ctx, req.Tool, req.Money)
		return err
	}); err != nil {
		return steward.GateDecision{}, err
	}
	if d, refused, err := guards(ctx, tx, req); err != nil || refused {
		return d, err
	}
	mode, err := tx.Safety.Mode(ctx)
	if err != nil {
		return steward.GateDecision{}, fmt.Errorf("owner mode: %w", err)
	}
	if mode == "deny" {
		return steward.GateDecision{Verdict: steward.Deny, By: "mode:deny", Reason: "the owner has Steward in read-only mode"}, nil
	}
	d := decideByRules(rules, req)
	switch {
	case d.Verdict == steward.Deny || d.Reason != "":
		return d, nil // a deny rule, or a tainted egress call the owner decides
	case governed:
		return steward.GateDecision{Verdict: steward.Ask, Reason: steward.ReasonHousehold}, nil
	case mode == "auto" && g.AllowAuto && !untrusted(req) && req.Rules.AutoMayRun():
		return steward.GateDecision{Verdict: steward.Allow, By: "mode:auto"}, nil
	}
	return d, nil
}

// Enforce re-checks the kill switch and caps right before a write runs and charges the
// ledger, in the write's own transaction.
func (g *Gate) Enforce(ctx context.Context, tx agent.Tx, req steward.GateRequest) (steward.GateDecision, error) {
	if d, refused, err := guards(ctx, tx, req); err != nil || refused {
		return d, err
	}
	if req.Money != nil {
		if err := tx.Safety.RecordSpend(ctx, req.TurnID, req.CallID, req.Tool, *req.Money); err != nil {
			return steward.GateDecision{}, err
		}
	}
	return steward.GateDecision{Verdict: steward.Allow}, nil
}

// guards are the checks no rule, mode or human can override: the kill switch and the hard
// money caps (per action, and over the rolling window of the durable ledger).
func guards(ctx context.Context, tx agent.Tx, req steward.GateRequest) (steward.GateDecision, bool, error) {
	c, err := tx.Safety.Controls(ctx)
	if err != nil {
		return steward.GateDecision{}, false, err
	}
	if killed, why := c.Killed(); killed {
		return steward.GateDecision{Verdict: steward.Deny, By: "kill", Reason: why}, true, nil
	}
	if !req.MovesMoney && req.Money == nil {
		return steward.GateDecision{}, false, nil
	}
	if err := readable(req.Money); err != nil {
		return steward.GateDecision{Verdict: steward.Deny, By: "cap:amount", Reason: err.Error()}, true, nil
	}
	m := *req.Money
	limit, ok, err := tx.Safety.Cap(ctx, m.Currency)
	if err != nil || !ok {
		return steward.GateDecision{}, false, err
	}
	if m.Minor > limit.PerActionMinor {
		return steward.GateDecision{Verdict: steward.Deny, By: "cap:per_action",
			Reason: fmt.Sprintf("%d %s exceeds the per-action cap of %d", m.Minor, m.Currency, limit.PerActionMinor)}, true, nil
	}
	spent, err := tx.Safety.SpentInWindow(ctx, m.Currency, limit.Window)
	if err != nil {
		return steward.GateDecision{}, false, err
	}
	if spent+m.Minor > limit.WindowMinor {
		return steward.GateDecision{Verdict: steward.Deny, By: "cap:window",
			Reason: fmt.Sprintf("%d %s more would exceed the cap of %d per %s (%d already spent)", m.Minor, m.Currency, limit.WindowMinor, limit.Window, spent)}, true, nil
	}
	return steward.GateDecision{}, false, nil
}

// readable checks the amount of a money call: present, not negative, in an ISO 4217 code.
// An amount the gate cannot read is refused, never taken as zero (money fails closed).
func readable(m *steward.Money) error {
	if m == nil {
		return errors.New("the amount of this payment could not be read: give a whole number of minor units and an ISO 4217 currency code")
	}
	if m.Minor < 0 {
		return fmt.Errorf("the amount %d is negative", m.Minor)
	}
	if !steward.IsCurrencyCode(m.Currency) {
		return fmt.Errorf("%q is not an ISO 4217 currency code (three capital letters, e.g. EUR)", m.Currency)
	}
	return nil
}

// decideByRules applies standing rules: any matching deny wins; a matching allow runs the
// call — except for runs triggered by outside data (webhooks), for tools that do not offer
// "always" (money and egress), and for egress calls of a tainted turn, where allow rules
// never apply and a human decides; no match asks the human.
func decideByRules(rules []steward.Rule, req steward.GateRequest) steward.GateDecision {
	var allow *steward.Rule
	for i, r := range rules {
		if !Matches(r, req.Tool, req.Args) {
			continue
		}
		if r.Effect == "deny" {
			return steward.GateDecision{Verdict: steward.Deny, By: "rule:" + r.ID.String(), Reason: "a standing rule of the owner forbids this"}
		}
		if allow == nil {
			allow = &rules[i]
		}
	}
	if tainted(req) {
		return steward.GateDecision{Verdict: steward.Ask, Reason: steward.ReasonTainted}
	}
	if allow != nil && !untrusted(req) && req.Rules.RulesMayRun() {
		return steward.GateDecision{Verdict: steward.Allow, By: "rule:" + allow.ID.String()}
	}
	return steward.GateDecision{Verdict: steward.Ask}
}

// tainted reports whether a call can carry data out of a turn that took in untrusted
// content: the owner decides it, whatever a standing rule or auto mode says
// (docs/ARCHITECTURE.md §3).
func tainted(req steward.GateRequest) bool {
	return req.Egress && req.Taint != ""
}

// untrusted reports whether a call's turn has untrusted text in its context — a webhook's
// payload, as its message or recalled from memory — so only the owner may allow its writes.
func untrusted(req steward.GateRequest) bool {
	return req.Trigger == steward.TriggerWebhook || req.Trigger == steward.TriggerMCP || req.Untrusted
}

// Matches reports whether a rule covers a call: its tool is the call's tool or "*", and
// its predicate matches the arguments as the rule says — exact: the arguments' canonical
// JSON (tools.CanonicalArgs, what the args hash covers) is the predicate's; pattern: every
// key of the predicate is present in the arguments with an equal JSON value. A rule or
// arguments that cannot be read match nothing.
func Matches(r steward.Rule, tool string, args json.RawMessage) bool {
	if r.Tool != tool && r.Tool != "*" {
		return false
	}
	switch r.Match {
	case steward.MatchExact:
		want, err := tools.CanonicalArgs(r.Predicate)
		if err != nil {
			return false
		}
		got, err := tools.CanonicalArgs(args)
		return err == nil && bytes.Equal(got, want)
	case steward.MatchPattern:
		return subset(r.Predicate, args)
	}
	return false
}

// subset reports whether every key of the predicate pred is in args with an equal value.
func subset(pred, args json.RawMessage) bool {
	var p map[string]any
	if len(pred) > 0 {
		if err := json.Unmarshal(pred, &p); err != nil {
			return false
		}
	}
	if len(p) == 0 {
		return true
	}
	var a map[string]any
	if err := json.Unmarshal(args, &a); err != nil {
		return false
	}
	for k, want := range p {
		got, ok := a[k]
		if !ok || !reflect.DeepEqual(got, want) {
			return false
		}
	}
	return true
}
