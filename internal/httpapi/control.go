package httpapi

import (
	"net/http"

	"github.com/stewardhq/steward/internal/rules"
)

// control shows the owner's kill switch, the deployment's, the gate mode and the budget:
// GET /v1/control → control.View.
func (a *api) control(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v, err := a.d.Control.View(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// stop engages the owner's kill switch: POST /v1/control/stop {"reason"}. In-flight turns
// stop at their next step; new turns are refused with 423 until resume.
func (a *api) stop(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Reason string `json:"reason"`
	}
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	ctx := r.Context()
	v, err := a.d.Control.Stop(ctx, principal(ctx).OwnerID, body.Reason)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// resume releases the owner's kill switch: POST /v1/control/resume.
func (a *api) resume(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v, err := a.d.Control.Resume(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// setMode sets the owner's gate mode: POST /v1/control/mode {"mode"}: ask (the default: a
// human decides writes no rule covers), deny (read-only safe mode: every write refused), or
// auto (writes run without asking; development only, refused unless the server allows it).
func (a *api) setMode(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Mode string `json:"mode"`
	}
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	ctx := r.Context()
	v, err := a.d.Control.SetMode(ctx, principal(ctx).OwnerID, body.Mode)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// createRule stores a standing rule: POST /v1/rules {"tool","effect","predicate"?,"match"?,"note"?}.
func (a *api) createRule(w http.ResponseWriter, r *http.Request) {
	var body rules.NewRule
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	ctx := r.Context()
	rule, err := a.d.Rules.Create(ctx, principal(ctx).OwnerID, body)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, rule)
}

// rules lists the owner's standing rules: GET /v1/rules.
func (a *api) rules(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	list, err := a.d.Rules.List(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"rules": orEmptySlice(list)})
}

// deleteRule removes a standing rule: DELETE /v1/rules/{id} → 204.
func (a *api) deleteRule(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "rule")
	if !ok {
		return
	}
	ctx := r.Context()
	if err := a.d.Rules.Delete(ctx, principal(ctx).OwnerID, id); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// events returns one turn's trace, in order: GET /v1/turns/{id}/events.
func (a *api) events(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "turn")
	if !ok {
		return
	}
	ctx := r.Context()
	events, err := a.d.Activity.TurnEvents(ctx, principal(ctx).OwnerID, id)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"turn_id": id, "events": events})
}

// activity is the owner's feed of turns, newest first, with lifecycle and trigger: GET
// /v1/activity.
func (a *api) activity(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	views, err := a.d.Activity.Feed(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"activity": views})
}

// orEmptySlice makes a nil slice encode as [].
func orEmptySlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
