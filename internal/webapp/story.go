package webapp

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/markdown"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// storyPage is the turn's story: GET /turns/{id} — the turn, its calls with the gate's
// decisions and who made them, and its audit events (model calls with tokens, cost and
// latency among them) in order. Another owner's turn is 404, like an unknown one.
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
	me := current(r)
	v, calls, events := st.Turn, st.Calls, st.Events
	a.write(w, r, "story", status, func(p *page) {
		if msg != "" {
			p.raw(`<p class="error" role="alert">`).text(msg).raw(`</p>`)
		}
		p.raw(`<h1>Turn story</h1><p class="meta">`).text(string(v.Status)).raw(` · `).text(string(v.Trigger)).raw(` · `).
			text(when(v.CreatedAt)).raw(` · model `).text(v.Model).raw(`</p>`)
		if v.Answer != "" {
			p.raw(`<div class="msg assistant md">`).raw(markdown.HTML(v.Answer)).raw(`</div>`)
		}
		p.raw(`<h2>Tool calls</h2><ol class="calls">`)
		for _, c := range calls {
			p.raw(`<li><code>`).text(c.Tool).raw(`</code> <code>`).text(string(c.Args)).raw(`</code> — `).text(string(c.Status))
			if c.DecidedBy != "" {
				p.raw(`, decided by `).text(c.DecidedBy)
			}
			if c.Message != "" {
				p.raw(` (“`).text(c.Message).raw(`”)`)
			}
			switch {
			case c.UndoneAt != nil:
				p.raw(` — <strong>undone</strong> `).text(when(*c.UndoneAt)).raw(` by `).text(c.UndoneBy)
			case a.d.Undo != nil && a.d.Undo.Undoable(c):
				p.raw(`<form method="post" class="inline undo" action="/turns/`).text(v.TurnID.String()).raw(`/calls/`).
					text(url.PathEscape(c.CallID)).raw(`/undo">`).hidden(me.csrf).raw(`<button type="submit">Undo</button></form>`)
			}
			p.raw(`</li>`)
		}
		p.raw(`</ol><h2>Events</h2><ol class="events">`)
		for _, e := range events {
			p.raw(`<li><strong>`).text(e.Kind).raw(`</strong> <span class="meta">`).text(e.CreatedAt.UTC().Format("15:04:05.000")).
				raw(`</span><pre class="args">`).text(string(e.Data)).raw(`</pre></li>`)
		}
		p.raw(`</ol>`)
	})
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
	status := map[steward.Code]int{steward.CodeNotFound: http.StatusNotFound, steward.CodeConflict: http.StatusConflict,
		steward.CodeInvalid: http.StatusUnprocessableEntity}[steward.ErrorCode(err)]
	msg, ok := invalid(err)
	if status == 0 || !ok {
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
