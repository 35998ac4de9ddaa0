package main

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/testdb"
)

// TestAutomationsAndRemindersCommands: the owner's zone, an automation added in words,
// listed with its next run, paused, resumed and removed; a reminder added, listed and
// cancelled; a too-frequent schedule and an unreadable time are one-line errors.
func TestAutomationsAndRemindersCommands(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	wantOK(t, runCLI(t, env, "owners", "add", "alice"))
	wantOK(t, runCLI(t, env, "automations", "zone", "Europe/Berlin"))
	if r := runCLI(t, env, "automations", "zone"); strings.TrimSpace(r.stdout) != "Europe/Berlin" {
		t.Fatalf("zone: %q", r.stdout)
	}
	r := runCLI(t, env, "automations", "add", "--schedule", "every weekday at 7:30", "tell", "me", "my", "first", "meeting")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "30 7 * * 1-5") || !strings.Contains(r.stdout, "07:30 CET") {
		t.Fatalf("add: %s", r.stdout)
	}
	id := strings.Fields(r.stdout)[0]
	wantOneLineError(t, runCLI(t, env, "automations", "add", "--schedule", "every 5 minutes", "x"), "STEWARD_AUTOMATION_MIN_INTERVAL")
	r = runCLI(t, env, "automations", "list")
	if !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "every weekday at 7:30") || !strings.Contains(r.stdout, "tell me my first meeting") {
		t.Fatalf("list: %s", r.stdout)
	}
	for _, step := range []struct{ op, want string }{{"pause", "paused"}, {"resume", "active"}, {"rm", "deleted"}} {
		if r := runCLI(t, env, "automations", step.op, id); !strings.Contains(r.stdout, step.want) {
			t.Fatalf("%s: %d %s %s", step.op, r.code, r.stdout, r.stderr)
		}
	}
	r = runCLI(t, env, "reminders", "add", "--at", "in 20 minutes", "stretch")
	wantOK(t, r)
	rid := strings.Fields(r.stdout)[0]
	if r := runCLI(t, env, "reminders", "list"); !strings.Contains(r.stdout, "stretch") || !strings.Contains(r.stdout, "pending") {
		t.Fatalf("reminders list: %s", r.stdout)
	}
	wantOneLineError(t, runCLI(t, env, "reminders", "add", "--at", "whenever", "x"), "not a time I can read")
	if r := runCLI(t, env, "reminders", "cancel", rid); !strings.Contains(r.stdout, "cancelled") {
		t.Fatalf("cancel: %d %s %s", r.code, r.stdout, r.stderr)
	}
}
