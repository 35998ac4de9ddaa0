package webapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/markdown"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

func (a *web) approvalsPage(w http.ResponseWriter, r *http.Request) {
	out, err := a.d.Activity.Approvals(r.Context(), current(r).OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "approvals", http.StatusOK, approvalsBody(out, a.now()))
}

// maxMessage bounds a chat message sent from the page.
const maxMessage = 32 << 10

// chat starts a turn and streams it: POST /chat (form or fetch body, field message).
func (a *web) chat(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxMessage)
	in := agent.Input{OwnerID: current(r).OwnerID, Message: r.PostFormValue("message"), Trigger: steward.TriggerChat}
	if c := r.PostFormValue("conversation_id"); c != "" {
		id, err := uuid.Parse(c)
		if err != nil {
			http.Error(w, "conversation_id is not a UUID", http.StatusUnprocessableEntity)
			return
		}
		in.ConversationID = &id
	}
	a.stream(w, r, func(ctx context.Context, emit agent.Emit) (steward.View, error) {
		return a.d.Runner.Start(ctx, in, emit)
	})
}

// decision is one card's answer, as app.js sends it.
type decision struct {
	CallID   string          `json:"call_id"`
	Approve  bool            `json:"approve"`
	ArgsHash string          `json:"args_hash"`
	Message  string          `json:"message"`
	Always   json.RawMessage `json:"always"`
}

// confirm decides a suspended turn's calls (every card of it, one submit) and streams the
// resumed turn: POST /turns/{id}/confirm with {"decisions":[...]}.
func (a *web) confirm(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		http.Error(w, "turn not found", http.StatusNotFound)
		return
	}
	var body struct {
		Decisions []decision `json:"decisions"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil || len(body.Decisions) == 0 {
		http.Error(w, "send {\"decisions\": [...]}", http.StatusBadRequest)
		return
	}
	ds := make([]steward.Decision, len(body.Decisions))
	for i, d := range body.Decisions {
		always, perr := steward.ParseAlways(d.Always)
		if perr != nil || d.CallID == "" || d.ArgsHash == "" {
			http.Error(w, "each decision needs call_id, args_hash and a valid always", http.StatusUnprocessableEntity)
			return
		}
		ds[i] = steward.Decision{CallID: d.CallID, Approve: d.Approve, ArgsHash: d.ArgsHash, Message: d.Message, Always: always}
	}
	owner := current(r).OwnerID
	a.stream(w, r, func(ctx context.Context, emit agent.Emit) (steward.View, error) {
		return a.d.Runner.Confirm(ctx, owner, id, ds, emit)
	})
}

// stream runs a turn and sends its events as server-sent events ("data: <StreamEvent>"); the
// last is suspended, completed or error. The turn runs on a context a disconnect does not
// cancel: a closed tab loses the stream, never the turn.
func (a *web) stream(w http.ResponseWriter, r *http.Request, run func(context.Context, agent.Emit) (steward.View, error)) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	gone := false
	owner := current(r).OwnerID
	send := func(e agent.StreamEvent) {
		if gone {
			return
		}
		out := a.eventOf(r.Context(), owner, e)
		b, _ := json.Marshal(out)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			gone = true
			return
		}
		_ = rc.Flush()
	}
	// The turn keeps the request's deadline (on Lambda the invocation's): a long turn stops
	// in time as continuing, goes on in the worker, and the page polls its status.
	ctx := context.WithoutCancel(r.Context())
	if d, ok := r.Context().Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	final := false
	v, err := run(ctx, func(e agent.StreamEvent) {
		final = final || e.Type == "completed" || e.Type == "suspended" || e.Type == "continuing" || e.Type == "error"
		send(e)
	})
	switch {
	case err != nil:
		msg := "something went wrong"
		var se *steward.Error
		if errors.As(err, &se) && se.Code != steward.CodeInternal {
			msg = se.Message
		} else {
			a.d.Logger.Error().Err(err).Msg("web turn")
		}
		send(agent.StreamEvent{Type: "error", Text: msg})
	case !final:
		send(agent.StreamEvent{Type: eventType(v.Status), Turn: &v})
	}
}

// eventType is the final stream event of a turn in status s.
func eventType(s steward.Status) string {
	switch s {
	case steward.StatusCompleted:
		return "completed"
	case steward.StatusSuspended:
		return "suspended"
	case steward.StatusContinuing, steward.StatusRunning, steward.StatusResuming:
		return "continuing"
	}
	return "error"
}

// turnStatus answers GET /turns/{id}/status, which the chat page polls while a turn is
// continuing: the turn as a stream event ("continuing" while it still runs, then its final
// event), as app.js renders it.
func (a *web) turnStatus(w http.ResponseWriter, r *http.Request) {
	owner := current(r).OwnerID
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	var v steward.View
	if err == nil {
		v, err = a.d.Runner.Turn(r.Context(), owner, id)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		status := http.StatusInternalServerError
		if id == uuid.Nil || errors.Is(err, store.ErrNotFound) || steward.ErrorCode(err) == steward.CodeNotFound || steward.ErrorCode(err) == steward.CodeInvalid {
			status = http.StatusNotFound
		} else {
			a.d.Logger.Error().Err(err).Msg("turn status")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"type":"error","text":"turn not found"}` + "\n"))
		return
	}
	b, _ := json.Marshal(a.eventOf(r.Context(), owner, agent.StreamEvent{Type: eventType(v.Status), Turn: &v}))
	_, _ = w.Write(append(b, '\n'))
}

// event is a stream event as app.js reads it: the runner's event; for a suspended turn each
// pending call's arguments as the text stored with the turn (json.Marshal would re-format
// them), so the card shows exactly what an approval runs; for a completed turn its answer
// rendered as Markdown by the server (internal/markdown), which the page puts in place of the
// streamed plain text. The server renders it so that one sanitizer, in Go, decides what
// HTML a page ever gets: the script only inserts what the server rendered.
type event struct {
	agent.StreamEvent
	RawArgs    map[string]string `json:"raw_args,omitempty"`
	AnswerHTML string            `json:"answer_html,omitempty"`
}

// eventOf is the event app.js gets for e.
func (a *web) eventOf(ctx context.Context, owner uuid.UUID, e agent.StreamEvent) event {
	out := event{StreamEvent: e}
	switch {
	case e.Type == "suspended" && e.Turn != nil:
		out.RawArgs = a.rawArgs(ctx, owner, e.Turn)
	case e.Type == "completed" && e.Turn != nil && e.Turn.Answer != "":
		out.AnswerHTML = markdown.HTML(e.Turn.Answer)
	}
	return out
}

// rawArgs reads a suspended turn back and returns its pending calls' stored arguments, their
// invisible characters shown (steward.Visible).
func (a *web) rawArgs(ctx context.Context, owner uuid.UUID, v *steward.View) map[string]string {
	stored, err := a.d.Runner.Turn(ctx, owner, v.TurnID)
	if err != nil {
		a.d.Logger.Error().Err(err).Msg("read suspended turn")
		return nil
	}
	out := map[string]string{}
	for _, p := range stored.Pending {
		out[p.CallID] = steward.Visible(string(p.Args))
	}
	return out
}
