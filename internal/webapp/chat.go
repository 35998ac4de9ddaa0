package webapp

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/markdown"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
)

// The chat: GET / is a new chat, GET /c/{id} a conversation rendered whole
// on the server — messages, answers as Markdown, tool calls as chips, approval cards live
// while they can be decided and saying how they were decided once they cannot — beside the
// list of the owner's conversations (a page of its own on a phone: GET /conversations). The
// composer's script (assets/app.js) streams a turn into the same markup.

// conversationsShown is how many conversations a page of the list shows.
const conversationsShown = 20

func (a *web) chatPage(w http.ResponseWriter, r *http.Request) {
	a.chatView(w, r, uuid.Nil)
}

// conversationPage is GET /c/{id}; another owner's or an unknown conversation is 404.
func (a *web) conversationPage(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil || id == uuid.Nil {
		a.notFound(w, r)
		return
	}
	a.chatView(w, r, id)
}

// chatView writes the chat page of conversation id (uuid.Nil: a new chat).
func (a *web) chatView(w http.ResponseWriter, r *http.Request, id uuid.UUID) {
	owner := current(r).OwnerID
	list, err := a.conversationList(r, id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var conv steward.Conversation
	var turns []activity.ChatTurn
	if id != uuid.Nil {
		conv, turns, err = a.d.Activity.Chat(r.Context(), owner, id)
		switch {
		case errors.Is(err, store.ErrNotFound) || steward.ErrorCode(err) == steward.CodeNotFound:
			a.notFound(w, r)
			return
		case err != nil:
			a.fail(w, r, err)
			return
		}
	}
	now := a.now.Now()
	a.write(w, r, "chat", http.StatusOK, func(p *page) {
		p.raw(`<div class="chat-layout">`)
		list(p)
		p.raw(`<section class="thread" aria-label="Chat"><h1 class="sr-only">`).text(titleOf(conv)).raw(`</h1>`)
		if id != uuid.Nil && a.d.Erasure != nil {
			p.raw(`<p class="thread-tools"><a href="/c/`).text(id.String()).raw(`/manage">Rename or delete</a></p>`)
		}
		p.raw(`<div id="log" role="log" aria-live="polite" aria-label="Conversation">`)
		if id == uuid.Nil {
			p.raw(`<p class="empty" id="empty">Ask Steward anything: it answers, and asks you before it changes anything.</p>`)
		}
		for _, t := range turns {
			chatTurn(p, a.words(), t, now, a.d.Voice.CanSpeak())
		}
		p.raw(`</div><form id="chat" class="composer" method="post" action="/chat"`)
		if a.d.Voice.CanSpeak() {
			p.raw(` data-speak`) // app.js adds a Play button to each new answer
		}
		p.raw(`>` +
			`<label for="message" class="sr-only">Message</label>` +
			`<textarea id="message" name="message" rows="2" required maxlength="32000" placeholder="Message Steward" aria-describedby="composer-hint"></textarea>` +
			`<input type="hidden" name="conversation_id" value="`)
		if id != uuid.Nil {
			p.text(id.String())
		}
		p.raw(`"><div class="composer-bar"><span id="composer-hint" class="meta hint">Enter sends · Shift+Enter new line</span>`)
		if a.d.Voice.CanTranscribe() {
			// The microphone (app.js's recorder): tap to record, tap again to stop; the
			// transcript lands in the box. What went wrong is said in #voice-note.
			p.raw(`<button type="button" id="mic" class="secondary mic" aria-pressed="false" hidden>Record</button>`)
		}
		p.raw(`<span id="working" class="working" role="status" hidden>Working…</span>` +
			// Stop, shown while a turn runs, cancels it (POST /turns/{id}/cancel; app.js's setBusy).
			`<button type="button" id="stop" class="secondary" hidden>Stop</button>` +
			`<button type="submit" id="send">Send</button></div><p id="voice-note" class="meta voice-note" role="status" hidden></p></form></section></div>`)
	})
}

// conversationsPage is the list alone: the phone's way to the conversations (GET /conversations).
func (a *web) conversationsPage(w http.ResponseWriter, r *http.Request) {
	list, err := a.conversationList(r, uuid.Nil)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "conversations", http.StatusOK, func(p *page) {
		p.raw(`<div class="conversations-page"><h1 class="sr-only">Chats</h1>`)
		list(p)
		p.raw(`</div>`)
	})
}

// conversationList reads the page ?page= of the owner's conversations and returns the list's
// markup, the open conversation (current) marked.
func (a *web) conversationList(r *http.Request, open uuid.UUID) (func(p *page), error) {
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	n = max(n, 0)
	convs, more, err := a.d.Activity.ConversationPage(r.Context(), current(r).OwnerID, n, conversationsShown)
	if err != nil {
		return nil, err
	}
	return func(p *page) {
		p.raw(`<nav class="conversations" aria-label="Conversations"><a class="new-chat" href="/">New chat</a><h2>Conversations</h2>`)
		if a.d.Erasure != nil {
			searchForm(p, "")
		}
		if len(convs) == 0 {
			p.raw(`<p class="meta">No conversations yet.</p>`)
		}
		p.raw(`<ol>`)
		for _, c := range convs {
			p.raw(`<li><a href="/c/`).text(c.ID.String()).raw(`"`)
			if c.ID == open {
				p.raw(` aria-current="page"`)
			}
			p.raw(`><span class="title">`).text(titleOf(c)).raw(`</span> <time datetime="`).text(c.UpdatedAt.UTC().Format(time.RFC3339)).
				raw(`">`).text(when(c.UpdatedAt)).raw(`</time></a></li>`)
		}
		p.raw(`</ol><p class="pager">`)
		if n > 0 {
			p.raw(`<a href="?page=`).text(strconv.Itoa(n - 1)).raw(`">Newer</a> `)
		}
		if more {
			p.raw(`<a href="?page=`).text(strconv.Itoa(n + 1)).raw(`">Older</a>`)
		}
		p.raw(`</p></nav>`)
	}, nil
}

// titleOf is what the list calls a conversation.
func titleOf(c steward.Conversation) string {
	switch {
	case c.ID == uuid.Nil:
		return "New chat"
	case c.Title == "":
		return "Untitled conversation"
	}
	return clip(c.Title, 80)
}

// chatTurn writes one turn of the history: the owner's message, the answers, a chip per tool
// call with how a person decided it, then how the turn stands — a live approval card while
// it can be decided.
func chatTurn(p *page, reg *tools.Registry, t activity.ChatTurn, now time.Time, speak bool) {
	v := t.Turn
	results := map[string]activity.ToolResult{}
	for _, m := range t.Messages {
		for _, res := range m.ToolResults {
			results[res.CallID] = res
		}
	}
	live := v.Status == steward.StatusSuspended && (v.ExpiresAt == nil || now.Before(*v.ExpiresAt))
	lapsed := v.Status == steward.StatusExpired || (v.Status == steward.StatusSuspended && !live)
	p.raw(`<div class="turn" data-turn="`).text(v.TurnID.String()).raw(`">`)
	for _, m := range t.Messages {
		switch m.Role {
		case "user":
			if m.Text != "" {
				p.raw(`<div class="msg user">`).text(m.Text).raw(`</div>`)
			}
		case "assistant":
			if m.Text != "" {
				p.raw(`<div class="msg assistant md">`).raw(markdown.HTML(m.Text)).raw(`</div>`)
				if speak {
					playButton(p)
				}
			}
			for _, c := range m.ToolCalls {
				res, done := results[c.CallID]
				callChip(p, reg, t, c, res, done, now, lapsed)
			}
		}
	}
	turnState(p, reg, v, live)
	if !live {
		p.raw(`<a class="story" href="/turns/`).text(v.TurnID.String()).raw(`">The turn's story</a>`)
	}
	p.raw(`</div>`)
}

// callChip writes a tool call's chip and how a person decided it: the decision filed, the
// journal's human decision, or "expired" for a call left pending when the turn lapsed.
func callChip(p *page, reg *tools.Registry, t activity.ChatTurn, c activity.ToolCall, res activity.ToolResult, done bool, now time.Time, lapsed bool) {
	rec, journaled := t.Calls[c.CallID]
	chip(p, reg, c, res, done)
	d, ok := t.Decisions[c.CallID]
	if !ok && journaled && rec.DecidedBy == "human" {
		d, ok = activity.Decision{Approved: rec.Status != steward.CallDenied, By: "you", Message: rec.Message}, true
	}
	switch {
	case ok:
		decisionNote(p, verdictOf(d, now))
	case journaled && rec.Status == steward.CallPending && lapsed:
		decisionNote(p, expired)
	}
}

// turnState writes how the turn stands: a live approval card, its error, or that it is
// still working.
func turnState(p *page, reg *tools.Registry, v steward.View, live bool) {
	switch {
	case live:
		p.raw(`<div class="pending">`)
		card(p, reg, v.TurnID, v.Pending)
		p.raw(`<div class="result" aria-live="polite"></div></div>`)
	case v.Status == steward.StatusFailed || v.Status == steward.StatusAborted:
		p.raw(`<p class="error">Error: `).text(cmp.Or(v.Error, "the turn failed")).raw(`</p>`)
	case v.Status == steward.StatusContinuing || v.Status == steward.StatusRunning || v.Status == steward.StatusResuming:
		p.raw(`<p class="status continuing" data-poll="`).text(v.TurnID.String()).raw(`">Still working on it…</p>`)
	}
}

// chip writes a tool call as a compact chip: its call's summary and, once it came back, its
// result's; the tool's name, raw arguments and raw result behind the disclosure. The stream
// sends the same markup to app.js (event.ChipHTML).
func chip(p *page, reg *tools.Registry, c activity.ToolCall, res activity.ToolResult, done bool) {
	cls, state := "chip waiting", "…"
	switch out := agent.DataContent(res.Output); { // a stored result is inside its data block
	case done && res.IsError:
		cls, state = "chip error", reg.SayResult(c.Tool, c.Args, out, true)
	case done:
		cls, state = "chip done", reg.SayResult(c.Tool, c.Args, out, false)
	}
	p.raw(`<details class="`).raw(cls).raw(`" data-call="`).text(c.CallID).raw(`"><summary><span class="chip-call">`).
		text(reg.SayCall(c.Tool, c.Args)).raw(`</span> <span class="chip-state">`)
	if done {
		p.raw(`<span aria-hidden="true">→ </span>`)
	}
	p.text(state).raw(`</span></summary><div class="chip-body">`)
	codeBlocks(p, c, res, done)
	p.raw(`<p class="meta">Tool <code class="tool">`).text(c.Tool).
		raw(`</code> · arguments</p><pre class="args">`).text(steward.Visible(string(c.Args))).raw(`</pre>`)
	if done {
		p.raw(`<p class="meta">Result</p><pre class="args result">`).text(steward.Visible(string(res.Output))).raw(`</pre>`)
	}
	p.raw(`</div></details>`)
}

// codeBlocks shows a call that ran code (run_code) as a person reads it: the code as written,
// then what it printed and the value it returned, above the exact arguments and result.
func codeBlocks(p *page, c activity.ToolCall, res activity.ToolResult, done bool) {
	var args struct {
		Code string `json:"code"`
	}
	if c.Tool != "run_code" || json.Unmarshal(c.Args, &args) != nil || args.Code == "" {
		return
	}
	p.raw(`<p class="meta">Code</p><pre class="code">`).text(steward.Visible(args.Code)).raw(`</pre>`)
	var out struct {
		Printed string          `json:"printed"`
		Result  json.RawMessage `json:"result"`
	}
	if !done || res.IsError || json.Unmarshal(agent.DataContent(res.Output), &out) != nil {
		return
	}
	if out.Printed != "" {
		p.raw(`<p class="meta">Printed</p><pre class="code output">`).text(steward.Visible(out.Printed)).raw(`</pre>`)
	}
	if len(out.Result) > 0 && string(out.Result) != "null" {
		p.raw(`<p class="meta">Returned</p><pre class="code output">`).text(steward.Visible(string(out.Result))).raw(`</pre>`)
	}
}

// playButton reads the answer before it aloud (app.js posts its text to /voice/speak).
func playButton(p *page) {
	p.raw(`<button type="button" class="play secondary" data-play>Play</button>`)
}
