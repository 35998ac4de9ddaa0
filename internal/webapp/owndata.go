package webapp

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/erasure"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// The owner's own data (docs/DATA.md, docs/WEBAPP.md): a conversation renamed or deleted
// (GET /c/{id}/manage, the confirmation: what goes, and the facts to keep or forget),
// conversations searched (GET /conversations/search), and Settings → Your data
// (GET /settings/data): "Download my data" (GET /export, the zip) and forgetting a time range
// (counted first, then confirmed).

// ownDataRoutes adds the pages; the POSTs check the CSRF token.
func (a *web) ownDataRoutes(r chi.Router) {
	r.Get("/c/{id}/manage", a.managePage)
	r.Get("/conversations/search", a.searchPage)
	r.Get("/settings/data", a.dataPage)
	r.Get("/export", a.exportData)
	r.Group(func(r chi.Router) {
		r.Use(checkCSRF)
		r.Post("/c/{id}/rename", a.renameConversation)
		r.Post("/c/{id}/delete", a.deleteConversation)
		r.Post("/settings/data/forget", a.forgetRange)
	})
}

// conversationID is the {id} of a conversation route (uuid.Nil when it is none, or when
// erasure is off: the page is then 404).
func (a *web) conversationID(r *http.Request) uuid.UUID {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil || a.d.Erasure == nil {
		return uuid.Nil
	}
	return id
}

// managePage is a conversation's rename form and its delete confirmation.
func (a *web) managePage(w http.ResponseWriter, r *http.Request) {
	a.manage(w, r, http.StatusOK, "")
}

func (a *web) manage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	id := a.conversationID(r)
	if id == uuid.Nil {
		a.notFound(w, r)
		return
	}
	owner := current(r).OwnerID
	conv, err := a.d.Activity.Conversation(r.Context(), owner, id)
	var facts []steward.MemoryFact
	if err == nil {
		facts, err = a.d.Erasure.FactsOf(r.Context(), owner, id)
	}
	switch {
	case errors.Is(err, store.ErrNotFound) || steward.ErrorCode(err) == steward.CodeNotFound:
		a.notFound(w, r)
		return
	case err != nil:
		a.fail(w, r, err)
		return
	}
	csrf := current(r).csrf
	base := "/c/" + id.String()
	a.write(w, r, "conversations", status, func(p *page) {
		p.raw(`<div class="manage"><h1>`).text(titleOf(conv.Conversation)).raw(`</h1><p><a href="`).text(base).raw(`">Back to the conversation</a></p>`).
			pageError(r, msg, base+"/rename", base+"/delete")
		p.raw(`<h2>Rename</h2><form method="post" action="`).text(base+"/rename").raw(`">`).formError(r, base+"/rename", msg).
			raw(`<label for="title">Title</label><input id="title" name="title" type="text" required maxlength="200"`).
			value(r, base+"/rename", "title", conv.Title).raw(`>`).hidden(csrf).raw(`<button type="submit">Rename</button></form>`)
		p.raw(`<h2>Delete</h2><form method="post" action="`).text(base+"/delete").raw(`" class="danger-zone">`).formError(r, base+"/delete", msg).
			raw(`<p>Deleting this conversation removes its `).text(plural(len(conv.Messages), "message")).raw(` and `).text(plural(len(conv.Turns), "turn")).
			raw(`, their tool calls, and what Steward remembers from them. A write still waiting for your approval in it is cancelled and never runs. This cannot be undone.</p>`)
		if len(facts) > 0 {
			p.raw(`<fieldset><legend>`).text(plural(len(facts), "fact")).raw(` Steward learned from it</legend><ul class="facts">`)
			for _, f := range facts {
				p.raw(`<li>`).text(f.Content).raw(`</li>`)
			}
			p.raw(`</ul><div class="choice"><input type="radio" id="facts-keep" name="facts" value="keep" checked><label for="facts-keep">Keep them in memory</label></div>` +
				`<div class="choice"><input type="radio" id="facts-forget" name="facts" value="forget"><label for="facts-forget">Forget them too</label></div></fieldset>`)
		}
		p.hidden(csrf).raw(`<button type="submit" class="danger">Delete conversation</button></form></div>`)
	})
}

func (a *web) renameConversation(w http.ResponseWriter, r *http.Request) {
	id := a.conversationID(r)
	if id == uuid.Nil {
		a.notFound(w, r)
		return
	}
	_, err := a.d.Erasure.Rename(r.Context(), current(r).OwnerID, id, r.PostFormValue("title"))
	a.done(w, r, err, "/c/"+id.String(), func(status int, msg string) { a.manage(w, r, status, msg) })
}

func (a *web) deleteConversation(w http.ResponseWriter, r *http.Request) {
	id := a.conversationID(r)
	if id == uuid.Nil {
		a.notFound(w, r)
		return
	}
	_, err := a.d.Erasure.DeleteConversation(r.Context(), current(r).OwnerID, id, erasure.Facts(r.PostFormValue("facts")))
	a.done(w, r, err, "/conversations", func(status int, msg string) { a.manage(w, r, status, msg) })
}

// searchPage is GET /conversations/search?q=: the conversations whose title or messages
// hold q, newest first, grouped by day in the owner's zone.
func (a *web) searchPage(w http.ResponseWriter, r *http.Request) {
	if a.d.Erasure == nil {
		a.notFound(w, r)
		return
	}
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	var days []erasure.Day
	msg := ""
	status := http.StatusOK
	if q != "" {
		var err error
		days, err = a.d.Erasure.Search(r.Context(), current(r).OwnerID, q)
		if m, ok := invalid(err); ok {
			msg, status = m, http.StatusUnprocessableEntity
		} else if err != nil {
			a.fail(w, r, err)
			return
		}
	}
	a.write(w, r, "conversations", status, func(p *page) {
		p.raw(`<div class="search-page"><h1>Search chats</h1>`)
		searchForm(p, q)
		if msg != "" {
			p.raw(`<p class="error" role="alert">`).text(msg).raw(`</p>`)
		}
		if q != "" && msg == "" && len(days) == 0 {
			p.raw(`<p class="meta">No conversation holds “`).text(q).raw(`”.</p>`)
		}
		for _, d := range days {
			p.raw(`<h2>`).text(d.Date).raw(`</h2><ol class="results">`)
			for _, c := range d.Conversations {
				p.raw(`<li><a href="/c/`).text(c.ID.String()).raw(`">`).text(titleOf(c.Conversation)).raw(`</a>`)
				if c.Snippet != "" {
					p.raw(`<p class="meta">`).text(clip(c.Snippet, 160)).raw(`</p>`)
				}
				p.raw(`</li>`)
			}
			p.raw(`</ol>`)
		}
		p.raw(`</div>`)
	})
}

// searchForm is the conversations' search box.
func searchForm(p *page, q string) {
	p.raw(`<form method="get" action="/conversations/search" class="search" role="search"><label for="q" class="sr-only">Search chats</label>` +
		`<input id="q" name="q" type="search" maxlength="200" placeholder="Search chats" value="`).text(q).raw(`"><button type="submit">Search</button></form>`)
}

// dataPage is Settings → Your data.
func (a *web) dataPage(w http.ResponseWriter, r *http.Request) {
	a.data(w, r, http.StatusOK, "", nil)
}

// data writes the page; counted is what a range would forget (asking to confirm it).
func (a *web) data(w http.ResponseWriter, r *http.Request, status int, msg string, counted *erasure.Forgotten) {
	const forget = "/settings/data/forget"
	csrf := current(r).csrf
	a.write(w, r, "settings", status, func(p *page) {
		p.raw(`<div class="data"><h1>Your data</h1><p><a href="/settings">Back to Settings</a></p>`).pageError(r, msg, forget)
		if a.d.Export != nil {
			p.raw(`<h2>Download my data</h2><p>One zip of everything Steward holds for you: conversations (JSON and Markdown), memory, tasks, automations, rules, documents, the ledger (CSV and Beancount), trades and the audit log — without secrets. A README inside says what each file is.</p>` +
				`<p><a class="button" href="/export" download>Download my data</a></p>`)
		}
		if a.d.Erasure == nil {
			p.raw(`</div>`)
			return
		}
		p.raw(`<h2>Forget a time range</h2><form method="post" action="`+forget+`">`).formError(r, forget, msg).
			raw(`<label for="from">From (UTC date)</label><input id="from" name="from" type="date" required`).value(r, forget, "from", "").
			raw(`><label for="to">Until, not including (UTC date)</label><input id="to" name="to" type="date" required`).value(r, forget, "to", "").raw(`>`)
		if counted != nil {
			p.raw(`<p role="status" class="confirm">This forgets `).text(forgottenWords(*counted)).raw(`. It cannot be undone.</p>` +
				`<input type="hidden" name="confirm" value="yes">`).hidden(csrf).raw(`<button type="submit" class="danger">Forget them</button>`)
		} else {
			p.hidden(csrf).raw(`<button type="submit">Count what this forgets</button>`)
		}
		p.raw(`</form></div>`)
	})
}

// forgottenWords says what a forget counted.
func forgottenWords(f erasure.Forgotten) string {
	return fmt.Sprintf("%s, %s, %s and %s", plural(f.Conversations, "conversation"), plural(f.MemoryChunks, "memory chunk"),
		plural(f.Facts, "fact"), plural(f.Documents, "document"))
}

// forgetRange counts a range's data (first POST) or forgets it (confirm=yes).
func (a *web) forgetRange(w http.ResponseWriter, r *http.Request) {
	if a.d.Erasure == nil {
		a.notFound(w, r)
		return
	}
	from, err1 := time.Parse(time.DateOnly, r.PostFormValue("from"))
	to, err2 := time.Parse(time.DateOnly, r.PostFormValue("to"))
	if err1 != nil || err2 != nil {
		a.data(w, r, http.StatusUnprocessableEntity, "Give both dates.", nil)
		return
	}
	confirm := r.PostFormValue("confirm") == "yes"
	n, err := a.d.Erasure.Forget(r.Context(), current(r).OwnerID, erasure.Forget{From: &from, To: &to, Confirm: confirm})
	msg, refused := invalid(err)
	switch {
	case refused:
		a.data(w, r, http.StatusUnprocessableEntity, msg, nil)
	case err != nil:
		a.fail(w, r, err)
	case !confirm:
		a.data(w, r, http.StatusOK, "", &n)
	default:
		a.write(w, r, "settings", http.StatusOK, func(p *page) {
			p.raw(`<div class="data"><h1>Your data</h1><p role="status">Forgot `).text(forgottenWords(n)).
				raw(`.</p><p><a href="/settings/data">Back to Your data</a></p></div>`)
		})
	}
}

// exportData streams the owner's export (GET /export); a failure before the first byte is
// the error page, after it the download is cut short (logged).
func (a *web) exportData(w http.ResponseWriter, r *http.Request) {
	if a.d.Export == nil {
		a.notFound(w, r)
		return
	}
	name := "steward-export-" + a.now.Now().UTC().Format(time.DateOnly) + ".zip"
	sw := &startWriter{w: w, start: func() {
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	}}
	err := a.d.Export.Write(r.Context(), current(r).OwnerID, sw)
	switch {
	case err == nil:
	case !sw.started:
		a.fail(w, r, err)
	default:
		zerolog.Ctx(r.Context()).Error().Err(err).Msg("web app: export cut short")
	}
}

// startWriter sets the headers before its first write.
type startWriter struct {
	w       http.ResponseWriter
	start   func()
	started bool
}

func (s *startWriter) Write(p []byte) (int, error) {
	if !s.started {
		s.start()
		s.started = true
	}
	return s.w.Write(p)
}
