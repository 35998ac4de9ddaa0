package links_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/steward"
)

// TestBrowserLinkPage opens an approve link in headless Chromium (Debian's chromium, as the
// web app's browser tests): the page shows the raw arguments and one button, opening it
// decides nothing, and the button decides. STEWARD_SCREENSHOTS=$PWD/docs/screenshots writes
// the confirmation page for the README.
func TestBrowserLinkPage(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the browser test needs Debian's chromium package (apt-get install chromium): %v", err)
	}
	e := setup(t, true)
	turn, approve, _ := e.suspend(t)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("headless", "new"), chromedp.WindowSize(390, 844))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel2 := chromedp.NewContext(actx)
	defer cancel2()
	ctx, cancel3 := context.WithTimeout(ctx, 90*time.Second)
	defer cancel3()

	var args, buttons string
	err = chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(approve),
		chromedp.WaitVisible(chromedp.CSS(`pre.args`)),
		into(&args, chromedp.Text(chromedp.CSS(`pre.args`))),
		into(&buttons, chromedp.Text(chromedp.CSS(`form`))))
	if err != nil {
		t.Fatal(err)
	}
	if args != `{"title": "buy milk"}` || strings.TrimSpace(buttons) != "Approve" {
		t.Errorf("page shows args %q and buttons %q; want the raw arguments and one Approve button", args, buttons)
	}
	if n, st := e.state(t, turn); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("opening the link: %d tasks, turn %s; want nothing decided", n, st)
	}
	if dir := os.Getenv("STEWARD_SCREENSHOTS"); dir != "" {
		var png []byte
		if err := chromedp.Do(ctx, into(&png, chromedp.FullScreenshot(100))); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "approval-link-phone.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var done string
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`p[role=status]`)), into(&done, chromedp.Text(chromedp.CSS(`p[role=status]`))))
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

// into stores an action's result in dst.
func into[T any](dst *T, a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		v, err := a(ctx, t)
		*dst = v
		return chromedp.Void{}, err
	}
}
