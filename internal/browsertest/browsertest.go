// Package browsertest is what the browser tests share: headless Chromium (Debian's chromium
// package; .ci/run installs it), screenshots for the documentation (docs/screenshots), and reading an action's value.
// Only tests import it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Start starts headless Chromium with its own profile (so each browser has its own cookies)
// and a window of width × height, and returns its context, ended after timeout or with the
// test.
func Start(t testing.TB, width, height int, timeout time.Duration) context.Context {
	t.Helper()
	return StartWith(t, width, height, timeout)
}

// StartWith is Start with more of Chromium's flags (say, a fake microphone:
// chromedp.Flag("use-fake-device-for-media-stream", true)).
func StartWith(t testing.TB, width, height int, timeout time.Duration, flags ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the browser tests need Debian's chromium package (apt-get install chromium; .ci/run installs it): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("headless", "new"), chromedp.WindowSize(width, height))
	opts = append(opts, flags...)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel3 := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancel3)
	return ctx
}

// Shot writes a full-page screenshot to STEWARD_SCREENSHOTS/name when that is set.
func Shot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("STEWARD_SCREENSHOTS")
	if dir == "" {
		return
	}
	var png []byte
	if err := chromedp.Do(ctx, Into(&png, chromedp.FullScreenshot(100))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Into runs a, keeping its value in dst.
func Into[T any](dst *T, a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		v, err := a(ctx, t)
		*dst = v
		return chromedp.Void{}, err
	}
}
