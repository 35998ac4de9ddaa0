package rules_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/mailtools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
	"github.com/stewardhq/steward/internal/tools/tradingtools"
)

// A rule is checked before any transaction: a bad rule is invalid, and a service built
// without a tool registry refuses every rule rather than storing one it could not check.
func TestCreateChecksBeforeStoring(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := &rules.Service{Tools: toolstest.Registry()} // no Store: nothing may reach it
	for name, r := range map[string]rules.NewRule{
		"no tool":         {Effect: "allow"},
		"bad effect":      {Tool: "*", Effect: "maybe"},
		"array predicate": {Tool: "*", Effect: "deny", Predicate: []byte(`[1]`)},
		"unknown tool":    {Tool: "launch_rockets", Effect: "allow"},
		"NUL in note":     {Tool: "*", Effect: "deny", Note: "a\x00b"},
		"bidi in note":    {Tool: "*", Effect: "deny", Note: "safe \u202egnihtyna"},
		"NUL in pred key": {Tool: "*", Effect: "deny", Predicate: []byte(`{"a\u0000":1}`)},
		"unknown match":   {Tool: "*", Effect: "deny", Match: "subset"},
		"unknown arg":     {Tool: "create_task", Effect: "allow", Predicate: []byte(`{"titel":"x"}`)},
		"no write has it": {Tool: "*", Effect: "deny", Predicate: []byte(`{"colour":"red"}`)},
	} {
		if _, err := svc.Create(ctx, uuid.New(), r); steward.ErrorCode(err) != steward.CodeInvalid {
			t.Errorf("%s: err = %v, want invalid", name, err)
		}
	}
	bare := &rules.Service{}
	_, err := bare.Create(ctx, uuid.New(), rules.NewRule{Tool: "*", Effect: "deny"})
	if err == nil || steward.ErrorCode(err) != steward.CodeInternal {
		t.Fatalf("no registry: err = %v, want an internal error", err)
	}
}

// TestDescribe: what the web app and the CLI say a rule covers.
func TestDescribe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool, match, pred, want string
	}{
		{"create_task", steward.MatchExact, `{"title": "milk", "due": "2026-12-31"}`, `only a call of create_task whose arguments are exactly {"due":"2026-12-31","title":"milk"}`},
		{"create_task", steward.MatchExact, `{}`, `only a call of create_task with no arguments`},
		{"create_task", steward.MatchPattern, `{"title": "milk", "due": "2026-12-31"}`, `any call of create_task whose due is "2026-12-31" and title is "milk", other arguments anything`},
		{"*", steward.MatchPattern, `{}`, `any call of any write tool, any arguments`},
		{"*", steward.MatchExact, `{"title": "x"}`, `only a call of any write tool whose arguments are exactly {"title":"x"}`},
	} {
		if got := rules.Describe(steward.Rule{Tool: tc.tool, Match: tc.match, Predicate: []byte(tc.pred)}); got != tc.want {
			t.Errorf("%s %s %s: %q, want %q", tc.tool, tc.match, tc.pred, got, tc.want)
		}
	}
}

// TestAllowRuleTheGateIgnoresIsRefused: an allow rule for a tool the gate asks about every
// time — an order to a broker (always-ask), a mail leaving Steward (external) — would be
// listed as "allow" and never apply; it is refused in words naming why, before anything is
// stored. A deny rule for the same tool is honoured, so it is taken.
func TestAllowRuleTheGateIgnoresIsRefused(t *testing.T) {
	t.Parallel()
	reg, err := tools.NewRegistry(append(append(toolstest.Tools(), mailtools.Tools(nil, nil)...), tradingtools.Tools(nil, false)...)...)
	if err != nil {
		t.Fatal(err)
	}
	o := testdb.Open(t, 5)
	owner, _ := o.Owner(t, "alice")
	svc := &rules.Service{Store: o.Store, Tools: reg}
	ctx := context.Background()
	for tool, why := range map[string]string{"place_order": "only your yes", "send_mail": "sends data out"} {
		_, err := svc.Create(ctx, owner.ID, rules.NewRule{Tool: tool, Effect: "allow"})
		if steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), "never") || !strings.Contains(err.Error(), why) {
			t.Errorf("allow %s: err = %v, want invalid, saying the rule would never apply because %s", tool, err, why)
		}
		if _, err := svc.Create(ctx, owner.ID, rules.NewRule{Tool: tool, Effect: "deny"}); err != nil {
			t.Errorf("deny %s: %v, want it taken", tool, err)
		}
	}
	list, err := svc.List(ctx, owner.ID)
	if err != nil || len(list) != 2 || list[0].Effect != "deny" || list[1].Effect != "deny" {
		t.Errorf("rules = %+v, %v; want only the two deny rules", list, err)
	}
}
