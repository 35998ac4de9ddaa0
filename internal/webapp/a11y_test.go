package webapp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/voice/voicefake"
)

// axeSource is axe-core's axe.min.js: the file STEWARD_AXE names (make test sets it after
// make axe installed the pinned version into bin/axe), else bin/axe's copy. Missing, the
// test fails: an accessibility check that silently does not run would hide every violation.
func axeSource(t *testing.T) string {
	t.Helper()
	path := os.Getenv("STEWARD_AXE")
	if path == "" {
		path = filepath.Join("..", "..", "bin", "axe", "node_modules", "axe-core", "axe.min.js")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("axe-core is missing (%v): run `make axe` (make test and .ci/run install it into bin/axe)", err)
	}
	return string(b)
}

// a11yEnv is the whole web app on a fresh database with the demo model, and an owner (ada)
// with something on every page: a conversation with a Markdown answer, one with a tool call
// (its story), one with a write waiting on a card, the seeded ledger, a document, a fact, a
// channel, and a household request from hal waiting for her vote.
type a11yEnv struct {
	url, key                                          string
	history, markdown, pending, decided, story, docID string
}

func newA11yEnv(t *testing.T) a11yEnv {
	t.Helper()
	ctx := context.Background()
	// The channel's server is example.com, which the test's resolver knows as 127.0.0.1.
	// Voice on (a fake backend no page calls): the composer's microphone and the answers'
	// Play buttons are on the pages axe reads.
	voices := httptest.NewServer(voicefake.New(""))
	t.Cleanup(voices.Close)
	app := apptest.New(t, apptest.Options{Lookup: egresstest.Lookup, Env: map[string]string{"STEWARD_EGRESS_ALLOW": "127.0.0.1:443",
		"STEWARD_VOICE_OPENAI_BASE_URL": voices.URL + "/v1", "STEWARD_VOICE_SPEECH_MODEL": "tts-1",
		"STEWARD_TELEGRAM_BOT_TOKEN": "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ", "STEWARD_TELEGRAM_WEBHOOK_SECRET": "a11y-secret",
		"STEWARD_TRADING": "paper"}})
	o, runner, ledgers, docs, mem, channels := app.DB, app.Runner, app.Ledger, app.Documents, app.Memory, app.Channels

	ada, key := o.Owner(t, "ada")
	hal, _ := o.Owner(t, "hal")
	e := a11yEnv{url: app.Server.URL, key: key, markdown: seedAnswer(t, o, ada)}
	start := func(owner uuid.UUID, msg string, want steward.Status) steward.View {
		v, err := runner.Start(ctx, agent.Input{OwnerID: owner, Message: msg, Trigger: steward.TriggerChat}, nil)
		if err != nil || v.Status != want {
			t.Fatalf("%q: %+v, %v; want %s", msg, v, err, want)
		}
		return v
	}
	// The Trading page: a price, a filled order and an open one.
	if _, err := app.Trading.SetPrice(ctx, ada.ID, "AAPL", "187.20"); err != nil {
		t.Fatal(err)
	}
	for i, r := range []steward.OrderRequest{{Symbol: "AAPL", Side: "buy", Qty: 2}, {Symbol: "AAPL", Side: "buy", Qty: 1, Type: "limit", LimitPriceMinor: 150_00}} {
		if _, err := app.Trading.PlaceOrder(ctx, ada.ID, fmt.Sprint("a11y-", i), r); err != nil {
			t.Fatal(err)
		}
	}
	done := start(ada.ID, "what time is it", steward.StatusCompleted)
	e.history = done.ConversationID.String()
	e.pending = start(ada.ID, "remind me to buy milk", steward.StatusSuspended).ConversationID.String()
	// A conversation whose card was approved, then a second message in it.
	eggs := start(ada.ID, "remind me to buy eggs", steward.StatusSuspended)
	if _, err := runner.Confirm(ctx, ada.ID, eggs.TurnID, []steward.Decision{{CallID: eggs.Pending[0].CallID, ArgsHash: eggs.Pending[0].ArgsHash, Approve: true}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Start(ctx, agent.Input{OwnerID: ada.ID, ConversationID: &eggs.ConversationID, Message: "list my tasks", Trigger: steward.TriggerChat}, nil); err != nil {
		t.Fatal(err)
	}
	e.decided, e.story = eggs.ConversationID.String(), eggs.TurnID.String() // its story has a decision
	if _, err := ledgers.Seed(ctx, ada.ID); err != nil {
		t.Fatal(err)
	}
	doc, err := docs.Upload(ctx, ada.ID, "boiler.md", "text/markdown", []byte("# Boiler\n\nServiced on 3 October 2026.\n"))
	if err != nil {
		t.Fatal(err)
	}
	e.docID = doc.ID.String()
	if _, _, err := mem.AddFact(ctx, ada.ID, memory.NewFact{Kind: memory.FactKinds[0], Content: "Ada takes her coffee black."}); err != nil {
		t.Fatal(err)
	}
	if _, err := channels.Add(ctx, ada.ID, channel.Input{Name: "phone", Kind: channel.Ntfy, URL: "https://example.com", Topic: "ada-steward"}); err != nil {
		t.Fatal(err)
	}
	// Hal's create_task waits for ada too (a household policy): her inbox has his request.
	if _, err := o.Door.CreateHousehold(ctx, "home"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uuid.UUID{ada.ID, hal.ID} {
		if err := o.Door.AddHouseholdMember(ctx, "home", id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := o.Door.AddHouseholdPolicy(ctx, store.HouseholdPolicy{Household: "home", Tool: "create_task", Approvers: []uuid.UUID{ada.ID}}); err != nil {
		t.Fatal(err)
	}
	v := start(hal.ID, "remind me to buy bread", steward.StatusSuspended)
	p := v.Pending[0]
	if _, err := runner.Confirm(ctx, hal.ID, v.TurnID, []steward.Decision{{CallID: p.CallID, ArgsHash: p.ArgsHash, Approve: true}}, nil); err != nil {
		t.Fatal(err)
	}
	return e
}

// violation is one axe-core rule an element breaks.
type violation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

// axeRun opens every disclosure (a chip's raw JSON, the story's audit events) and runs
// axe-core over the page, injected through the DevTools protocol, which the page's CSP does
// not govern; out gets every violation.
func axeRun(src string, out *[]violation) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		js(`document.querySelectorAll("details").forEach(d => { d.open = true; }); if (typeof axe === "undefined") { `+src+` }`),
		browsertest.Into(out, chromedp.Evaluate[[]violation](`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
			.map(v => ({id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map(n => n.target.join(" ") + " — " + n.failureSummary.replace(/\n+/g, " "))})))`,
			chromedp.EvalAwaitPromise)))
}

// report writes violations one a line: rule, impact, help, then each element and what fails.
func report(vs []violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "\n  %s (%s): %s", v.ID, v.Impact, v.Help)
		for _, target := range v.Targets {
			fmt.Fprintf(&b, "\n    %s", target)
		}
	}
	return b.String()
}

// TestAccessibility runs axe-core (the version make axe pins) inside Chromium over every page
// of the web app — sign-in, a new chat, chats with history, a Markdown answer and a pending
// approval card, the conversation list, approvals with a card, a turn's story, money,
// documents and one document, settings, channels, Telegram, memory, activity, the household inbox with
// a request, the 404 page, a refused form and the phone's open menu — signed in, at phone (390×844) and
// desktop (1280×800) width, in light and dark mode, and wants no serious or critical
// violation. Each one found is printed with its rule, impact, element and help.
func TestAccessibility(t *testing.T) {
	t.Parallel()
	src := axeSource(t)
	e := newA11yEnv(t)
	pages := []string{"/", "/c/" + e.history, "/c/" + e.markdown, "/c/" + e.pending, "/c/" + e.decided, "/conversations", "/approvals", "/turns/" + e.story,
		"/money", "/documents", "/documents/" + e.docID, "/skills", "/skills/builtin:meeting-notes", "/settings", "/settings/channels", "/settings/accounts", "/settings/telegram", "/memory", "/activity", "/household", "/trading", "/automations", "/no/such/page",
		"/c/" + e.history + "/manage", "/conversations/search?q=time", "/settings/data"}
	// The documentation's screenshots (docs/WEBAPP.md), taken before axe opens the disclosures.
	shots := map[string]string{"/c/" + e.decided: "chat", "/conversations": "conversations", "/approvals": "approvals",
		"/turns/" + e.story: "story", "/settings": "settings"}
	for _, size := range []struct {
		name          string
		width, height int
	}{{"phone", 390, 844}, {"desktop", 1280, 800}} {
		t.Run(size.name, func(t *testing.T) {
			t.Parallel()
			ctx := browsertest.Start(t, size.width, size.height, 300*time.Second)
			check := func(what string, actions ...chromedp.Action[chromedp.Void]) {
				t.Helper()
				var found, serious, minor []violation
				if err := chromedp.Do(ctx, append(actions, axeRun(src, &found))...); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				for _, v := range found {
					if v.Impact == "serious" || v.Impact == "critical" {
						serious = append(serious, v)
					} else {
						minor = append(minor, v)
					}
				}
				if len(serious) > 0 {
					t.Errorf("%s: %d serious or critical accessibility violations:%s", what, len(serious), report(serious))
				}
				if len(minor) > 0 {
					t.Logf("%s: %d moderate or minor accessibility violations:%s", what, len(minor), report(minor))
				}
			}
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(size.width), int64(size.height))); err != nil {
				t.Fatal(err)
			}
			for _, scheme := range []string{"light", "dark"} {
				if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
					t.Fatal(err)
				}
				if scheme == "light" {
					check("/signin ("+scheme+")", chromedp.Navigate(e.url+"/signin"), chromedp.WaitVisible(chromedp.CSS(`input[name=api_key]`)))
					if err := chromedp.Do(ctx, signIn(e.url, e.key)); err != nil {
						t.Fatal(err)
					}
				}
				for _, path := range pages {
					if name, ok := shots[path]; ok {
						if err := chromedp.Do(ctx, chromedp.Navigate(e.url+path), chromedp.WaitReady(chromedp.CSS(`main`))); err != nil {
							t.Fatal(err)
						}
						browsertest.Shot(t, ctx, "app-"+name+"-"+size.name+map[string]string{"light": "", "dark": "-dark"}[scheme]+".png")
					}
					check(path+" ("+scheme+")", chromedp.Navigate(e.url+path), chromedp.WaitReady(chromedp.CSS(`main`)))
				}
				check("a refused rule form ("+scheme+")", chromedp.Navigate(e.url+"/settings"),
					chromedp.SetValue(chromedp.CSS(`#rule-tool`), "create_task"), chromedp.SetValue(chromedp.CSS(`#rule-predicate`), `{"title"`),
					chromedp.Submit(chromedp.CSS(`#rule-tool`)), chromedp.WaitVisible(chromedp.CSS(`form.rule p.error`)))
				if scheme == "light" && size.name == "phone" {
					browsertest.Shot(t, ctx, "refused-form-phone.png")
				}
				if size.name == "phone" {
					check("the open menu ("+scheme+")", chromedp.Navigate(e.url+"/approvals"), chromedp.Click(chromedp.CSS(`.menu-toggle`)),
						chromedp.WaitVisible(chromedp.CSS(`#main-nav a[href="/settings"]`)))
				}
			}
		})
	}
}

// TestAccessibilityKeyboard is the approve flow with the keyboard alone, at phone width: Tab
// to the key field, type it, Enter signs in; Tab to the message box, type, Enter sends; Tab to
// Approve (its focus ring visible), Enter approves; the card says "Approved by you" and the
// task exists. No mouse event is sent.
func TestAccessibilityKeyboard(t *testing.T) {
	t.Parallel()
	srv, o := server(t)
	owner, key := o.Owner(t, "kim")
	ctx := browsertest.Start(t, 390, 844, 120*time.Second)
	// tabTo presses Tab until the focused element matches selector (at most 40 times).
	tabTo := func(selector string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			for range 40 {
				var ok bool
				if err := chromedp.Do(ctx, browsertest.Into(&ok, chromedp.Evaluate[bool](
					`!!document.activeElement && document.activeElement.matches(`+fmt.Sprintf("%q", selector)+`)`))); err != nil {
					return chromedp.Void{}, err
				}
				if ok {
					return chromedp.Void{}, nil
				}
				if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
					return chromedp.Void{}, err
				}
			}
			return chromedp.Void{}, fmt.Errorf("40 presses of Tab never reached %s", selector)
		}
	}
	var outline, decision, focusedOn string
	err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(srv.URL+"/signin"), chromedp.WaitVisible(chromedp.CSS(`input[name=api_key]`)),
		tabTo(`input[name=api_key]`), chromedp.KeyEvent(key), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#message`)),
		tabTo(`#message`), chromedp.KeyEvent("remind me to buy milk"), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card button[data-choice=approve]`)),
		tabTo(`fieldset.card button[data-choice=approve]`),
		browsertest.Into(&outline, chromedp.Evaluate[string](`getComputedStyle(document.activeElement).outlineStyle`)),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`p.decision.approved`)), chromedp.WaitVisible(chromedp.CSS(`.pending a.story`)),
		browsertest.Into(&decision, chromedp.Text(chromedp.CSS(`p.decision.approved`))),
		browsertest.Into(&focusedOn, chromedp.Evaluate[string](`document.activeElement.className`)))
	if err != nil {
		t.Fatal(err)
	}
	if outline == "none" || outline == "" {
		t.Errorf("the focused Approve button has no visible focus ring (outline-style %q)", outline)
	}
	if focusedOn != "decision approved" {
		t.Errorf("after Enter on Approve the focus is on %q; want the verdict that replaced the card", focusedOn)
	}
	if !strings.HasPrefix(decision, "Approved by you") {
		t.Errorf("after Enter on Approve the card says %q; want Approved by you", decision)
	}
	if got := tasksOf(t, o, owner); len(got) != 1 || got[0] != "buy milk" {
		t.Errorf("tasks after a keyboard approval = %v; want [buy milk]", got)
	}
}

// TestBrowserPhoneBadge: at 390×844, with a write waiting, the compact header shows the
// approvals count beside the menu button, the menu closed; it links to the approvals; once
// the write is decided the count is gone from the header.
func TestBrowserPhoneBadge(t *testing.T) {
	t.Parallel()
	srv, o := server(t)
	_, key := o.Owner(t, "pia")
	ctx := browsertest.Start(t, 390, 844, 120*time.Second)
	type shown struct {
		Visible  bool    `json:"visible"`
		Text     string  `json:"text"`
		Href     string  `json:"href"`
		Bottom   float64 `json:"bottom"`
		Header   float64 `json:"header"`
		MenuOpen bool    `json:"menuOpen"`
	}
	header := `(() => { const a = document.querySelector("header .pending-link"), r = a ? a.getBoundingClientRect() : {};
		return {visible: !!a && a.checkVisibility() && r.width > 0 && r.top >= 0, text: a ? a.textContent : "", href: a ? a.getAttribute("href") : "",
			bottom: r.bottom || 0, header: document.querySelector("header").getBoundingClientRect().height, menuOpen: document.getElementById("main-nav").checkVisibility()}; })()`
	var before, after shown
	err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), signIn(srv.URL, key), send("remind me to buy milk"),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card`)),
		chromedp.Navigate(srv.URL+"/settings"), chromedp.WaitVisible(chromedp.CSS(`main h1`)),
		browsertest.Into(&before, chromedp.Evaluate[shown](header)))
	if err != nil {
		t.Fatal(err)
	}
	if !before.Visible || before.MenuOpen || !strings.Contains(before.Text, "1") || before.Href != "/approvals" || before.Header > 60 {
		t.Fatalf("phone header with a write waiting: %+v; want the count 1 visible in a one-line header (60 px at most), linking to /approvals, the menu closed", before)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`header .pending-link`)),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card button[data-choice=approve]`)),
		chromedp.Click(chromedp.CSS(`fieldset.card button[data-choice=approve]`)),
		chromedp.WaitVisible(chromedp.CSS(`.pending a.story`)),
		chromedp.Navigate(srv.URL+"/settings"), chromedp.WaitVisible(chromedp.CSS(`main h1`)),
		browsertest.Into(&after, chromedp.Evaluate[shown](header)))
	if err != nil {
		t.Fatal(err)
	}
	if after.Visible {
		t.Errorf("phone header with nothing waiting still shows the count: %+v", after)
	}
}
