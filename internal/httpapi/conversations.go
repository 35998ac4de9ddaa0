package httpapi

import (
	"net/http"
)

// conversations lists the owner's conversations, most recently active first: GET
// /v1/conversations → {"conversations":[{"id","title","created_at","updated_at"}]}.
func (a *api) conversations(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	convs, err := a.d.Activity.Conversations(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": convs})
}

// conversation reads one conversation with its messages and turns: GET
// /v1/conversations/{id} → activity.Conversation.
func (a *api) conversation(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "conversation")
	if !ok {
		return
	}
	ctx := r.Context()
	out, err := a.d.Activity.Conversation(ctx, principal(ctx).OwnerID, id)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
