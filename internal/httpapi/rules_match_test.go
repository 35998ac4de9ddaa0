package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
)

// createTaskWith is a scripted batch asking for one create_task with these raw arguments.
func createTaskWith(id, args string) scripted.Step {
	return scripted.Reply(scripted.Calls(scripted.Call(id, "create_task", args)))
}

// listedRule is a rule as GET /v1/rules shows it.
type listedRule struct {
	Tool      string          `json:"tool"`
	Effect    string          `json:"effect"`
	Predicate json.RawMessage `json:"predicate"`
	Match     string          `json:"match"`
}

// rulesOf lists alice's standing rules through GET /v1/rules.
func (e *env) rulesOf() []listedRule {
	e.t.Helper()
	resp := e.do(request{method: "GET", path: "/v1/rules", key: e.key})
	var list struct{ Rules []listedRule }
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &list) != nil {
		e.t.Fatalf("GET /v1/rules: %d %s", resp.status, resp.body)
	}
	return list.Rules
}

// TestAlwaysArgsRuleMatchesOnlyTheseExactArguments (issue 27 §4): "always allow, for exactly
// these arguments" on the approval card stores an exact rule. The same arguments run at once;
// the same title with an extra argument (a due date) is asked again.
func TestAlwaysArgsRuleMatchesOnlyTheseExactArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil,
		createTaskWith("w1", `{"title":"always-me"}`), text("Added."),
		createTaskWith("w2", `{"title":"always-me","due":"2026-12-31"}`),
		createTaskWith("w3", `{"title":"always-me"}`), text("Added again."))
	v := e.chat("remind me: always-me")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
		t.Fatalf("view = %+v, want suspended on create_task", v)
	}
	if done := viewOf(t, e.confirm(v.TurnID, alwaysDecision(v, "args"))); done.Status != steward.StatusCompleted {
		t.Fatalf("confirm with always args = %+v", done)
	}
	if rs := e.rulesOf(); len(rs) != 1 || rs[0].Match != "exact" {
		t.Errorf("rules after always args = %+v, want one rule with match \"exact\"", rs)
	}
	extra := e.chat("the same with a due date")
	if extra.Status != steward.StatusSuspended || len(extra.Pending) != 1 || !strings.Contains(string(extra.Pending[0].Args), "2026-12-31") {
		t.Fatalf("create_task with an extra due argument ran without asking: status %s, tasks %+v", extra.Status, e.tasks())
	}
	if same := e.chat("always-me again"); same.Status != steward.StatusCompleted || len(e.tasks()) != 2 {
		t.Fatalf("the approved arguments again: %+v, %d tasks; want it run by the rule", same, len(e.tasks()))
	}
}

// TestRuleAPIIsExactUnlessItSaysPattern (issue 27 §4): POST /v1/rules with a predicate stores
// an exact rule unless the body says "match": "pattern"; an exact rule does not run a call
// with an extra argument, a pattern rule does; a rule without a predicate covers any
// arguments and is listed as a pattern.
func TestRuleAPIIsExactUnlessItSaysPattern(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil,
		createTaskWith("w1", `{"title":"exact-one","notes":"x"}`),
		createTaskWith("w2", `{"title":"groceries","notes":"oat milk"}`), text("Added groceries."))
	create := func(body string) listedRule {
		t.Helper()
		resp := e.do(request{method: "POST", path: "/v1/rules", key: e.key, body: body})
		var r listedRule
		if resp.status != http.StatusCreated || json.Unmarshal(resp.body, &r) != nil {
			t.Fatalf("POST /v1/rules %s: %d %s", body, resp.status, resp.body)
		}
		return r
	}
	if r := create(`{"tool":"create_task","effect":"allow","predicate":{"title":"exact-one"}}`); r.Match != "exact" {
		t.Errorf("rule with a predicate and no match: match %q, want \"exact\"", r.Match)
	}
	if v := e.chat("exact-one with notes"); v.Status != steward.StatusSuspended {
		t.Fatalf("an exact API rule {\"title\":\"exact-one\"} ran {\"title\":\"exact-one\",\"notes\":\"x\"} without asking: status %s, tasks %+v", v.Status, e.tasks())
	}
	if r := create(`{"tool":"create_task","effect":"allow","predicate":{"title":"groceries"},"match":"pattern"}`); r.Match != "pattern" {
		t.Errorf("rule with match pattern: match %q", r.Match)
	}
	if v := e.chat("groceries with notes"); v.Status != steward.StatusCompleted || len(e.tasks()) != 1 {
		t.Fatalf("a pattern rule on the title: %+v, %d tasks; want it run", v, len(e.tasks()))
	}
	if r := create(`{"tool":"notify","effect":"deny"}`); r.Match != "pattern" {
		t.Errorf("rule without a predicate: match %q, want \"pattern\" (any arguments)", r.Match)
	}
	got := errorOf(t, e.do(request{method: "POST", path: "/v1/rules", key: e.key,
		body: `{"tool":"create_task","effect":"allow","predicate":{"title":"x"},"match":"subset"}`}), http.StatusUnprocessableEntity, "invalid")
	if !strings.Contains(got.Error.Message, `"exact"`) || !strings.Contains(got.Error.Message, `"pattern"`) {
		t.Errorf("unknown match: message %q does not name the kinds", got.Error.Message)
	}
	if n := len(e.rulesOf()); n != 3 {
		t.Errorf("%d rules stored, want 3", n)
	}
}

// TestRuleNamingAnUnknownArgumentIsRefused (issue 27 §4): a predicate naming an argument the
// tool does not have would never match what it seems to say; it is refused with 422 and a
// message naming the argument and the tool's arguments, and nothing is stored. So is a rule
// for an unknown tool, and a "*" rule on an argument no write tool has.
func TestRuleNamingAnUnknownArgumentIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for body, want := range map[string][]string{
		`{"tool":"create_task","effect":"allow","predicate":{"titel":"milk"}}`:                              {`"titel"`, "create_task", "title, due, notes"},
		`{"tool":"create_task","effect":"deny","predicate":{"title":"x","colour":"red"},"match":"pattern"}`: {`"colour"`},
		`{"tool":"*","effect":"deny","predicate":{"colour":"red"}}`:                                         {`"colour"`, "no write tool"},
		`{"tool":"launch_rockets","effect":"allow"}`:                                                        {`"launch_rockets"`, "not a write tool"},
	} {
		got := errorOf(t, e.do(request{method: "POST", path: "/v1/rules", key: e.key, body: body}), http.StatusUnprocessableEntity, "invalid")
		for _, w := range want {
			if !strings.Contains(got.Error.Message, w) {
				t.Errorf("%s: message %q does not say %q", body, got.Error.Message, w)
			}
		}
	}
	if rs := e.rulesOf(); len(rs) != 0 {
		t.Fatalf("refused rules were stored: %+v", rs)
	}
	resp := e.do(request{method: "POST", path: "/v1/rules", key: e.key, body: `{"tool":"*","effect":"deny","predicate":{"title":"wire money"},"match":"pattern"}`})
	if resp.status != http.StatusCreated {
		t.Fatalf("a * rule on an argument write tools have: %d %s", resp.status, resp.body)
	}
}
