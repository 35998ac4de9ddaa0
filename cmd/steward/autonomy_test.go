package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/testdb"
)

func TestJobsWebhooksAndMemoryCommands(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	if r := runCLI(t, env, "jobs", "list"); r.code != 1 || !strings.Contains(r.stderr, "0 owners") {
		t.Fatalf("jobs list with no owner: %d %s", r.code, r.stderr)
	}
	wantOK(t, runCLI(t, env, "owners", "add", "alice"))

	// jobs add makes no standing rule: a rule is made only when the owner asks for it
	// (--allow-notify), and then it is shown.
	r := runCLI(t, env, "jobs", "add", "morning-briefing", "--cron", "0 7 * * *", "--tz", "Europe/Berlin")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "scheduled morning-briefing") || !strings.Contains(r.stdout, "--allow-notify") {
		t.Fatalf("jobs add: %s; want it scheduled and how to let jobs deliver without asking", r.stdout)
	}
	if r := runCLI(t, env, "rules", "list"); strings.TrimSpace(r.stdout) != "" {
		t.Fatalf("rules after jobs add:\n%s\nwant none: no command makes a rule the owner did not ask for", r.stdout)
	}
	wantOneLineError(t, runCLI(t, env, "jobs", "add", "coffee", "--cron", "0 7 * * *"), "unknown job")
	wantOneLineError(t, runCLI(t, env, "jobs", "add", "weekly-review", "--cron", "not cron"), "cron")
	if r := runCLI(t, env, "jobs", "add", "weekly-review"); r.code != 2 {
		t.Fatalf("missing --cron: exit %d", r.code)
	}
	r = runCLI(t, env, "jobs", "add", "weekly-review", "--cron", "0 17 * * fri", "--allow-notify")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "scheduled weekly-review") || !strings.Contains(r.stdout, "allow notify") {
		t.Fatalf("jobs add --allow-notify: %s; want the rule shown", r.stdout)
	}
	if r := runCLI(t, env, "rules", "list"); !strings.Contains(r.stdout, "allow any call of notify") {
		t.Fatalf("rules after jobs add --allow-notify:\n%s\nwant the notify rule", r.stdout)
	}
	r = runCLI(t, env, "jobs", "list", "--json")
	wantOK(t, r)
	if !strings.Contains(r.stdout, `"job":"morning-briefing"`) || !strings.Contains(r.stdout, "Europe/Berlin") {
		t.Fatalf("jobs list: %s", r.stdout)
	}
	r = runCLI(t, env, "jobs", "run", "morning-briefing")
	wantOK(t, r)
	if !strings.HasPrefix(r.stdout, "morning-briefing: completed") {
		t.Fatalf("jobs run: %s", r.stdout)
	}
	wantOK(t, runCLI(t, env, "jobs", "remove", "morning-briefing"))
	if r := runCLI(t, env, "jobs", "list"); strings.Contains(r.stdout, "morning-briefing") {
		t.Fatalf("removed job still listed: %s", r.stdout)
	}

	r = runCLI(t, env, "webhooks", "add", "--source", "github", "--json")
	wantOK(t, r)
	var hook struct{ HookID, Secret, URLPath string }
	if err := json.Unmarshal([]byte(r.stdout), &struct {
		HookID  *string `json:"hook_id"`
		Secret  *string `json:"secret"`
		URLPath *string `json:"url_path"`
	}{&hook.HookID, &hook.Secret, &hook.URLPath}); err != nil || !strings.HasPrefix(hook.Secret, "whsec_") || hook.URLPath != "/webhooks/"+hook.HookID {
		t.Fatalf("webhooks add --json: %s (%v)", r.stdout, err)
	}
	wantOneLineError(t, runCLI(t, env, "webhooks", "add", "--source", "Not A Name!"), "source")

	r = runCLI(t, env, "memory", "consolidate")
	wantOK(t, r)
}
