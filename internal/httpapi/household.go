package httpapi

import (
	"net/http"

	"github.com/stewardhq/steward/internal/steward"
)

// householdApprovals lists the requests addressed to the caller by the other members of
// their household: GET /v1/household/approvals → {"approvals": [...]}, each
// the call (tool, readable arguments, amount), the requesting member's name and the status,
// and nothing else of the other owner's data.
func (a *api) householdApprovals(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	out, err := a.d.Household.Inbox(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
}

// decideHouseholdApproval records the caller's vote on a request addressed to them:
// POST /v1/household/approvals/{id} {"approve": bool, "message"?} → {"approval": {...}}. An
// unknown request, or another member's, is 404; one already decided or expired 409. The
// vote that completes the request resumes the requester's turn (internal/household).
func (a *api) decideHouseholdApproval(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "household approval")
	if !ok {
		return
	}
	var body struct {
		Approve *bool  `json:"approve"`
		Message string `json:"message"`
	}
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	if body.Approve == nil {
		fail(w, r, steward.Errorf(steward.CodeInvalid, "approve is required (true or false)"))
		return
	}
	ctx := r.Context()
	out, err := a.d.Household.Decide(ctx, principal(ctx).OwnerID, id, *body.Approve, body.Message)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"approval": out})
}
