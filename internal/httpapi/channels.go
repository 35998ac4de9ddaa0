package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/steward"
)

// channelsOn answers 404 when the server has no channel service.
func (a *api) channelsOn(w http.ResponseWriter, r *http.Request) bool {
	if a.d.Channels == nil {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "notification channels are not configured on this server"))
		return false
	}
	return true
}

// channels lists the owner's notification channels: GET /v1/channels → {"channels": [...]}.
// Secrets are never included (has_secret says one is set).
func (a *api) channels(w http.ResponseWriter, r *http.Request) {
	if !a.channelsOn(w, r) {
		return
	}
	ctx := r.Context()
	list, err := a.d.Channels.List(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"channels": list})
}

// addChannel sets up a channel: POST /v1/channels {"name","kind",…} → 201 with the channel
// (without its secrets); 400 for a bad or refused channel, 409 for a taken name.
func (a *api) addChannel(w http.ResponseWriter, r *http.Request) {
	if !a.channelsOn(w, r) {
		return
	}
	var in channel.Input
	if err := decode(r, &in); err != nil {
		fail(w, r, err)
		return
	}
	ctx := r.Context()
	v, err := a.d.Channels.Add(ctx, principal(ctx).OwnerID, in)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// removeChannel deletes a channel: DELETE /v1/channels/{name} → 204.
func (a *api) removeChannel(w http.ResponseWriter, r *http.Request) {
	if !a.channelsOn(w, r) {
		return
	}
	ctx := r.Context()
	if err := a.d.Channels.Remove(ctx, principal(ctx).OwnerID, chi.URLParam(r, "name")); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// defaultChannel makes a channel the owner's default: POST /v1/channels/{name}/default →
// 200 with the channel; 404 (nothing changed) for an unknown name.
func (a *api) defaultChannel(w http.ResponseWriter, r *http.Request) {
	if !a.channelsOn(w, r) {
		return
	}
	ctx := r.Context()
	v, err := a.d.Channels.MakeDefault(ctx, principal(ctx).OwnerID, chi.URLParam(r, "name"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// testChannel sends a test message now: POST /v1/channels/{name}/test →
// {"channel","delivered","error"?} (a failed send is reported, not an HTTP error).
func (a *api) testChannel(w http.ResponseWriter, r *http.Request) {
	if !a.channelsOn(w, r) {
		return
	}
	ctx := r.Context()
	res, err := a.d.Channels.Test(ctx, principal(ctx).OwnerID, chi.URLParam(r, "name"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// deliveries lists the latest notification delivery attempts (and channel tests), newest
// first: GET /v1/notifications/deliveries → {"deliveries": [event…]}.
func (a *api) deliveries(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	evs, err := a.d.Activity.Deliveries(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": evs})
}
