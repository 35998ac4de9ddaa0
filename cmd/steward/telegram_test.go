package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/testdb"
)

// TestTelegramCommand: `steward telegram link` prints a one-time code (12 letters and
// digits) only with the deployment's bot configured, and says in words what to set
// otherwise; list shows no chat before one is linked; unlink of an unknown chat is a clear
// failure, of a word a usage error.
func TestTelegramCommand(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	wantOK(t, runCLI(t, env, "owners", "add", "alice"))
	if r := runCLI(t, env, "telegram", "link"); r.code != 1 || !strings.Contains(r.stderr, "STEWARD_TELEGRAM_BOT_TOKEN") {
		t.Errorf("link without a bot: exit %d, %s", r.code, r.stderr)
	}
	env["STEWARD_TELEGRAM_BOT_TOKEN"] = "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ"
	env["STEWARD_TELEGRAM_WEBHOOK_SECRET"] = "tg-webhook_secret-0123"
	r := runCLI(t, env, "telegram", "link")
	wantOK(t, r)
	if !regexp.MustCompile(`^[A-Z2-9]{12}\n$`).MatchString(r.stdout) || !strings.Contains(r.stderr, "Send this code to the bot") {
		t.Errorf("link: %q %q, want a code and how to use it", r.stdout, r.stderr)
	}
	if r := runCLI(t, env, "telegram", "list"); r.code != 0 || r.stdout != "" {
		t.Errorf("list: exit %d, %q", r.code, r.stdout)
	}
	if r := runCLI(t, env, "telegram", "unlink", "4242"); r.code != 1 || !strings.Contains(r.stderr, "no linked Telegram chat 4242") {
		t.Errorf("unlink unknown: exit %d, %s", r.code, r.stderr)
	}
	if r := runCLI(t, env, "telegram", "unlink", "me"); r.code != 2 {
		t.Errorf("unlink a word: exit %d, %s", r.code, r.stderr)
	}
}
