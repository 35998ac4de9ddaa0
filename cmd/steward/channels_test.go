package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestChannelsCommand: the CLI adds, lists (no secret), tests and removes channels; a bad
// token is a clear failure that stores nothing; a secret without STEWARD_SECRET_KEY is
// refused.
func TestChannelsCommand(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewTLSServer(t, func(w http.ResponseWriter, r *http.Request) {})
	env := dbEnv(testdb.New(t))
	env["STEWARD_EGRESS_ALLOW"] = srv.Addr().String()
	wantOK(t, runCLI(t, env, "owners", "add", "alice"))
	hook := "https://" + srv.Addr().String() + "/hook"
	if r := runCLI(t, env, "channels", "add", "signed", "--kind", "webhook", "--url", hook, "--token", "whsec-abcdef"); r.code != 1 ||
		!strings.Contains(r.stderr, "STEWARD_SECRET_KEY") {
		t.Errorf("secret without a key: exit %d, %s", r.code, r.stderr)
	}
	env["STEWARD_SECRET_KEY"] = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	r := runCLI(t, env, "channels", "add", "signed", "--kind", "webhook", "--url", hook, "--token", "whsec-abcdef")
	wantOK(t, r)
	if r := runCLI(t, env, "channels", "add", "tg", "--kind", "telegram", "--token", "1:short", "--chat-id", "5"); r.code != 1 ||
		!strings.Contains(r.stderr, "Telegram bot token") {
		t.Errorf("bad token: exit %d, %s", r.code, r.stderr)
	}
	r = runCLI(t, env, "channels", "list")
	wantOK(t, r)
	if strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, `"name":"signed"`) || !strings.Contains(r.stdout, `"default":true`) ||
		!strings.Contains(r.stdout, `"has_secret":true`) || strings.Contains(r.stdout, "whsec-abcdef") {
		t.Errorf("list: %s", r.stdout)
	}
	// The CLI does not trust the test server's certificate: a clear failed test, exit 1.
	if r := runCLI(t, env, "channels", "test", "signed"); r.code != 1 || !strings.Contains(r.stdout, `"delivered":false`) ||
		!strings.Contains(r.stderr, "not delivered") {
		t.Errorf("test: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	wantOK(t, runCLI(t, env, "channels", "add", "other", "--kind", "webhook", "--url", hook))
	if r := runCLI(t, env, "channels", "default", "nope"); r.code != 1 || !strings.Contains(r.stderr, `no channel named "nope"`) {
		t.Errorf("default unknown: exit %d, %s", r.code, r.stderr)
	}
	if r := runCLI(t, env, "channels", "default", "other"); r.code != 0 || !strings.Contains(r.stdout, `"name":"other","kind":"webhook","default":true`) {
		t.Errorf("default other: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, env, "channels", "list"); strings.Count(r.stdout, `"default":true`) != 1 || !strings.Contains(r.stdout, `"name":"other","kind":"webhook","default":true`) {
		t.Errorf("list after default: %s", r.stdout)
	}
	wantOK(t, runCLI(t, env, "channels", "remove", "other"))
	wantOK(t, runCLI(t, env, "channels", "remove", "signed"))
	if r := runCLI(t, env, "channels", "remove", "signed"); r.code != 1 || !strings.Contains(r.stderr, `no channel named "signed"`) {
		t.Errorf("remove again: exit %d, %s", r.code, r.stderr)
	}
	if r := runCLI(t, env, "channels", "add"); r.code != 2 {
		t.Errorf("add without a name: exit %d", r.code)
	}
}
