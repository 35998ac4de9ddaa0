package webapp

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/activity"
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
	v, calls, events := st.Turn, st.Calls, st.Events
	a.write(w, r, "story", http.StatusOK, func(p *page) {
		p.raw(`<h1>Turn story</h1><p class="meta">`).text(string(v.Status)).raw(` · `).text(string(v.Trigger)).raw(` · `).
			text(when(v.CreatedAt)).raw(` · model `).text(v.Model).raw(`</p>`)
		if v.Answer != "" {
			p.raw(`<p class="msg assistant">`).text(v.Answer).raw(`</p>`)
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
