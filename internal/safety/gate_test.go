package safety

import (
	"encoding/json"
	"testing"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
)

// rule is a pattern rule; exact an exact one.
func rule(tool, effect, pred string) steward.Rule {
	return steward.Rule{ID: uuid.New(), Tool: tool, Effect: effect, Predicate: json.RawMessage(pred), Match: steward.MatchPattern}
}

func exact(tool, effect, pred string) steward.Rule {
	r := rule(tool, effect, pred)
	r.Match = steward.MatchExact
	return r
}

// TestUntrustedTurnIgnoresAllowRules: a chat turn with recalled webhook text in its context
// is gated like a webhook turn (issue 10, item 2).
func TestUntrustedTurnIgnoresAllowRules(t *testing.T) {
	t.Parallel()
	req := steward.GateRequest{Tool: "create_task", Args: json.RawMessage(`{"title":"wire money"}`), Trigger: steward.TriggerChat, Untrusted: true}
	if d := decideByRules([]steward.Rule{rule("create_task", "allow", `{}`)}, req); d.Verdict != steward.Ask {
		t.Errorf("allow rule in an untrusted turn: %s (by %s), want ask", d.Verdict, d.By)
	}
	if d := decideByRules([]steward.Rule{rule("create_task", "deny", `{}`)}, req); d.Verdict != steward.Deny {
		t.Errorf("deny rule in an untrusted turn: %s, want deny", d.Verdict)
	}
}

func TestDecideByRules(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"title":"buy milk","notes":"2 l"}`)
	cases := []struct {
		name    string
		rules   []steward.Rule
		trigger steward.Trigger
		want    steward.Verdict
	}{
		{"no rules asks", nil, steward.TriggerChat, steward.Ask},
		{"allow rule runs", []steward.Rule{rule("create_task", "allow", `{}`)}, steward.TriggerChat, steward.Allow},
		{"wildcard allow", []steward.Rule{rule("*", "allow", `{}`)}, steward.TriggerChat, steward.Allow},
		{"deny beats allow", []steward.Rule{rule("create_task", "allow", `{}`), rule("create_task", "deny", `{}`)}, steward.TriggerChat, steward.Deny},
		{"wildcard deny beats allow", []steward.Rule{rule("create_task", "allow", `{}`), rule("*", "deny", `{}`)}, steward.TriggerChat, steward.Deny},
		{"predicate matches", []steward.Rule{rule("create_task", "allow", `{"title":"buy milk"}`)}, steward.TriggerChat, steward.Allow},
		{"predicate differs", []steward.Rule{rule("create_task", "allow", `{"title":"sell milk"}`)}, steward.TriggerChat, steward.Ask},
		{"predicate key missing", []steward.Rule{rule("create_task", "allow", `{"due":"2026-12-01"}`)}, steward.TriggerChat, steward.Ask},
		{"other tool", []steward.Rule{rule("notify", "allow", `{}`)}, steward.TriggerChat, steward.Ask},
		{"webhook ignores allow", []steward.Rule{rule("create_task", "allow", `{}`)}, steward.TriggerWebhook, steward.Ask},
		{"webhook keeps deny", []steward.Rule{rule("create_task", "deny", `{}`)}, steward.TriggerWebhook, steward.Deny},
		{"unreadable predicate matches nothing", []steward.Rule{rule("create_task", "deny", `[1]`)}, steward.TriggerChat, steward.Ask},
		{"exact: the same arguments in another order and spacing", []steward.Rule{exact("create_task", "allow", `{ "notes": "2 l", "title": "buy milk" }`)}, steward.TriggerChat, steward.Allow},
		{"exact: a subset of the arguments does not match", []steward.Rule{exact("create_task", "allow", `{"title":"buy milk"}`)}, steward.TriggerChat, steward.Ask},
		{"exact: more than the arguments does not match", []steward.Rule{exact("create_task", "allow", `{"title":"buy milk","notes":"2 l","due":"2026-12-31"}`)}, steward.TriggerChat, steward.Ask},
		{"exact: empty matches only a call without arguments", []steward.Rule{exact("create_task", "allow", `{}`)}, steward.TriggerChat, steward.Ask},
		{"exact wildcard deny", []steward.Rule{exact("*", "deny", `{"notes":"2 l","title":"buy milk"}`)}, steward.TriggerChat, steward.Deny},
		{"a rule of unknown match matches nothing", []steward.Rule{{ID: uuid.New(), Tool: "create_task", Effect: "allow", Predicate: json.RawMessage(`{}`)}}, steward.TriggerChat, steward.Ask},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := decideByRules(tc.rules, steward.GateRequest{Tool: "create_task", Args: args, Trigger: tc.trigger})
			if d.Verdict != tc.want {
				t.Fatalf("verdict = %s (by %s), want %s", d.Verdict, d.By, tc.want)
			}
			if d.Verdict != steward.Ask && d.By == "" {
				t.Fatalf("decision without who decided")
			}
		})
	}
}

// TestNoAllowRulesForToolsWithoutAlways: for money and egress tools (no "always"), allow
// rules never run a call without asking; deny rules still refuse.
func TestNoAllowRulesForToolsWithoutAlways(t *testing.T) {
	t.Parallel()
	req := steward.GateRequest{Tool: "pay", Args: json.RawMessage(`{"to":"bob"}`), Trigger: steward.TriggerChat, Rules: steward.RulesNeverAllow}
	for _, tc := range []struct {
		rules []steward.Rule
		want  steward.Verdict
	}{
		{[]steward.Rule{rule("pay", "allow", `{}`)}, steward.Ask},
		{[]steward.Rule{rule("*", "allow", `{"to":"bob"}`)}, steward.Ask},
		{[]steward.Rule{rule("pay", "allow", `{}`), rule("pay", "deny", `{}`)}, steward.Deny},
	} {
		if d := decideByRules(tc.rules, req); d.Verdict != tc.want {
			t.Errorf("rules %+v: verdict %s (by %s), want %s", tc.rules, d.Verdict, d.By, tc.want)
		}
	}
}

// TestTaintedEgressIgnoresAllowRules: an egress call of a tainted turn is asked with reason
// "tainted" despite an allow rule; a deny rule still refuses it; a call that carries nothing
// out is not affected by the taint.
func TestTaintedEgressIgnoresAllowRules(t *testing.T) {
	t.Parallel()
	req := steward.GateRequest{Tool: "web_fetch", Args: json.RawMessage(`{"url":"http://x/collect"}`), Trigger: steward.TriggerChat, Egress: true, Taint: "tool:web_fetch"}
	if d := decideByRules([]steward.Rule{rule("*", "allow", `{}`)}, req); d.Verdict != steward.Ask || d.Reason != steward.ReasonTainted {
		t.Errorf("allow rule, tainted egress: %s (%q), want ask (tainted)", d.Verdict, d.Reason)
	}
	if d := decideByRules([]steward.Rule{rule("*", "deny", `{}`)}, req); d.Verdict != steward.Deny {
		t.Errorf("deny rule, tainted egress: %s, want deny", d.Verdict)
	}
	req.Egress, req.Tool = false, "create_task"
	if d := decideByRules([]steward.Rule{rule("*", "allow", `{}`)}, req); d.Verdict != steward.Allow {
		t.Errorf("allow rule, tainted non-egress: %s, want allow", d.Verdict)
	}
}
