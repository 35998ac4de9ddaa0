package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"
)

// alwaysDecision approves v's one pending call with the given raw "always" value.
func alwaysDecision(v steward.View, always any) []map[string]any {
	ds := approveAll(v)
	ds[0]["always"] = always
	return ds
}

// TestAlwaysTrueAllowsOnlyTheApprovedArguments: approving "water plants" with the first API's
// "always": true stores a rule for exactly those arguments, so a create_task with other
// arguments ("wire 5000 EUR to mallory") is still asked; the same arguments run at once.
func TestAlwaysTrueAllowsOnlyTheApprovedArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil,
		createTask("w1", "water plants"), text("Added."),
		createTask("w2", "wire 5000 EUR to mallory"),
		createTask("w3", "water plants"), text("Added again."))
	v := e.chat("remind me to water plants")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 || !v.Pending[0].AlwaysOffered {
		t.Fatalf("view = %+v, want suspended on create_task with always offered", v)
	}
	if done := viewOf(t, e.confirm(v.TurnID, alwaysDecision(v, true))); done.Status != steward.StatusCompleted {
		t.Fatalf("confirm with always = %+v", done)
	}
	other := e.chat("add a task: wire 5000 EUR to mallory")
	if other.Status != steward.StatusSuspended || len(other.Pending) != 1 || !strings.Contains(string(other.Pending[0].Args), "mallory") {
		t.Fatalf("a create_task with other arguments ran without asking: %+v, tasks %+v", other, e.tasks())
	}
	same := e.chat("water plants again")
	if same.Status != steward.StatusCompleted || len(e.tasks()) != 2 {
		t.Fatalf("the approved arguments again: %+v, %d tasks; want it run by the rule", same, len(e.tasks()))
	}
}

// TestAlwaysToolAllowsAnyArguments: the explicit scope "tool" lets later calls of the tool
// with any arguments run without asking.
func TestAlwaysToolAllowsAnyArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil,
		createTask("w1", "water plants"), text("Added."),
		createTask("w2", "buy bread"), text("Added bread."))
	v := e.chat("remind me to water plants")
	if done := viewOf(t, e.confirm(v.TurnID, alwaysDecision(v, "tool"))); done.Status != steward.StatusCompleted {
		t.Fatalf("confirm with always tool = %+v", done)
	}
	if next := e.chat("and bread"); next.Status != steward.StatusCompleted || len(e.tasks()) != 2 {
		t.Fatalf("with an always-tool rule: %+v, %d tasks", next, len(e.tasks()))
	}
}

// TestAlwaysUnknownScopeIsRefused: a scope other than "args", "tool", true or false is a
// client error, and the turn stays suspended with nothing run.
func TestAlwaysUnknownScopeIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, createTask("w1", "water plants"), text("Added."))
	v := e.chat("remind me to water plants")
	for _, bad := range []any{"everything", "", 1, map[string]any{"title": "x"}} {
		got := errorOf(t, e.confirm(v.TurnID, alwaysDecision(v, bad)), http.StatusUnprocessableEntity, "invalid")
		if !strings.Contains(got.Error.Message, `"tool"`) {
			t.Errorf("always %v: message %q does not name the scopes", bad, got.Error.Message)
		}
	}
	if n := len(e.tasks()); n != 0 || e.turnStatus(v.TurnID) != steward.StatusSuspended {
		t.Fatalf("after refused confirms: %d tasks, turn %s; want 0 and suspended", n, e.turnStatus(v.TurnID))
	}
}
