package main

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/apptest"
)

// TestAccountsCLI: steward accounts refuses a private server in words and stores nothing;
// list, test and remove say what there is (the servers themselves are tested in
// internal/accounts, against Dovecot, Radicale and an SMTP sink).
func TestAccountsCLI(t *testing.T) {
	t.Parallel()
	app := apptest.New(t, apptest.Options{MaxConns: 5})
	owner, _ := app.DB.Owner(t, "alice")
	env := dbEnv(app.DB.DB)
	env["STEWARD_SECRET_KEY"] = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	id := owner.ID.String()
	r := runCLI(t, env, "accounts", "add-mail", "--owner", id, "--imap", "imaps://10.1.2.3", "--smtp", "smtps://10.1.2.3",
		"--username", "alice", "--password", "secret", "--from", "alice@example.com")
	wantOneLineError(t, r, "the IMAP server 10.1.2.3 is refused")
	r = runCLI(t, env, "accounts", "list", "--owner", id)
	wantOK(t, r)
	if strings.TrimSpace(r.stdout) != "" {
		t.Errorf("list after a refusal: %q", r.stdout)
	}
	r = runCLI(t, env, "accounts", "test", "calendar", "--owner", id)
	wantOneLineError(t, r, "no calendar account is connected")
	r = runCLI(t, env, "accounts", "remove", "phone", "--owner", id)
	wantOneLineError(t, r, "mail or calendar")
}
