package accounts_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/mailtest"
)

// pageHas waits until an element of the page shows want (after a form's POST and its 303
// the page is a new one), then reads the main text by polling it, not through a node id that
// can go stale on a loaded machine.
func pageHas(dst *string, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.Search(`//main//*[contains(text(),`+strconv.Quote(want)+`)]`)),
		browsertest.Into(dst, chromedp.Poll[string](`(() => { const m = document.querySelector("main"); const t = m ? m.innerText : "";
			return t.includes(`+strconv.Quote(want)+`) ? t : ""; })()`)))
}

// TestBrowserAccountsAtPhoneWidth: on a phone (390×844) the owner opens Settings → Mail and
// calendar, is refused a wrong password in words (what they typed kept, the password not),
// connects mail and calendar, tests mail, and asks the demo model "any new mail?" in the chat.
func TestBrowserAccountsAtPhoneWidth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "grace", nil, nil)
	if err := e.App.Accounts.Remove(t.Context(), e.owner, "mail"); err != nil {
		t.Fatal(err)
	}
	if err := e.App.Accounts.Remove(t.Context(), e.owner, "calendar"); err != nil {
		t.Fatal(err)
	}
	e.append(t, "INBOX", "From: Ada <ada@example.com>\nSubject: Tickets for Saturday\n\nGot them!\n")
	ctx := browsertest.Start(t, 390, 844, 120*time.Second)
	base := e.Server.URL
	var refused, kept, passLen, connected, tested, chat string
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=api_key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=api_key]`), e.key),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		chromedp.Navigate(base+"/settings"),
		chromedp.Click(chromedp.Search(`//a[text()="Mail and calendar"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#ac-imap`)),
		chromedp.SendKeys(chromedp.CSS(`#ac-imap`), servers.IMAPURL()),
		chromedp.SendKeys(chromedp.CSS(`#ac-smtp`), servers.SMTPURL()),
		chromedp.SendKeys(chromedp.CSS(`#ac-user`), "grace"),
		chromedp.SendKeys(chromedp.CSS(`#ac-pass`), "wrong"),
		chromedp.SendKeys(chromedp.CSS(`#ac-from`), "Grace <grace@example.com>"),
		chromedp.Click(chromedp.Search(`//button[text()="Connect mail"]`)),
		pageHas(&refused, "refused the login"),
		browsertest.Into(&kept, chromedp.Poll[string](`document.querySelector("#ac-imap").value`)),
		browsertest.Into(&passLen, chromedp.Poll[string](`String(document.querySelector("#ac-pass").value.length)`)),
		chromedp.SendKeys(chromedp.CSS(`#ac-pass`), mailtest.Users["grace"]),
		chromedp.Click(chromedp.Search(`//button[text()="Connect mail"]`)),
		pageHas(&connected, "Grace <grace@example.com>"),
		chromedp.SendKeys(chromedp.CSS(`#ac-caldav`), servers.CalDAVURL()),
		chromedp.SendKeys(chromedp.CSS(`#ac-cuser`), "grace"),
		chromedp.SendKeys(chromedp.CSS(`#ac-cpass`), mailtest.Users["grace"]),
		chromedp.SendKeys(chromedp.CSS(`#ac-tz`), "Europe/Berlin"),
		chromedp.Click(chromedp.Search(`//button[text()="Connect calendar"]`)),
		pageHas(&connected, "/grace/calendar/"),
		chromedp.Click(chromedp.Search(`(//button[text()="Test"])[1]`)),
		pageHas(&tested, "The mail account works"),
	)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Shot(t, ctx, "accounts.png")
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		chromedp.SetValue(chromedp.CSS(`textarea[name=message]`), "any new mail?"),
		chromedp.Click(chromedp.Search(`//button[text()="Send"]`)),
		// The answer as rendered once the turn ended (its story link), not the text streaming.
		chromedp.WaitVisible(chromedp.CSS(`#log a.story`)),
		pageHas(&chat, "Tickets for Saturday"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(refused, `the IMAP server `+servers.IMAP.String()+` refused the login of "grace"`) || kept != servers.IMAPURL() || passLen != "0" {
		t.Errorf("wrong password: %q; IMAP kept %q, password length %s", refused, kept, passLen)
	}
	if !strings.Contains(connected, "Grace <grace@example.com>") || strings.Contains(connected, mailtest.Users["grace"]) {
		t.Errorf("connected page: %q", connected)
	}
	if !strings.Contains(chat, "You have 1 new message:") || !strings.Contains(chat, "ada@example.com — Tickets for Saturday") {
		t.Errorf("chat: %q", chat)
	}
}
