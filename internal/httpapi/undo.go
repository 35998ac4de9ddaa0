package httpapi

import (
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/stewardhq/steward/internal/steward"
)

// undoCall reverts a succeeded database-local write once, within the undo window:
// POST /v1/turns/{id}/calls/{call_id}/undo → {"undone": {...}}. An unknown turn or call is
// 404; a call that failed or cannot be undone (its effect left the database) 422; one
// already undone or past its window 409 (internal/undo).
func (a *api) undoCall(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "turn")
	if !ok {
		return
	}
	ctx := r.Context()
	callID, err := url.PathUnescape(chi.URLParam(r, "call_id"))
	if err != nil {
		fail(w, r, steward.Errorf(steward.CodeNotFound, "call not found"))
		return
	}
	out, err := a.d.Undo.Undo(ctx, principal(ctx).OwnerID, id, callID, "api")
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"undone": out})
}
