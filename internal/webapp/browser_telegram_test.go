package webapp_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/llm/demo"
)

// TestBrowserTelegramLink at phone width (390×844): Settings → Telegram makes a one-time
// code shown once; sent to the bot (the real POST /telegram/callback, as Telegram posts it)
// it links the chat, which the page then lists, and Unlink removes it — no page wider than
// the phone.
func TestBrowserTelegramLink(t *testing.T) {
	t.Parallel()
	const secret = "tg-webhook_secret-0123"
	e := apptest.New(t, apptest.Options{Model: demo.New(), Env: map[string]string{
		"STEWARD_TELEGRAM_BOT_TOKEN":      "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ",
		"STEWARD_TELEGRAM_WEBHOOK_SECRET": secret}})
	_, key := e.DB.Owner(t, "ada")
	ctx := browsertest.Start(t, 390, 844, 120*time.Second)
	wide := func(dst *bool) chromedp.Action[chromedp.Void] {
		return browsertest.Into(dst, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	}
	var flashTitle, code string
	var overflow bool
	err := chromedp.Do(ctx, signIn(e.Server.URL, key), chromedp.Navigate(e.Server.URL+"/settings"),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/settings/telegram"]`)),
		chromedp.Click(chromedp.CSS(`a[href="/settings/telegram"]`)),
		chromedp.WaitVisible(chromedp.Search(`//button[text()="Make a link code"]`)),
		chromedp.Click(chromedp.Search(`//button[text()="Make a link code"]`)),
		chromedp.WaitVisible(chromedp.CSS(`section.flash h2`)),
		browsertest.Into(&flashTitle, textIn(`section.flash h2`)),
		browsertest.Into(&code, textIn(`section.flash p`)),
		wide(&overflow))
	if err != nil {
		t.Fatal(err)
	}
	if flashTitle != "Your link code" || !regexp.MustCompile(`^[A-Z2-9]{12}$`).MatchString(code) {
		t.Fatalf("flash %q %q, want a 12-character code", flashTitle, code)
	}
	if overflow {
		t.Errorf("the Telegram page is wider than the phone")
	}

	body := fmt.Sprintf(`{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":4242,"type":"private","first_name":"Ada"},"text":"/start %s"}}`, code)
	req, _ := http.NewRequest(http.MethodPost, e.Server.URL+"/telegram/callback", strings.NewReader(body))
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	var chats, after string
	err = chromedp.Do(ctx, chromedp.Navigate(e.Server.URL+"/settings/telegram"),
		chromedp.WaitVisible(chromedp.CSS(`ul.telegram-chats li`)),
		browsertest.Into(&chats, textIn(`ul.telegram-chats`)),
		wide(&overflow),
		chromedp.Click(chromedp.Search(`//button[text()="Unlink"]`)),
		chromedp.WaitVisible(chromedp.CSS(`section.flash`)),
		browsertest.Into(&after, textIn(`main`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(chats, "Ada") || !strings.Contains(chats, "chat 4242") {
		t.Errorf("linked chats %q, want Ada's chat 4242", chats)
	}
	if overflow {
		t.Errorf("the page listing a chat is wider than the phone")
	}
	if !strings.Contains(after, "Chat 4242 is unlinked") || !strings.Contains(after, "No chat is linked yet") {
		t.Errorf("after Unlink: %q", after)
	}
}
