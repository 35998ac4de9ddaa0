package webapp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// approvedByYou is what a card the owner approved today says.
var approvedByYou = regexp.MustCompile(`^Approved by you · \d\d:\d\d UTC$`)

// unreachable wraps the test server's handler: while down is set, every connection is cut
// before an answer, as when the server is stopped or the network is gone.
func unreachable(srv *httptest.Server, down *atomic.Bool) {
	h := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = c.Close()
			}
			return
		}
		h.ServeHTTP(w, r)
	})
}

// js runs a script for its effect.
func js(script string) chromedp.Action[chromedp.Void] {
	var ignored any
	return browsertest.Into(&ignored, chromedp.Evaluate[any](script))
}

// seedAnswer stores a completed turn whose answer is Markdown with a list, a script and a
// javascript: link, and returns its conversation's id.
func seedAnswer(t *testing.T, o testdb.Opened, owner store.Owner) string {
	t.Helper()
	ctx := context.Background()
	var id string
	err := o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		conv, err := tx.Conversations.Create(ctx, "Groceries")
		if err != nil {
			return err
		}
		turn, err := tx.Turns.Create(ctx, conv.ID, steward.TriggerChat, "demo", time.Now(), time.Hour)
		if err != nil {
			return err
		}
		answer := "Your tasks:\n- buy milk\n- call mom\n\n<script>window.pwned = 1</script>[details](javascript:window.pwned=2)"
		turn.Status, turn.Answer = steward.StatusCompleted, answer
		if _, err := tx.Turns.Save(ctx, turn); err != nil {
			return err
		}
		id = conv.ID.String()
		return tx.Conversations.AppendMessages(ctx, conv.ID, turn.ID,
			steward.Message{Role: steward.RoleUser, Parts: []steward.Part{{Text: "what are my tasks?"}}},
			steward.Message{Role: steward.RoleModel, Parts: []steward.Part{{Text: answer}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestBrowserChat is the chat as a person uses it, at phone (390×844) and desktop (1280×800)
// width: the conversation list shows a stored conversation and its link opens the whole
// history; a Markdown list is a list and its <script> never runs; Enter sends, Send is
// disabled and the working indicator shows within 100 ms; a reload keeps the conversation
// (its address is /c/{id}); a pending card survives a reload live and, once approved, says
// "Approved" without buttons after another; with the server unreachable an error in words
// shows, the typed text stays and Retry sends it; an unknown page is the app's HTML 404; the
// manifest and the service worker register. With STEWARD_SCREENSHOTS set it writes the chat
// at both widths, light and dark.
func TestBrowserChat(t *testing.T) {
	t.Parallel()
	srv, o := server(t)
	var down atomic.Bool
	unreachable(srv, &down)
	for _, size := range []struct {
		name          string
		width, height int
	}{{"phone", 390, 844}, {"desktop", 1280, 800}} {
		owner, key := o.Owner(t, "erin-"+size.name)
		seeded := seedAnswer(t, o, owner)
		ctx := browsertest.Start(t, size.width, size.height, 120*time.Second)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(size.width), int64(size.height)), signIn(srv.URL, key)); err != nil {
			t.Fatal(err)
		}
		step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
			t.Helper()
			if err := chromedp.Do(ctx, actions...); err != nil {
				t.Fatalf("%s, %s: %v", size.name, what, err)
			}
		}

		// The list shows the stored conversation; its link opens it, rendered whole.
		var title string
		var items, scripts int
		var pwned bool
		var href chromedp.AttributeResult
		step("the conversation list", chromedp.Navigate(srv.URL+"/conversations"),
			browsertest.Into(&title, chromedp.Text(chromedp.CSS(`nav.conversations li .title`))),
			browsertest.Into(&href, chromedp.AttributeValue(chromedp.CSS(`nav.conversations li a`), "href")),
			chromedp.Click(chromedp.CSS(`nav.conversations li a`)),
			chromedp.WaitVisible(chromedp.CSS(`#log .msg.assistant ul`)),
			browsertest.Into(&items, chromedp.Evaluate[int](`document.querySelectorAll("#log .msg.assistant ul > li").length`)),
			browsertest.Into(&scripts, chromedp.Evaluate[int](`document.querySelectorAll("#log script, #log a[href^='javascript']").length`)),
			browsertest.Into(&pwned, chromedp.Evaluate[bool](`window.pwned !== undefined`)))
		if title != "Groceries" || href.Value != "/c/"+seeded {
			t.Errorf("%s: the list shows %q → %q; want Groceries → /c/%s", size.name, title, href.Value, seeded)
		}
		if items != 2 || scripts != 0 || pwned {
			t.Errorf("%s: the Markdown answer has %d list items, %d scripts or javascript: links, ran: %v; want 2, 0, false", size.name, items, scripts, pwned)
		}

		// A new chat: Enter sends; within 100 ms Send is disabled and Working… shows.
		var timing struct {
			Shown    float64 `json:"shown"`
			Disabled bool    `json:"disabled"`
		}
		var loc, log string
		step("Enter sends", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#message`)),
			js(`(() => {
				const w = document.getElementById("working"), s = document.getElementById("send"), box = document.getElementById("message");
				window.__timing = {shown: -1, disabled: false};
				box.addEventListener("keydown", () => { window.__t0 = performance.now(); }, true);
				new MutationObserver(() => {
					if (!w.hidden && window.__timing.shown < 0) { window.__timing.shown = performance.now() - window.__t0; window.__timing.disabled = s.disabled; }
				}).observe(w, {attributes: true});
			})()`),
			chromedp.SendKeys(chromedp.CSS(`#message`), "what time is it"),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(chromedp.CSS(`#log a.story`)),
			browsertest.Into(&timing, chromedp.Evaluate[struct {
				Shown    float64 `json:"shown"`
				Disabled bool    `json:"disabled"`
			}](`window.__timing`)),
			browsertest.Into(&loc, chromedp.Location()))
		if timing.Shown < 0 || timing.Shown > 100 || !timing.Disabled {
			t.Errorf("%s: the working indicator showed after %.0f ms, Send disabled: %v; want within 100 ms, disabled", size.name, timing.Shown, timing.Disabled)
		}
		if !strings.Contains(loc, "/c/") {
			t.Fatalf("%s: after the first answer the address is %s; want /c/{id}", size.name, loc)
		}

		// Reload: the conversation is still there, and listed.
		step("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#log .msg.user`)),
			browsertest.Into(&log, chromedp.Text(chromedp.CSS(`#log`))))
		if !strings.Contains(log, "what time is it") || !strings.Contains(log, "Check the time") {
			t.Errorf("%s: after a reload the chat shows %q; want the question and the tool call", size.name, log)
		}
		if size.name == "desktop" {
			var listed int
			step("listed", browsertest.Into(&listed, chromedp.Evaluate[int](`document.querySelectorAll('nav.conversations a[aria-current="page"]').length`)))
			if listed != 1 {
				t.Errorf("desktop: the open conversation is not marked in the list (%d)", listed)
			}
		}

		// A write waits on a card; a reload keeps it live; approved, it says so, also after a reload.
		var buttons int
		var decision string
		// The card arrives scrolled into view with its Approve clear of the sticky composer: a
		// tap lands on the button, not on the box above it.
		var onTop string
		step("a pending card in view", send("remind me to buy milk"), chromedp.WaitVisible(chromedp.CSS(`fieldset.card button[data-choice=approve]`)),
			chromedp.Sleep(300*time.Millisecond),
			browsertest.Into(&onTop, chromedp.Evaluate[string](`(() => {
				const b = document.querySelector("fieldset.card button[data-choice=approve]"), r = b.getBoundingClientRect();
				const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
				return at === b || b.contains(at) ? "approve" : (at ? at.tagName + "." + at.className : "nothing (off screen)");
			})()`)))
		if onTop != "approve" {
			t.Errorf("%s: at the Approve button's centre the page has %s; want the button itself, in view and not under the composer", size.name, onTop)
		}
		step("a pending card survives a reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`fieldset.card button[data-choice=approve]`)))
		browsertest.Shot(t, ctx, "chat-pending-"+size.name+".png")
		var badge string
		step("the badge counts the write", browsertest.Into(&badge, chromedp.Evaluate[string](
			`(b => b.hidden ? "hidden" : b.dataset.count)(document.getElementById("pending-badge"))`)))
		if badge != "1" {
			t.Errorf("%s: with one write waiting the approvals badge shows %q; want 1", size.name, badge)
		}
		step("approve", chromedp.Click(chromedp.CSS(`fieldset.card button[data-choice=approve]`)),
			chromedp.WaitVisible(chromedp.CSS(`p.decision.approved`)), chromedp.WaitVisible(chromedp.CSS(`.pending a.story`)),
			chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`p.decision.approved`)),
			browsertest.Into(&decision, chromedp.Text(chromedp.CSS(`p.decision.approved`))),
			browsertest.Into(&buttons, chromedp.Evaluate[int](`document.querySelectorAll("button[data-choice]").length`)))
		if !approvedByYou.MatchString(decision) || buttons != 0 {
			t.Errorf("%s: the decided card says %q with %d buttons; want \"Approved by you · HH:MM UTC\" and none", size.name, decision, buttons)
		}
		step("the badge is gone", browsertest.Into(&badge, chromedp.Evaluate[string](
			`(b => b.hidden ? "hidden" : b.dataset.count)(document.getElementById("pending-badge"))`)))
		if badge != "hidden" {
			t.Errorf("%s: with nothing waiting the approvals badge shows %q; want it hidden", size.name, badge)
		}
		step("light", js(`document.documentElement.dataset.theme = "light"`))
		step("dark", js(`document.documentElement.dataset.theme = "dark"`))

		// The server unreachable: an error in words, the text kept; Retry sends it.
		var alert, kept string
		down.Store(true)
		step("server down", chromedp.SendKeys(chromedp.CSS(`#message`), "remind me to call mom"),
			chromedp.Click(chromedp.CSS(`#send`)),
			chromedp.WaitVisible(chromedp.CSS(`#log p.error`)),
			browsertest.Into(&alert, chromedp.Text(chromedp.CSS(`#log p.error`))),
			browsertest.Into(&kept, chromedp.Value(chromedp.CSS(`#message`))))
		if !strings.Contains(alert, "could not be reached") || kept != "remind me to call mom" {
			t.Errorf("%s: server down shows %q and keeps %q; want the words and the typed text", size.name, alert, kept)
		}
		down.Store(false)
		var errors int
		step("retry", chromedp.Click(chromedp.CSS(`button.retry`)),
			chromedp.WaitVisible(chromedp.CSS(`#log .turn:last-child fieldset.card`)),
			browsertest.Into(&errors, chromedp.Evaluate[int](`document.querySelectorAll("#log p.error").length`)),
			browsertest.Into(&log, chromedp.Text(chromedp.CSS(`#log .turn:last-child`))))
		if errors != 0 || !strings.Contains(log, "call mom") {
			t.Errorf("%s: after Retry %d errors remain and the last turn is %q; want the call mom card", size.name, errors, log)
		}

		// An unknown page is the app's 404 page.
		var notFound string
		step("404", chromedp.Navigate(srv.URL+"/no/such/page"), browsertest.Into(&notFound, chromedp.Text(chromedp.CSS(`main h1`))))
		if notFound != "Page not found" {
			t.Errorf("%s: an unknown page shows %q; want the HTML 404 page", size.name, notFound)
		}

		// The manifest and the service worker.
		var manifest, worker string
		step("manifest and service worker", chromedp.Navigate(srv.URL+"/"),
			browsertest.Into(&manifest, chromedp.Evaluate[string](`fetch(document.querySelector('link[rel=manifest]').href).then(r => r.json()).then(m => m.name + " " + m.icons.length)`, chromedp.EvalAwaitPromise)),
			browsertest.Into(&worker, chromedp.Evaluate[string](`navigator.serviceWorker.ready.then(r => r.active.scriptURL)`, chromedp.EvalAwaitPromise)))
		if manifest != "Steward 3" || worker != srv.URL+"/sw.js" {
			t.Errorf("%s: manifest %q, service worker %q; want Steward with 3 icons and /sw.js active", size.name, manifest, worker)
		}

		// The new chat, light and dark, for docs/WEBAPP.md.
		step("screenshots", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#message`)))
		browsertest.Shot(t, ctx, "new-chat-"+size.name+".png")
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
			t.Fatal(err)
		}
		step("dark new chat", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#message`)))
		browsertest.Shot(t, ctx, "new-chat-"+size.name+"-dark.png")
	}
}

// TestBrowserStop: at phone width, Stop shows while a turn runs; pressed while the model is
// still thinking, the turn ends "Stopped" at its next step — the read the model then asks
// for never runs — Send is back, and the turn is cancelled in the database.
func TestBrowserStop(t *testing.T) {
	t.Parallel()
	thinking, release := make(chan struct{}), make(chan struct{})
	model := scripted.New(func(llm.Request) (llm.Response, error) {
		close(thinking)
		<-release
		return scripted.Calls(scripted.Call("t1", "get_current_time", `{}`)), nil
	}, scripted.Reply(scripted.Text("It is late.")))
	srv, o, _ := serverWith(t, model)
	owner, key := o.Owner(t, "stella")
	ctx := browsertest.Start(t, 390, 844, 120*time.Second)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), signIn(srv.URL, key),
		send("what time is it"), chromedp.WaitEnabled(chromedp.CSS(`#stop`))); err != nil {
		t.Fatal(err)
	}
	<-thinking
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#stop`))); err != nil {
		t.Fatal(err)
	}
	// The cancel is stored before the model answers (the Stop request came back).
	deadline := time.Now().Add(10 * time.Second)
	for !cancelRequested(t, o, owner) {
		if time.Now().After(deadline) {
			t.Fatal("Stop stored no cancel request")
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(release)
	var status string
	var sendDisabled, stopHidden bool
	var results int
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#log p.stopped`)),
		browsertest.Into(&status, chromedp.Text(chromedp.CSS(`#log p.stopped`))),
		browsertest.Into(&sendDisabled, chromedp.Evaluate[bool](`document.getElementById("send").disabled`)),
		browsertest.Into(&stopHidden, chromedp.Evaluate[bool](`document.getElementById("stop").hidden`)),
		browsertest.Into(&results, chromedp.Evaluate[int](`document.querySelectorAll("#log .chip .result, #log p.error").length`))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status, "Stopped") || sendDisabled || !stopHidden || results != 0 {
		t.Errorf("after Stop: %q, Send disabled %v, Stop hidden %v, %d results or errors; want Stopped, Send back, Stop hidden, none", status, sendDisabled, stopHidden, results)
	}
	browsertest.Shot(t, ctx, "chat-stopped-phone.png")
	var got string
	err := pgxScalar(t, o.SuperURL, `SELECT status FROM turns WHERE owner_id = $1 ORDER BY created_at DESC LIMIT 1`, owner.ID, &got)
	if err != nil || got != string(steward.StatusCancelled) {
		t.Fatalf("the turn is %q (%v); want cancelled", got, err)
	}
}

// cancelRequested reports whether the owner's latest turn has a cancel request.
func cancelRequested(t *testing.T, o testdb.Opened, owner store.Owner) bool {
	t.Helper()
	var asked bool
	err := pgxScalar(t, o.SuperURL, `SELECT coalesce(bool_or(cancel_requested_at IS NOT NULL), false) FROM turns WHERE owner_id = $1`, owner.ID, &asked)
	if err != nil {
		t.Fatal(err)
	}
	return asked
}
