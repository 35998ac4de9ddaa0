package webapp_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
)

// visibleText is what a person reads of a page without opening a disclosure: its text with
// the tags, scripts and closed <details> bodies (all but their summary) taken out, spaces
// collapsed.
func visibleText(page string) string {
	closed := regexp.MustCompile(`(?s)<details(?:\s[^>]*)?>\s*(<summary>.*?</summary>).*?</details>`)
	page = closed.ReplaceAllString(page, "$1")
	page = regexp.MustCompile(`(?s)<(script|style|head)[^>]*>.*?</(script|style|head)>`).ReplaceAllString(page, " ")
	page = regexp.MustCompile(`<[^>]+>`).ReplaceAllString(page, " ")
	return strings.Join(strings.Fields(html.UnescapeString(page)), " ")
}

// TestStoryReadsAsAStory (no browser): a turn's story starts with the owner's question and
// the answer (its Markdown rendered), then a timeline of the tool calls in words — who
// approved each and when, how long it ran — then what the turn cost; the raw audit events are
// behind a closed disclosure.
func TestStoryReadsAsAStory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, o, runner := serverWith(t, scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("w1", "create_task", `{"title":"buy milk","due":"2031-05-02"}`))),
		scripted.Reply(scripted.Text("Added **buy milk** to your list."))))
	owner, key := o.Owner(t, "alice")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if a := signInAs(t, c, srv.URL, key); a.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", a.status)
	}
	v, err := runner.Start(ctx, agent.Input{OwnerID: owner.ID, Message: "remind me to buy milk tomorrow", Trigger: steward.TriggerChat}, nil)
	if err != nil || v.Status != steward.StatusSuspended {
		t.Fatalf("start: %+v %v", v, err)
	}
	get := func(path string) string {
		t.Helper()
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	// An unknown turn is the app's 404 page, titled so.
	if resp, err := c.Get(srv.URL + "/turns/" + uuid.NewString()); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "<title>Not found · Steward</title>") || !strings.Contains(string(b), "Turn not found") {
			t.Errorf("an unknown turn's story: %d %s; want 404 titled Not found", resp.StatusCode, b)
		}
	}
	waiting := visibleText(get("/turns/" + v.TurnID.String()))
	for _, want := range []string{"remind me to buy milk tomorrow", "No answer yet: Steward is waiting for your approval", "Create task “buy milk”, due 2 May 2031"} {
		if !strings.Contains(waiting, want) {
			t.Errorf("the waiting turn's story lacks %q:\n%s", want, waiting)
		}
	}
	// The card's watch: while the turn waits, its state says nothing is settled.
	if st := get("/turns/" + v.TurnID.String() + "/status"); strings.Contains(st, `"settled"`) || !strings.Contains(st, `"card_html"`) {
		t.Errorf("a waiting turn's status = %s; want its card and nothing settled", st)
	}
	if _, err := runner.Confirm(ctx, owner.ID, v.TurnID, []steward.Decision{{CallID: "w1", Approve: true, ArgsHash: v.Pending[0].ArgsHash}}, nil); err != nil {
		t.Fatal(err)
	}
	if st := get("/turns/" + v.TurnID.String() + "/status"); !regexp.MustCompile(`"settled":\{"\*":\{[^}]*\},"w1":\{"class":"approved","label":"Approved","words":"by you · \d\d:\d\d UTC"\}`).MatchString(st) {
		t.Errorf("a decided turn's status = %s; want w1 settled as approved by you, with the time", st)
	}
	page := get("/turns/" + v.TurnID.String())
	text := visibleText(page)
	order := []string{
		"remind me to buy milk tomorrow", // the question
		"Added buy milk to your list.",   // the answer
		"Timeline",                       // the calls
		"Create task “buy milk”, due 2 May 2031 → Created task “buy milk”",
		"write · done · ran in",
		"Approved by you ·",
		"Cost",
		"model calls in", "tokens in",
		"Raw audit events",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(text[at:], want)
		if i < 0 {
			t.Fatalf("the story lacks %q after %q:\n%s", want, text[:at], text)
		}
		at += i + len(want)
	}
	if !strings.Contains(page, "Added <strong>buy milk</strong> to your list.") {
		t.Errorf("the answer's Markdown is not rendered: %s", page)
	}
	if !regexp.MustCompile(`Approved by you · \d\d:\d\d UTC`).MatchString(text) {
		t.Errorf("the approval does not say when: %s", text)
	}
	// The raw events are there, one click away, and not shown until then.
	if !strings.Contains(page, `<details class="raw-events"><summary>Raw audit events (`) || !strings.Contains(page, "turn_started") {
		t.Errorf("the raw audit events are not behind a disclosure: %s", page)
	}
	for _, raw := range []string{"turn_started", "model_call", "args_hash", `{"title"`} {
		if strings.Contains(text, raw) {
			t.Errorf("the story shows raw %q without a click:\n%s", raw, text)
		}
	}
}

// TestBrowserCardDecidedElsewhere: a pending card open in other tabs — the chat and the
// approvals inbox — turns into "Approved by you · HH:MM UTC" without buttons and without a
// reload when the owner approves in another tab (desktop); at phone width, a decision made
// outside the browser (as a one-tap link or Telegram makes it, through the runner) turns an
// open card into "Denied by you · … · “message”".
func TestBrowserCardDecidedElsewhere(t *testing.T) {
	t.Parallel()
	srv, o, runner := serverWith(t, scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("w1", "create_task", `{"title":"buy milk"}`))), scripted.Reply(scripted.Text("Added.")),
		scripted.Reply(scripted.Calls(scripted.Call("w2", "create_task", `{"title":"buy bread"}`))), scripted.Reply(scripted.Text("Not added."))))
	owner, key := o.Owner(t, "dana")

	// Desktop: approve in one tab; the chat and the inbox in two others follow.
	first := browsertest.Start(t, 1280, 800, 120*time.Second)
	var chatURL string
	if err := chromedp.Do(first, chromedp.EmulateViewport(1280, 800), signIn(srv.URL, key), send("remind me to buy milk"),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card button[data-choice=approve]`)), browsertest.Into(&chatURL, chromedp.Location())); err != nil {
		t.Fatal(err)
	}
	tab := func(url string) context.Context {
		ctx, cancel := chromedp.NewContext(first) // a tab of the same browser: the same session
		t.Cleanup(cancel)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(url),
			chromedp.WaitVisible(chromedp.CSS(`fieldset.card button[data-choice=approve]`)), js(`window.__notReloaded = true`)); err != nil {
			t.Fatal(err)
		}
		return ctx
	}
	chatTab, inboxTab := tab(chatURL), tab(srv.URL+"/approvals")
	if err := chromedp.Do(first, chromedp.Click(chromedp.CSS(`fieldset.card button[data-choice=approve]`)),
		chromedp.WaitVisible(chromedp.CSS(`#log a.story`))); err != nil {
		t.Fatal(err)
	}
	approved := regexp.MustCompile(`^Approved by you · \d\d:\d\d UTC$`)
	for name, tabCtx := range map[string]context.Context{"chat": chatTab, "inbox": inboxTab} {
		// The card turns within seconds (the page asks every 4 s), not at the test's deadline.
		ctx, cancel := context.WithTimeout(tabCtx, 20*time.Second)
		defer cancel()
		var verdict string
		var buttons int
		var kept bool
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`p.decision.approved`)),
			browsertest.Into(&verdict, chromedp.Text(chromedp.CSS(`p.decision.approved`))),
			browsertest.Into(&buttons, chromedp.Evaluate[int](`document.querySelectorAll("button[data-choice]").length`)),
			browsertest.Into(&kept, chromedp.Evaluate[bool](`window.__notReloaded === true`))); err != nil {
			t.Fatalf("%s tab: %v", name, err)
		}
		if !approved.MatchString(verdict) || buttons != 0 || !kept {
			t.Errorf("%s tab: the card says %q with %d buttons, not reloaded: %v; want Approved by you · HH:MM UTC, no buttons, no reload", name, verdict, buttons, kept)
		}
		if name == "chat" {
			browsertest.Shot(t, ctx, "card-decided-elsewhere-chat-desktop.png")
		}
	}

	// Phone: the card is open; the decision comes from outside the browser.
	phone := browsertest.Start(t, 390, 844, 120*time.Second)
	var turnID, hash string
	if err := chromedp.Do(phone, chromedp.EmulateViewport(390, 844), signIn(srv.URL, key), send("remind me to buy bread"),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card button[data-choice=deny]`)), js(`window.__notReloaded = true`),
		browsertest.Into(&turnID, chromedp.Evaluate[string](`document.querySelector("form.approval").dataset.turn`)),
		browsertest.Into(&hash, chromedp.Evaluate[string](`document.querySelector("fieldset.card").dataset.hash`))); err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Confirm(context.Background(), owner.ID, uuid.MustParse(turnID),
		[]steward.Decision{{CallID: "w2", ArgsHash: hash, Message: "we have bread"}}, nil); err != nil {
		t.Fatal(err)
	}
	var verdict string
	var buttons int
	var kept bool
	soon, cancel := context.WithTimeout(phone, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(soon, chromedp.WaitVisible(chromedp.CSS(`p.decision.denied`)),
		browsertest.Into(&verdict, chromedp.Text(chromedp.CSS(`p.decision.denied`))),
		browsertest.Into(&buttons, chromedp.Evaluate[int](`document.querySelectorAll("button[data-choice]").length`)),
		browsertest.Into(&kept, chromedp.Evaluate[bool](`window.__notReloaded === true`))); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^Denied by you · \d\d:\d\d UTC · “we have bread”$`).MatchString(verdict) || buttons != 0 || !kept {
		t.Errorf("phone: the card says %q with %d buttons, not reloaded: %v; want Denied by you · HH:MM UTC · “we have bread”, no buttons, no reload", verdict, buttons, kept)
	}
	browsertest.Shot(t, phone, "card-denied-elsewhere-phone.png")
}
