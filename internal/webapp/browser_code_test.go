package webapp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/llm/demo"
)

// TestBrowserRunCodeShowsCodeAndOutput: at phone width, "compute the average of 3, 5 and 10"
// to the offline demo model runs run_code without asking; the answer says 6, and the call's
// chip, opened, shows the code as written and the value it returned, in the chat and in the
// turn's story.
func TestBrowserRunCodeShowsCodeAndOutput(t *testing.T) {
	t.Parallel()
	srv, o, _ := serverWith(t, demo.New())
	_, key := o.Owner(t, "coder")
	ctx := browsertest.Start(t, 390, 844, 120*time.Second)
	var answer, code, returned, storyCode, storyReturned string
	var href string
	err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), signIn(srv.URL, key),
		send("compute the average of 3, 5 and 10"),
		chromedp.WaitVisible(chromedp.Search(`//div[contains(@class,"assistant")][contains(., "The result is 6")]`)),
		browsertest.Into(&answer, chromedp.Text(chromedp.CSS(`#log`))),
		chromedp.Click(chromedp.CSS(`#log details.chip summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#log details.chip[open] pre.code`)),
		browsertest.Into(&code, chromedp.Text(chromedp.CSS(`#log details.chip pre.code`))),
		browsertest.Into(&returned, chromedp.Text(chromedp.CSS(`#log details.chip pre.code.output`))),
		// The story's link comes with the turn's end, after its answer has streamed.
		chromedp.WaitReady(chromedp.CSS(`a[href^="/turns/"]`)),
		browsertest.Into(&href, chromedp.Evaluate[string](`(document.querySelector('a[href^="/turns/"]') || {}).getAttribute ? document.querySelector('a[href^="/turns/"]').getAttribute("href") : ""`)),
	)
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	browsertest.Shot(t, ctx, "run-code-chat.png")
	if code != "statistics.mean([3, 5, 10])" || strings.TrimSpace(returned) != "6.0" {
		t.Errorf("the chip shows code %q returning %q; want the code and 6.0", code, returned)
	}
	if strings.Contains(answer, "Approve") {
		t.Errorf("run_code asked for approval: %s", answer)
	}
	if href == "" {
		t.Fatal("the chat links no turn story")
	}
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+href),
		chromedp.Click(chromedp.CSS(`.timeline details.chip summary`)),
		chromedp.WaitVisible(chromedp.CSS(`.timeline details.chip[open] pre.code`)),
		browsertest.Into(&storyCode, chromedp.Text(chromedp.CSS(`.timeline details.chip pre.code`))),
		browsertest.Into(&storyReturned, chromedp.Text(chromedp.CSS(`.timeline details.chip pre.code.output`))))
	if err != nil {
		t.Fatalf("story: %v", err)
	}
	browsertest.Shot(t, ctx, "run-code-story.png")
	if storyCode != code || storyReturned != returned {
		t.Errorf("the story shows code %q returning %q; want what the chat showed", storyCode, storyReturned)
	}
}
