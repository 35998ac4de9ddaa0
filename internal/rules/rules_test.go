package rules_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools/toolstest"
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
