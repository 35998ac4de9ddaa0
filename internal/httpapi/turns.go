package httpapi

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
)

// chatRequest is the body of POST /v1/chat.
type chatRequest struct {
	Message string `json:"message"`
	// ConversationID continues a conversation; absent, null or "" starts a new one.
	ConversationID *string `json:"conversation_id"`
	// AudioDocumentID names a document holding a recording: its transcript is the message
	// (docs/ARCHITECTURE.md §18). Speak asks for the answer read aloud too, in Voice and
	// Format ("wav", "ogg").
	AudioDocumentID string `json:"audio_document_id"`
	Speak           bool   `json:"speak"`
	Voice           string `json:"voice"`
	Format          string `json:"format"`
}

// chat starts a turn: POST /v1/chat → TurnView, or events with Accept: text/event-stream.
// The body is JSON, or multipart/form-data carrying a recording (the field "audio") whose
// transcript is the message; with a recording or speak the answer is a voiceView.
func (a *api) chat(w http.ResponseWriter, r *http.Request) {
	var (
		body chatRequest
		v    voiceChat
		err  error
	)
	switch mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt {
	case "application/json":
		if err = decode(r, &body); err == nil {
			v, err = body.voice()
		}
	case "multipart/form-data":
		body, v, err = a.chatForm(r)
	default:
		err = errorf(http.StatusUnsupportedMediaType, steward.CodeInvalid, "Content-Type must be application/json, or multipart/form-data with a recording")
	}
	defer v.done()
	if err == nil {
		err = a.checkVoice(r, body.Message, v)
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	in := agent.Input{OwnerID: principal(r.Context()).OwnerID, Message: body.Message, Trigger: steward.TriggerChat}
	if body.ConversationID != nil && *body.ConversationID != "" {
		id, err := uuid.Parse(*body.ConversationID)
		if err != nil {
			fail(w, r, steward.Errorf(steward.CodeInvalid, "conversation_id is not a UUID"))
			return
		}
		in.ConversationID = &id
	}
	if v.audio != nil || v.document != nil || v.speak {
		a.voiceTurn(w, r, in, v)
		return
	}
	a.runTurn(w, r, func(ctx context.Context, emit agent.Emit) (steward.View, error) {
		return a.d.Runner.Start(ctx, in, emit)
	})
}

// decisionRequest is one decision of a confirm body. Approve is a pointer so that a missing
// "approve" is refused rather than read as a denial.
type decisionRequest struct {
	CallID   string `json:"call_id"`
	Approve  *bool  `json:"approve"`
	ArgsHash string `json:"args_hash"`
	Message  string `json:"message"`
	// Always is "args", "tool", or true (meaning "args"); see steward.ParseAlways.
	Always json.RawMessage `json:"always"`
}

// confirmRequest is the body of POST /v1/turns/{id}/confirm.
type confirmRequest struct {
	Decisions []decisionRequest `json:"decisions"`
}

// confirm applies the owner's decisions to a suspended turn and resumes it: POST
// /v1/turns/{id}/confirm → TurnView of the resumed turn, or events.
func (a *api) confirm(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "turn")
	if !ok {
		return
	}
	var body confirmRequest
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	decisions := make([]steward.Decision, len(body.Decisions))
	for i, d := range body.Decisions {
		switch {
		case d.CallID == "":
			fail(w, r, steward.Errorf(steward.CodeInvalid, "decision %d has no call_id", i))
			return
		case d.Approve == nil:
			fail(w, r, steward.Errorf(steward.CodeInvalid, "decision for call %q needs \"approve\": true or false", d.CallID))
			return
		case d.ArgsHash == "":
			fail(w, r, steward.Errorf(steward.CodeInvalid, "decision for call %q needs the args_hash it was shown", d.CallID))
			return
		}
		always, err := steward.ParseAlways(d.Always)
		if err != nil {
			fail(w, r, steward.Errorf(steward.CodeInvalid, "decision for call %q: %s", d.CallID, err.Message))
			return
		}
		decisions[i] = steward.Decision{CallID: d.CallID, Approve: *d.Approve, ArgsHash: d.ArgsHash, Message: d.Message, Always: always}
	}
	owner := principal(r.Context()).OwnerID
	a.runTurn(w, r, func(ctx context.Context, emit agent.Emit) (steward.View, error) {
		return a.d.Runner.Confirm(ctx, owner, id, decisions, emit)
	})
}

// runTurn runs a turn (start or resume) and answers with its TurnView, or streams it when the
// client asked for events. The turn runs on a context that a client disconnect does not
// cancel (it keeps the request's values, so its logger), so it always ends in a written
// state: completed, failed, suspended or continuing (it keeps the request's deadline, which
// only a Lambda invocation has). An owner runs at most Deps.MaxTurnsPerOwner turns
// at once (a request waits briefly for a slot, then 429 rate_limited). A turn outlasts the server's WriteTimeout, so its
// response has its own write deadline (Deps.StreamWriteTimeout, per write when streaming).
func (a *api) runTurn(w http.ResponseWriter, r *http.Request, run func(context.Context, agent.Emit) (steward.View, error)) {
	a.runTurnThen(w, r, run, nil)
}

// runTurnThen is runTurn whose JSON answer is then(view) when then is set (a voice chat's,
// with the transcript and the answer spoken); a stream ends as runTurn's does.
func (a *api) runTurnThen(w http.ResponseWriter, r *http.Request, run func(context.Context, agent.Emit) (steward.View, error), then func(context.Context, steward.View) any) {
	release, err := a.admit(r.Context(), principal(r.Context()).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	defer release()
	ctx := context.WithoutCancel(r.Context())
	if d, ok := r.Context().Deadline(); ok {
		// On Lambda the request's context carries the invocation's deadline: the turn keeps
		// it, so that it stops in time and continues in the worker (docs/ARCHITECTURE.md §2).
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	rc := http.NewResponseController(w)
	if !wantsStream(r) {
		_ = rc.SetWriteDeadline(time.Time{}) // not supported by every writer (lambdaurl): fine
		v, err := run(ctx, nil)
		_ = rc.SetWriteDeadline(time.Now().Add(a.d.StreamWriteTimeout))
		if err != nil {
			fail(w, r, err)
			return
		}
		if then != nil {
			writeJSON(w, http.StatusOK, then(ctx, v))
			return
		}
		writeJSON(w, http.StatusOK, v)
		return
	}
	s := newStream(w, r, a.d.StreamWriteTimeout)
	v, err := run(ctx, s.emit)
	if err != nil && !s.hasStarted() {
		fail(w, r, err)
		return
	}
	if err != nil {
		_, detail := classify(err)
		if detail.Code == steward.CodeInternal {
			s.log.Error().Err(err).Msg("turn failed after its stream began")
		}
	}
	s.finish(v, err)
}

// turn reads one turn: GET /v1/turns/{id} → TurnView.
func (a *api) turn(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "turn")
	if !ok {
		return
	}
	v, err := a.d.Runner.Turn(r.Context(), principal(r.Context()).OwnerID, id)
	if err != nil {
		if steward.ErrorCode(err) == steward.CodeNotFound {
			err = steward.Errorf(steward.CodeNotFound, "turn not found")
		}
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// cancel asks a turn to stop: POST /v1/turns/{id}/cancel → TurnView. A suspended or
// continuing turn is cancelled at once (status cancelled: its pending writes never run); a
// running one answers with cancel_requested and ends cancelled at its next step boundary
// (poll GET /v1/turns/{id}); an already cancelled turn is answered as it is; any other ended
// turn is 409 conflict; another owner's or an unknown turn is 404.
func (a *api) cancel(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "turn")
	if !ok {
		return
	}
	v, err := a.d.Runner.Cancel(r.Context(), principal(r.Context()).OwnerID, id)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// approvals lists the owner's suspended turns that can still be confirmed: GET
// /v1/approvals → {"approvals":[...]}, newest first.
func (a *api) approvals(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	out, err := a.d.Activity.Approvals(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
}

// approvalsCount counts the writes waiting for the owner (the web app's badge): GET
// /v1/approvals/count → {"writes","turns"}, one indexed read.
func (a *api) approvalsCount(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	c, err := a.d.Activity.Pending(ctx, principal(ctx).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// pathID parses the {id} of the route. An id that is not a UUID names nothing: 404, the same
// answer as for an unknown id or another owner's.
func pathID(w http.ResponseWriter, r *http.Request, what string) (uuid.UUID, bool) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		fail(w, r, steward.Errorf(steward.CodeNotFound, "%s not found", what))
		return uuid.Nil, false
	}
	return id, true
}
