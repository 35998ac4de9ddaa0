package httpapi

import (
	"net/http"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/memory"
)

// memoryService returns the memory API's service, or answers 404 when memory is off.
func (a *api) memoryService(w http.ResponseWriter, r *http.Request) (*memory.Service, bool) {
	if a.d.Memory == nil {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "memory is not configured on this server"))
		return nil, false
	}
	return a.d.Memory, true
}

// facts lists the owner's remembered facts: GET /v1/memory/facts.
func (a *api) facts(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.memoryService(w, r)
	if !ok {
		return
	}
	facts, err := svc.Facts(r.Context(), principal(r.Context()).OwnerID, 0)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"facts": orEmptySlice(facts)})
}

// addFact is the owner writing a fact directly (not gated: the owner is the human):
// POST /v1/memory/facts {"content","kind"?,"subject"?} → 201 (created) or 200 (already known).
func (a *api) addFact(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.memoryService(w, r)
	if !ok {
		return
	}
	var body memory.NewFact
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	fact, created, err := svc.AddFact(r.Context(), principal(r.Context()).OwnerID, body)
	if err != nil {
		fail(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, fact)
}

// forgetFact supersedes a fact: DELETE /v1/memory/facts/{id} → 204. The row stays for the
// audit trail; it leaves recall.
func (a *api) forgetFact(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.memoryService(w, r)
	if !ok {
		return
	}
	id, ok := pathID(w, r, "fact")
	if !ok {
		return
	}
	if err := svc.ForgetFact(r.Context(), principal(r.Context()).OwnerID, id); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// searchMemory searches remembered text by meaning: GET /v1/memory/search?q=&k=.
func (a *api) searchMemory(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.memoryService(w, r)
	if !ok {
		return
	}
	k, err := memory.ParseK(r.URL.Query().Get("k"))
	if err != nil {
		fail(w, r, err)
		return
	}
	hits, err := svc.Search(r.Context(), principal(r.Context()).OwnerID, r.URL.Query().Get("q"), k)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": orEmptySlice(hits)})
}
