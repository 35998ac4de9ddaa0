package rules_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// A rule is checked before any transaction: a bad rule is invalid, and a service built
// without a tool registry refuses every rule rather than storing one it could not check.
func TestCreateChecksBeforeStoring(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := &rules.Service{Tools: tools.DefaultRegistry()} // no Store: nothing may reach it
	for name, r := range map[string]rules.NewRule{
		"no tool":         {Effect: "allow"},
		"bad effect":      {Tool: "*", Effect: "maybe"},
		"array predicate": {Tool: "*", Effect: "deny", Predicate: []byte(`[1]`)},
		"unknown tool":    {Tool: "launch_rockets", Effect: "allow"},
		"NUL in note":     {Tool: "*", Effect: "deny", Note: "a\x00b"},
		"NUL in pred key": {Tool: "*", Effect: "deny", Predicate: []byte(`{"a\u0000":1}`)},
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
