package accounts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/oauth"
)

// TestBrowserOAuthAtPhoneWidth: on a phone (390×844) in Chromium the owner opens Settings →
// Mail and calendar, reads what the provider will be asked for, taps Connect, allows on the
// provider's consent page (the page's form-action lets the browser go there), and comes back
// through /oauth/callback to Settings, connected; then asks the demo model "any new mail?".
func TestBrowserOAuthAtPhoneWidth(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, "zoe")
	// The provider sends the browser back to this test's server.
	e.App.Accounts.OAuth.RedirectURL = e.Server.URL + oauth.CallbackPath
	e.seed(t, "Tickets for Saturday")
	ctx := browsertest.Start(t, 390, 844, 120*time.Second)
	base := e.Server.URL
	var asks, consent, connected, chat string
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=api_key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=api_key]`), e.key),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		chromedp.Navigate(base+"/settings/accounts"),
		pageHas(&asks, "Steward asks "+fakeLabel+" for:"),
		chromedp.Click(chromedp.Search(`//button[text()="Connect `+fakeLabel+`"]`)),
		chromedp.WaitVisible(chromedp.Search(`//h1[text()="Allow Steward?"]`)),
		browsertest.Into(&consent, chromedp.Poll[string](`document.body.innerText`)),
		chromedp.Click(chromedp.Search(`//button[text()="Allow"]`)),
		pageHas(&connected, fakeLabel+" connected as "+e.email),
	)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Shot(t, ctx, "accounts-oauth.png")
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		chromedp.SetValue(chromedp.CSS(`textarea[name=message]`), "any new mail?"),
		chromedp.Click(chromedp.Search(`//button[text()="Send"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#log a.story`)),
		pageHas(&chat, "Tickets for Saturday"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(asks, "the scopes openid email offline_access mail calendar") {
		t.Errorf("Settings before the redirect: %q", asks)
	}
	if !strings.Contains(consent, "mail calendar") {
		t.Errorf("the consent page: %q", consent)
	}
	if !strings.Contains(connected, "signed in with generic") {
		t.Errorf("Settings after the sign-in: %q", connected)
	}
	if !strings.Contains(chat, "ada@example.com — Tickets for Saturday") {
		t.Errorf("chat: %q", chat)
	}
}
