package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/testdb"
)

func TestHouseholdsCLI(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	ids := map[string]string{}
	for _, name := range []string{"alice", "bob", "carol"} {
		r := runCLI(t, env, "owners", "add", "--json", name)
		wantOK(t, r)
		var added map[string]string
		if err := json.Unmarshal([]byte(r.stdout), &added); err != nil {
			t.Fatal(err)
		}
		ids[name] = added["owner_id"]
	}
	wantOK(t, runCLI(t, env, "households", "create", "home"))
	wantOK(t, runCLI(t, env, "households", "add", "home", ids["alice"]))
	wantOK(t, runCLI(t, env, "households", "add", "home", ids["bob"]))

	bad := []struct {
		args []string
		want string
	}{
		{[]string{"households", "create", "home"}, "already exists"},
		{[]string{"households", "create", "Bad Name"}, "lowercase"},
		{[]string{"households", "add", "home", "not-an-id"}, "not an owner id"},
		{[]string{"households", "add", "nowhere", ids["carol"]}, "not found"},
		{[]string{"households", "policy", "add", "home", "--tool", "create_task", "--approvers", ids["carol"]}, "not a member"},
		{[]string{"households", "policy", "add", "home", "--tool", "pay", "--min-amount", "-5", "--approvers", ids["bob"]}, "--min-amount"},
		{[]string{"households", "policy", "add", "home", "--tool", "pay"}, "--approvers"},
	}
	for _, b := range bad {
		r := runCLI(t, env, b.args...)
		if r.code == 0 || !strings.Contains(r.stderr, b.want) {
			t.Errorf("%v = exit %d, stderr %q; want failure saying %q", b.args, r.code, r.stderr, b.want)
		}
	}
	// A second household may not take alice.
	wantOK(t, runCLI(t, env, "households", "create", "other"))
	if r := runCLI(t, env, "households", "add", "other", ids["alice"]); r.code == 0 || !strings.Contains(r.stderr, "already in a household") {
		t.Errorf("alice in two households: exit %d %q", r.code, r.stderr)
	}

	wantOK(t, runCLI(t, env, "households", "policy", "add", "home", "--tool", "pay", "--min-amount", "10000", "--currency", "EUR", "--approvers", ids["bob"]))
	r := runCLI(t, env, "households", "policy", "list", "home", "--json")
	wantOK(t, r)
	var ps []struct {
		ID        string   `json:"id"`
		Tool      string   `json:"tool"`
		Min       *int64   `json:"min_amount_minor"`
		Currency  string   `json:"currency"`
		Approvers []string `json:"approvers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &ps); err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Tool != "pay" || ps[0].Min == nil || *ps[0].Min != 10000 || ps[0].Currency != "EUR" || len(ps[0].Approvers) != 1 || ps[0].Approvers[0] != ids["bob"] {
		t.Fatalf("policies = %s", r.stdout)
	}
	list := runCLI(t, env, "households", "list")
	wantOK(t, list)
	if !strings.Contains(list.stdout, "home") || !strings.Contains(list.stdout, "alice") || !strings.Contains(list.stdout, "bob") || strings.Contains(list.stdout, "carol") {
		t.Errorf("households list = %s", list.stdout)
	}
	wantOK(t, runCLI(t, env, "households", "policy", "remove", "home", ps[0].ID))
	wantOK(t, runCLI(t, env, "households", "remove", "home", ids["bob"]))
	if r := runCLI(t, env, "households", "remove", "home", ids["bob"]); r.code == 0 || !strings.Contains(r.stderr, "not a member") {
		t.Errorf("second remove = exit %d %q", r.code, r.stderr)
	}
	r = runCLI(t, env, "households", "policy", "list", "home")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "no policies") {
		t.Errorf("after remove: %s", r.stdout)
	}
}
