package webapp

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
)

// cancelTurn asks a turn to stop: POST /turns/{id}/cancel, with the session's CSRF token
// (agent.Runner.Cancel: a suspended turn is cancelled at once and its writes never run; a
// running one ends cancelled at its next step boundary). A client that accepts JSON (the
// chat page's Stop, X-CSRF-Token) gets the TurnView, or {"error": words} with 404 (unknown,
// another owner's) or 409 (already ended); a form gets a redirect to the turn's story (no
// re-post on reload), or the words with that status.
func (a *web) cancelTurn(w http.ResponseWriter, r *http.Request) {
	owner := current(r).OwnerID
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	var v steward.View
	if err == nil {
		v, err = a.d.Runner.Cancel(r.Context(), owner, id)
	} else {
		err = steward.Errorf(steward.CodeNotFound, "turn not found")
	}
	asJSON := strings.Contains(r.Header.Get("Accept"), "application/json")
	if err == nil {
		if !asJSON {
			http.Redirect(w, r, "/turns/"+id.String(), http.StatusSeeOther)
			return
		}
		writeJSON(w, http.StatusOK, v)
		return
	}
	status, msg, ok := refused(err)
	if !ok {
		a.fail(w, r, err)
		return
	}
	if asJSON {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	http.Error(w, msg, status)
}

// refused is the status (steward.HTTPStatusOf, the one table of docs/ARCHITECTURE.md §4) and
// the words of err when it is a refusal the owner reads beside what they were doing (a client
// mistake, a lost race); ok is false for a server's fault (5xx: internal, an unreachable
// database), which a.fail answers with its own page and Retry-After.
func refused(err error) (status int, msg string, ok bool) {
	status = steward.HTTPStatusOf(err)
	msg, ok = invalid(err)
	return status, msg, ok && status < http.StatusInternalServerError
}

// writeJSON answers v as JSON with status, never cached.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
