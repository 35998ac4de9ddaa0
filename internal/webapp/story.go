package webapp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/markdown"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// storyPage is the turn's story: GET /turns/{id} — the owner's question and the answer, then
// a timeline of the tool calls (their summaries, how and by whom each was decided, how long
// each ran), the model calls' tokens, time and cost, and the raw audit events behind a
// disclosure. Another owner's turn is 404, like an unknown one.
func (a *web) storyPage(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	var st activity.Story
	if err == nil {
		st, err = a.d.Activity.Story(r.Context(), current(r).OwnerID, id)
	}
	switch {
	case err != nil && (errors.Is(err, store.ErrNotFound) || steward.ErrorCode(err) == steward.CodeNotFound || id == uuid.Nil):
		a.write(w, r, "story", http.StatusNotFound, func(p *page) { p.raw(`<h1>Turn not found</h1>`) })
		return
	case err != nil:
		a.fail(w, r, err)
		return
	}
	a.story(w, r, http.StatusOK, "", st)
}

// story writes a turn's story with status and, when msg is not empty, a message above it.
func (a *web) story(w http.ResponseWriter, r *http.Request, status int, msg string, st activity.Story) {
	me, reg, now := current(r), a.words(), a.now.Now()
	v, events := st.Turn, st.Events
	took, models := timings(events)
	a.write(w, r, "story", status, func(p *page) {
		if msg != "" {
			p.raw(`<p class="error" role="alert">`).text(msg).raw(`</p>`)
		}
		p.raw(`<h1>Turn story</h1><p class="meta">`).text(statusWords(v.Status)).raw(` · `).text(string(v.Trigger)).raw(` · `).
			text(when(v.CreatedAt)).raw(`</p>`)
		taintNote(p, v)
		p.raw(`<section class="exchange" aria-label="Question and answer">`)
		if st.Question != "" {
			p.raw(`<div class="msg user"><span class="sr-only">You asked: </span>`).text(st.Question).raw(`</div>`)
		}
		switch {
		case v.Answer != "":
			p.raw(`<div class="msg assistant md">`).raw(markdown.HTML(v.Answer)).raw(`</div>`)
		case v.Error != "":
			p.raw(`<p class="error">Error: `).text(v.Error).raw(`</p>`)
		case v.Status == steward.StatusSuspended:
			p.raw(`<p class="meta">No answer yet: Steward is waiting for your approval (<a href="/approvals">Approvals</a>).</p>`)
		default:
			p.raw(`<p class="meta">No answer.</p>`)
		}
		p.raw(`</section><h2>Timeline</h2>`)
		if len(st.Calls) == 0 {
			p.raw(`<p class="meta">No tools were used.</p>`)
		}
		p.raw(`<ol class="timeline">`)
		for _, c := range st.Calls {
			call := activity.ToolCall{CallID: c.CallID, Tool: c.Tool, Args: c.Args}
			res, done := activity.ToolResult{CallID: c.CallID, Tool: c.Tool, Output: c.Result, IsError: c.Status == steward.CallFailed || c.Status == steward.CallDenied}, len(c.Result) > 0
			p.raw(`<li class="step"><span class="meta when">`).text(c.CreatedAt.UTC().Format("15:04:05")).raw(`</span>`)
			chip(p, reg, call, res, done)
			p.raw(`<p class="meta">`).text(callWords(c))
			if ms, ok := took[c.CallID]; ok {
				p.raw(` · ran in `).text(duration(ms))
			}
			p.raw(`</p>`)
			if d, ok := st.Decisions[c.CallID]; ok {
				decisionNote(p, verdictOf(d, now))
			}
			switch {
			case c.UndoneAt != nil:
				p.raw(`<p class="decision undone" role="note"><strong>Undone</strong> `).text(when(*c.UndoneAt)).raw(` by `).text(c.UndoneBy).raw(`</p>`)
			case a.d.Undo != nil && a.d.Undo.Undoable(c):
				p.raw(`<form method="post" class="inline undo" action="/turns/`).text(v.TurnID.String()).raw(`/calls/`).
					text(url.PathEscape(c.CallID)).raw(`/undo">`).hidden(me.csrf).raw(`<button type="submit">Undo</button></form>`)
			}
			p.raw(`</li>`)
		}
		p.raw(`</ol><h2>Cost</h2><p class="cost">`).text(costWords(v, models)).raw(`</p>`)
		p.raw(`<details class="raw-events"><summary>Raw audit events (`).text(strconv.Itoa(len(events))).raw(`)</summary><ol class="events">`)
		for _, e := range events {
			p.raw(`<li><strong>`).text(e.Kind).raw(`</strong> <span class="meta">`).text(e.CreatedAt.UTC().Format("15:04:05.000")).
				raw(`</span><pre class="args">`).text(steward.Visible(string(e.Data))).raw(`</pre></li>`)
		}
		p.raw(`</ol></details>`)
	})
}

// taintNote says, on a turn's story, what outside content the turn read (steward.View.Taint,
// docs/ARCHITECTURE.md §3); nothing for a turn that read none.
func taintNote(p *page, v steward.View) {
	if v.Taint != "" {
		p.raw(`<p class="held" role="note">This turn read outside content (`).text(v.Taint).
			raw(`): calls that could carry data out waited for you, and memory keeps the exchange as untrusted</p>`)
	}
}

// modelCalls is what a turn's model calls add up to.
type modelCalls struct {
	n         int
	latencyMS int64
}

// timings reads, from a turn's audit events, how long each tool call ran (by call id, in
// milliseconds) and how many model calls it made in how long.
func timings(events []steward.Event) (map[string]int64, modelCalls) {
	took, models := map[string]int64{}, modelCalls{}
	for _, e := range events {
		var d struct {
			CallID     string `json:"call_id"`
			DurationMS int64  `json:"duration_ms"`
			LatencyMS  int64  `json:"latency_ms"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			continue
		}
		switch e.Kind {
		case "tool_result":
			took[d.CallID] += d.DurationMS
		case "model_call":
			models.n++
			models.latencyMS += d.LatencyMS
		}
	}
	return took, models
}

// duration words milliseconds: "12 ms", "1.3 s".
func duration(ms int64) string {
	if ms < 1000 {
		return strconv.FormatInt(ms, 10) + " ms"
	}
	return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
}

// costWords says what a turn cost: its model calls, tokens and estimated price.
func costWords(v steward.View, m modelCalls) string {
	u := v.Usage
	s := fmt.Sprintf("%s in %s · %d tokens in, %d out", plural(m.n, "model call"), duration(m.latencyMS), u.InputTokens, u.OutputTokens)
	if u.CachedTokens > 0 {
		s += fmt.Sprintf(" (%d cached)", u.CachedTokens)
	}
	return s + fmt.Sprintf(" · $%.4f", u.CostUSD)
}

// plural is "1 model call", "3 model calls".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + one + "s"
}

// statusWords is a turn's status as the story's header says it.
func statusWords(s steward.Status) string {
	switch s {
	case steward.StatusSuspended:
		return "Waiting for approval"
	case "":
		return "Unknown"
	}
	r := []rune(string(s))
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// callWords says how the journal left a call and who, other than a person, decided it.
func callWords(c steward.CallRecord) string {
	s := map[steward.CallStatus]string{steward.CallPending: "waiting", steward.CallApproved: "approved", steward.CallDenied: "not run",
		steward.CallExecuting: "running", steward.CallSucceeded: "done", steward.CallFailed: "failed",
		steward.CallUnknown: "unknown (interrupted; never run again)"}[c.Status]
	if s == "" {
		s = string(c.Status)
	}
	s = string(c.Kind) + " · " + s
	switch by := c.DecidedBy; {
	case by == "" || by == "human":
	case strings.HasPrefix(by, "rule:"):
		s += " · by a standing rule"
	case by == "mode":
		s += " · by the gate mode"
	case strings.HasPrefix(by, "cap:"):
		s += " · refused by the " + strings.TrimPrefix(by, "cap:") + " cap"
	case by == "kill":
		s += " · refused by the kill switch"
	default:
		s += " · by " + by
	}
	return s
}

// undoCall undoes a call of the turn within the undo window: POST
// /turns/{id}/calls/{call_id}/undo (internal/undo). Success shows the story again; a refusal
// shows it with the reason: 404 unknown, 409 already undone or past the window, 422 a call
// that cannot be undone.
func (a *web) undoCall(w http.ResponseWriter, r *http.Request) {
	ctx, owner := r.Context(), current(r).OwnerID
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	callID, uerr := url.PathUnescape(chi.URLParam(r, "call_id"))
	if err != nil || uerr != nil || a.d.Undo == nil {
		a.write(w, r, "story", http.StatusNotFound, func(p *page) { p.raw(`<h1>Turn not found</h1>`) })
		return
	}
	_, err = a.d.Undo.Undo(ctx, owner, id, callID, "web")
	if err == nil {
		http.Redirect(w, r, "/turns/"+id.String(), http.StatusSeeOther)
		return
	}
	status, msg, ok := refused(err)
	if !ok {
		a.fail(w, r, err)
		return
	}
	st, serr := a.d.Activity.Story(ctx, owner, id)
	if serr != nil {
		a.write(w, r, "story", status, func(p *page) { p.raw(`<p class="error" role="alert">`).text(msg).raw(`</p>`) })
		return
	}
	a.story(w, r, status, msg, st)
}
