package httpapi

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/erasure"
)

// routesOwnData adds the routes of the owner's own data (docs/DATA.md): a conversation's
// rename, search and delete, forgetting, and the export.
func (a *api) routesOwnData(r chi.Router) {
	erasures := configured(a.d.Erasure != nil, "deleting and forgetting are")
	r.With(erasures).Get("/conversations/search", a.searchConversations)
	r.With(erasures, requireJSON).Patch("/conversations/{id}", a.renameConversation)
	r.With(erasures).Get("/conversations/{id}/facts", a.conversationFacts)
	r.With(erasures).Delete("/conversations/{id}", a.deleteConversation)
	r.With(erasures, requireJSON).Post("/forget", a.forget)
	r.With(configured(a.d.Export != nil, "the export is")).Get("/export", a.export)
}

// renameConversation: PATCH /v1/conversations/{id} {"title"} → the conversation.
func (a *api) renameConversation(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "conversation")
	if !ok {
		return
	}
	var body struct {
		Title string `json:"title"`
	}
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	c, err := a.d.Erasure.Rename(r.Context(), principal(r.Context()).OwnerID, id, body.Title)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// conversationFacts lists the facts extracted from a conversation, which its delete asks
// about: GET /v1/conversations/{id}/facts → {"facts":[…]}.
func (a *api) conversationFacts(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "conversation")
	if !ok {
		return
	}
	facts, err := a.d.Erasure.FactsOf(r.Context(), principal(r.Context()).OwnerID, id)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"facts": facts})
}

// deleteConversation: DELETE /v1/conversations/{id}?facts=keep|forget → {"deleted":{counts}}.
// facts is required when the conversation has facts (422 otherwise, saying how many).
func (a *api) deleteConversation(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "conversation")
	if !ok {
		return
	}
	d, err := a.d.Erasure.DeleteConversation(r.Context(), principal(r.Context()).OwnerID, id, erasure.Facts(r.URL.Query().Get("facts")))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": d})
}

// searchConversations: GET /v1/conversations/search?q= → {"days":[{"date","conversations"}]},
// newest first, grouped by day in the owner's zone.
func (a *api) searchConversations(w http.ResponseWriter, r *http.Request) {
	days, err := a.d.Erasure.Search(r.Context(), principal(r.Context()).OwnerID, r.URL.Query().Get("q"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"days": days})
}

// forget: POST /v1/forget {conversations, facts, chunks, documents, from, to, confirm} →
// the counts (done false: what would be forgotten; confirm true: what was).
func (a *api) forget(w http.ResponseWriter, r *http.Request) {
	var body erasure.Forget
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	out, err := a.d.Erasure.Forget(r.Context(), principal(r.Context()).OwnerID, body)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// export streams the owner's data as one zip: GET /v1/export. A failure before the first
// byte is answered as any error; after it, it can only cut the stream short (the zip then
// has no central directory, so no reader takes it as complete), and it is logged.
func (a *api) export(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := "steward-export-" + time.Now().UTC().Format("2006-01-02") + ".zip"
	cw := &countingWriter{w: w, header: func() {
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	}}
	err := a.d.Export.Write(ctx, principal(ctx).OwnerID, cw)
	switch {
	case err == nil:
	case cw.n == 0:
		fail(w, r, err)
	default:
		zerolog.Ctx(ctx).Error().Err(err).Int64("bytes", cw.n).Msg("export cut short")
	}
}

// countingWriter sets the headers before its first write and counts what it wrote.
type countingWriter struct {
	w      http.ResponseWriter
	header func()
	n      int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.n == 0 && c.header != nil {
		c.header()
		c.header = nil
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
