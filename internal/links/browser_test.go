package links_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// TestBrowserLinkPage opens an approve link in headless Chromium (Debian's chromium, as the
// web app's browser tests): the page shows the raw arguments and one button, opening it
// decides nothing, and the button decides; before that, the owner's activity page lists the
// notification with its links hidden. STEWARD_SCREENSHOTS=$PWD/docs/screenshots writes both
// pages for docs/NOTIFICATIONS.md.
func TestBrowserLinkPage(t *testing.T) {
	e := setup(t, true)
	turn, approve, _ := e.suspend(t)
	ctx := browsertest.Start(t, 390, 844, 90*time.Second)

	// The notification as the owner's web app lists it (delivered here by hand: the test has
	// no deliverer), the links hidden.
	n := e.notifications(t)
	err := e.o.Store.WithOwner(context.Background(), e.owner.ID, func(tx *store.Tx) error {
		return tx.Deliveries.MarkDelivered(context.Background(), n[0].ID, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	var listed string
	err = chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(e.srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=api_key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=api_key]`), e.key),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		chromedp.Navigate(e.srv.URL+"/activity"),
		chromedp.WaitVisible(chromedp.CSS(`li.notification`)),
		browsertest.Into(&listed, chromedp.Text(chromedp.CSS(`li.notification`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(listed, `create_task: title="buy milk"`) || !strings.Contains(listed, "sent to your channel only") ||
		strings.Contains(listed, "/a/") {
		t.Errorf("the activity page lists the notification as %q; want the call, and its links hidden", listed)
	}
	browsertest.Shot(t, ctx, "notification-phone.png")

	var args, buttons string
	err = chromedp.Do(ctx, chromedp.Navigate(approve),
		chromedp.WaitVisible(chromedp.CSS(`pre.args`)),
		browsertest.Into(&args, chromedp.Text(chromedp.CSS(`pre.args`))),
		browsertest.Into(&buttons, chromedp.Text(chromedp.CSS(`form`))))
	if err != nil {
		t.Fatal(err)
	}
	if args != `{"title": "buy milk"}` || strings.TrimSpace(buttons) != "Approve" {
		t.Errorf("page shows args %q and buttons %q; want the raw arguments and one Approve button", args, buttons)
	}
	if n, st := e.state(t, turn); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("opening the link: %d tasks, turn %s; want nothing decided", n, st)
	}
	browsertest.Shot(t, ctx, "approval-link-phone.png")
	var done string
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`p[role=status]`)), browsertest.Into(&done, chromedp.Text(chromedp.CSS(`p[role=status]`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(done, "Done") {
		t.Errorf("after the button: %q", done)
	}
	if n, st := e.state(t, turn); n != 1 || st != steward.StatusCompleted {
		t.Fatalf("after the button: %d tasks, turn %s; want 1 and completed", n, st)
	}
}
