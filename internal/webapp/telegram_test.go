package webapp_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/store"
)

// TestUnlinkUnknownTelegramChatIs404: Settings → Telegram's Unlink of a chat the owner has
// not linked — another owner's, or none at all — answers 404 in words (on main: 500), and
// the other owner's chat stays linked.
func TestUnlinkUnknownTelegramChatIs404(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, apptest.Options{Model: demo.New(), Env: map[string]string{
		"STEWARD_TELEGRAM_BOT_TOKEN":      "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ",
		"STEWARD_TELEGRAM_WEBHOOK_SECRET": "tg-webhook_secret-0123"}})
	_, adaKey := e.DB.Owner(t, "ada")
	bob, _ := e.DB.Owner(t, "bob")
	ctx := context.Background()
	if err := e.DB.Store.WithOwner(ctx, bob.ID, func(tx *store.Tx) error { return tx.Telegram.Link(ctx, 4242, "Bob") }); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if a := signInAs(t, c, e.Server.URL, adaKey); a.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", a.status)
	}
	req, _ := http.NewRequest("GET", e.Server.URL+"/settings/telegram", nil)
	page := roundTrip(t, c, req)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("the Telegram page has no CSRF field: %d %s", page.status, page.body)
	}
	for _, chat := range []string{"4242", "777"} {
		req, _ := http.NewRequest("POST", e.Server.URL+"/settings/telegram/"+chat+"/unlink", strings.NewReader(url.Values{"csrf": {m[1]}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		a := roundTrip(t, c, req)
		if a.status != http.StatusNotFound || !strings.Contains(a.body, "No linked Telegram chat "+chat) {
			t.Errorf("unlink chat %s: %d %s; want 404 saying no such linked chat", chat, a.status, a.body)
		}
	}
	if err := e.DB.Store.WithOwner(ctx, bob.ID, func(tx *store.Tx) error { _, err := tx.Telegram.Chat(ctx, 4242); return err }); err != nil {
		t.Fatalf("bob's chat after ada's unlink: %v", err)
	}
}
