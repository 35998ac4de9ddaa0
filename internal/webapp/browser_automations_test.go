package webapp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/automation"
	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/llm/scripted"
)

// TestBrowserAutomationsAtPhoneWidth drives the Automations page in headless Chromium at
// 390×844: an automation with its next runs and its last run's story link, a reminder in the
// owner's zone; pausing, and deleting once confirmed. With STEWARD_SCREENSHOTS set it writes
// automations-phone.png.
func TestBrowserAutomationsAtPhoneWidth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := apptest.New(t, apptest.Options{Model: scripted.New(scripted.Reply(scripted.Text("First meeting 9:00, dry and 4 °C.")))})
	o, key := e.DB.Owner(t, "ada")
	if _, err := e.Automations.SetZone(ctx, o.ID, "Europe/Berlin"); err != nil {
		t.Fatal(err)
	}
	a, err := e.Automations.CreateAutomation(ctx, o.ID, automation.Input{Instruction: "tell me my first meeting and the weather", Schedule: "every weekday at 7:30"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Due.RunAutomation(ctx, o.ID, a.ID, time.Now().Add(-time.Hour).Truncate(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Automations.CreateAutomation(ctx, o.ID, automation.Input{Instruction: "summarise the week's spending", Schedule: "every friday at 17:00"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Automations.CreateReminder(ctx, o.ID, "call the school", "tomorrow 17:00", nil); err != nil {
		t.Fatal(err)
	}
	b := browsertest.Start(t, 390, 844, 120*time.Second)
	var page, after string
	err = chromedp.Do(b, chromedp.Navigate(e.Server.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=api_key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=api_key]`), key),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea`)),
		chromedp.Navigate(e.Server.URL+"/automations"),
		chromedp.WaitVisible(chromedp.Search(`//h1[text()="Automations"]`)),
		browsertest.Into(&page, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tell me my first meeting and the weather", "every weekday at 7:30", "Next: ", "CET", "Last run: completed",
		"its story", "call the school", "Europe/Berlin"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	var overflow bool
	if err := chromedp.Do(b, browsertest.Into(&overflow, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))); err != nil || overflow {
		t.Errorf("the page is wider than the phone (%v)", err)
	}
	browsertest.Shot(t, b, "automations-phone.png")
	err = chromedp.Do(b,
		chromedp.Click(chromedp.Search(`(//button[text()="Pause"])[1]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[text()="Automation paused."]`)),
		chromedp.Click(chromedp.Search(`(//summary[text()="Delete"])[2]`)),
		chromedp.Click(chromedp.Search(`(//button[text()="Delete for good"])[2]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[text()="Automation deleted."]`)),
		browsertest.Into(&after, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(after, "summarise the week's spending") || !strings.Contains(after, "paused by you") {
		t.Errorf("after pause and delete:\n%s", after)
	}
}
