package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/go-chi/chi/v5"

	"github.com/stewardhq/steward/internal/autonomy"
)

// webhook receives a signed delivery: POST /webhooks/{hook_id}. The Standard Webhooks
// signature is verified over the raw body before anything parses it; the answer is fast —
// 202 {"run_id"} for a new delivery (the run is processed after the response), 200
// {"run_id","replay":true} for a delivery already received, which does nothing.
func (a *api) webhook(w http.ResponseWriter, r *http.Request) {
	if a.d.Webhooks == nil {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "webhooks are not configured on this server"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, autonomy.MaxWebhookBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(w, r, errorf(http.StatusRequestEntityTooLarge, steward.CodeTooLarge, "the body is larger than %d bytes", autonomy.MaxWebhookBody))
			return
		}
		fail(w, r, errorf(http.StatusBadRequest, steward.CodeInvalid, "could not read the body"))
		return
	}
	rc, err := a.d.Webhooks.Receive(r.Context(), chi.URLParam(r, "hook_id"), r.Header, body)
	if err != nil {
		fail(w, r, err)
		return
	}
	if rc.Replay {
		writeJSON(w, http.StatusOK, rc)
		return
	}
	writeJSON(w, http.StatusAccepted, rc)
	if a.d.ProcessWebhook != nil {
		a.d.ProcessWebhook(r.Context(), rc.OwnerID, rc.RunID)
	}
}

// notifications lists the owner's notifications with their delivery state: GET
// /v1/notifications.
func (a *api) notifications(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	notes, err := a.d.Activity.Notifications(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"notifications": notes})
}
