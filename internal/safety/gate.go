// Package safety decides every write the model asks for, in code, never in the prompt. The
// order is fixed (DESIGN §2), first match decides: kill switch → hard caps → mode → standing
// rules → ask the human. The kill switch and money caps plug in as Guards (they arrive with
// the safety issue); mode and standing rules are here.
package safety

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/stewardhq/steward/internal/agent"
)

// Guard is a check that runs before mode and rules and can only refuse (a kill switch, a
// money cap). It returns ok=false with a decision to refuse.
type Guard func(ctx context.Context, tx agent.Tx, req agent.GateRequest) (agent.GateDecision, bool, error)

// Gate implements agent.Gate.
type Gate struct {
	// Guards run first, in order; the first refusal decides.
	Guards []Guard
	// AllowAuto permits owners in mode "auto" to run writes without asking. It is for
	// development only and off unless configured.
	AllowAuto bool
}

var _ agent.Gate = (*Gate)(nil)

// Decide returns the verdict for one write call.
func (g *Gate) Decide(ctx context.Context, tx agent.Tx, req agent.GateRequest) (agent.GateDecision, error) {
	for _, guard := range g.Guards {
		d, ok, err := guard(ctx, tx, req)
		if err != nil {
			return agent.GateDecision{}, err
		}
		if !ok {
			return d, nil
		}
	}
	mode, err := tx.Mode(ctx)
	if err != nil {
		return agent.GateDecision{}, fmt.Errorf("owner mode: %w", err)
	}
	switch mode {
	case "deny":
		return agent.GateDecision{Verdict: agent.Deny, By: "mode:deny", Reason: "the owner has Steward in read-only mode"}, nil
	case "auto":
		if g.AllowAuto && req.Trigger != agent.TriggerWebhook {
			return agent.GateDecision{Verdict: agent.Allow, By: "mode:auto"}, nil
		}
	}
	rules, err := tx.RulesFor(ctx, req.Tool)
	if err != nil {
		return agent.GateDecision{}, err
	}
	return decideByRules(rules, req), nil
}

// decideByRules applies standing rules: any matching deny wins; a matching allow runs the
// call — except for runs triggered by outside data (webhooks), where allow rules never apply
// and a human decides; no match asks the human.
func decideByRules(rules []agent.Rule, req agent.GateRequest) agent.GateDecision {
	var allow *agent.Rule
	for i, r := range rules {
		if !Matches(r, req.Tool, req.Args) {
			continue
		}
		if r.Effect == "deny" {
			return agent.GateDecision{Verdict: agent.Deny, By: "rule:" + r.ID.String(), Reason: "a standing rule of the owner forbids this"}
		}
		if allow == nil {
			allow = &rules[i]
		}
	}
	if allow != nil && req.Trigger != agent.TriggerWebhook {
		return agent.GateDecision{Verdict: agent.Allow, By: "rule:" + allow.ID.String()}
	}
	return agent.GateDecision{Verdict: agent.Ask}
}

// Matches reports whether a rule covers a call: its tool is the call's tool or "*", and
// every key of its predicate is present in the arguments with an equal JSON value.
func Matches(r agent.Rule, tool string, args json.RawMessage) bool {
	if r.Tool != tool && r.Tool != "*" {
		return false
	}
	var pred map[string]any
	if len(r.Predicate) > 0 {
		if err := json.Unmarshal(r.Predicate, &pred); err != nil {
			return false // a predicate we cannot read matches nothing
		}
	}
	if len(pred) == 0 {
		return true
	}
	var a map[string]any
	if err := json.Unmarshal(args, &a); err != nil {
		return false
	}
	for k, want := range pred {
		got, ok := a[k]
		if !ok || !reflect.DeepEqual(got, want) {
			return false
		}
	}
	return true
}
