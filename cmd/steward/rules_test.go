package main

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/testdb"
)

// TestRulesCommand (issue 27 §4): `steward rules add` stores an exact rule unless --match
// pattern says otherwise, and `rules add` and `rules list` say in words what each rule covers;
// a predicate naming an argument the tool does not have is refused (exit 1, nothing stored);
// `rules remove` deletes one; --json lists the match kind.
func TestRulesCommand(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	wantOK(t, runCLI(t, env, "owners", "add", "alice"))
	pattern := `allow any call of create_task whose title is "milk", other arguments anything`
	exact := `allow only a call of create_task whose arguments are exactly {"title":"bread"}`
	r := runCLI(t, env, "rules", "add", "create_task", "--effect", "allow", "--predicate", `{"title":"milk"}`, "--match", "pattern")
	wantOK(t, r)
	if !strings.Contains(r.stdout, pattern) {
		t.Errorf("rules add --match pattern printed %q, want it to say %q", r.stdout, pattern)
	}
	r = runCLI(t, env, "rules", "add", "create_task", "--effect", "allow", "--predicate", `{"title":"bread"}`)
	wantOK(t, r)
	if !strings.Contains(r.stdout, exact) {
		t.Errorf("rules add printed %q, want it to say %q", r.stdout, exact)
	}
	wantOneLineError(t, runCLI(t, env, "rules", "add", "create_task", "--effect", "allow", "--predicate", `{"titel":"x"}`), `"titel"`)
	if r := runCLI(t, env, "rules", "add", "create_task"); r.code != 2 {
		t.Errorf("rules add without --effect: exit %d, want 2", r.code)
	}
	r = runCLI(t, env, "rules", "list")
	wantOK(t, r)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], pattern) || !strings.Contains(lines[1], exact) {
		t.Fatalf("rules list:\n%s\nwant the pattern rule, then the exact one", r.stdout)
	}
	r = runCLI(t, env, "rules", "list", "--json")
	if !strings.Contains(r.stdout, `"match":"pattern"`) || !strings.Contains(r.stdout, `"match":"exact"`) {
		t.Errorf("rules list --json:\n%s", r.stdout)
	}
	wantOK(t, runCLI(t, env, "rules", "remove", strings.Fields(lines[0])[0]))
	if r := runCLI(t, env, "rules", "list"); strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, exact) {
		t.Errorf("rules list after remove:\n%s", r.stdout)
	}
}
