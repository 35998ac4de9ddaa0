package safety

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
)

func rule(tool, effect, pred string) agent.Rule {
	return agent.Rule{ID: uuid.New(), Tool: tool, Effect: effect, Predicate: json.RawMessage(pred)}
}

func TestDecideByRules(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"title":"buy milk","notes":"2 l"}`)
	cases := []struct {
		name    string
		rules   []agent.Rule
		trigger agent.Trigger
		want    agent.Verdict
	}{
		{"no rules asks", nil, agent.TriggerChat, agent.Ask},
		{"allow rule runs", []agent.Rule{rule("create_task", "allow", `{}`)}, agent.TriggerChat, agent.Allow},
		{"wildcard allow", []agent.Rule{rule("*", "allow", `{}`)}, agent.TriggerChat, agent.Allow},
		{"deny beats allow", []agent.Rule{rule("create_task", "allow", `{}`), rule("create_task", "deny", `{}`)}, agent.TriggerChat, agent.Deny},
		{"wildcard deny beats allow", []agent.Rule{rule("create_task", "allow", `{}`), rule("*", "deny", `{}`)}, agent.TriggerChat, agent.Deny},
		{"predicate matches", []agent.Rule{rule("create_task", "allow", `{"title":"buy milk"}`)}, agent.TriggerChat, agent.Allow},
		{"predicate differs", []agent.Rule{rule("create_task", "allow", `{"title":"sell milk"}`)}, agent.TriggerChat, agent.Ask},
		{"predicate key missing", []agent.Rule{rule("create_task", "allow", `{"due":"2026-12-01"}`)}, agent.TriggerChat, agent.Ask},
		{"other tool", []agent.Rule{rule("notify", "allow", `{}`)}, agent.TriggerChat, agent.Ask},
		{"webhook ignores allow", []agent.Rule{rule("create_task", "allow", `{}`)}, agent.TriggerWebhook, agent.Ask},
		{"webhook keeps deny", []agent.Rule{rule("create_task", "deny", `{}`)}, agent.TriggerWebhook, agent.Deny},
		{"unreadable predicate matches nothing", []agent.Rule{rule("create_task", "deny", `[1]`)}, agent.TriggerChat, agent.Ask},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := decideByRules(tc.rules, agent.GateRequest{Tool: "create_task", Args: args, Trigger: tc.trigger})
			if d.Verdict != tc.want {
				t.Fatalf("verdict = %s (by %s), want %s", d.Verdict, d.By, tc.want)
			}
			if d.Verdict != agent.Ask && d.By == "" {
				t.Fatalf("decision without who decided")
			}
		})
	}
}
