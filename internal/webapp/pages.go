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

	"github.com/stewardhq/steward/internal/activity"
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
	a.write(w, r, "approvals", http.StatusOK, approvalsBody(out, a.now.Now(), a.words()))
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
	// The pending calls' arguments, for the summaries of their results in the stream's chips.
	var known []activity.ToolCall
	if v, err := a.d.Runner.Turn(r.Context(), owner, id); err == nil {
		for _, p := range v.Pending {
			known = append(known, activity.ToolCall{CallID: p.CallID, Tool: p.Tool, Args: p.Args})
		}
	}
	a.stream(w, r, func(ctx context.Context, emit agent.Emit) (steward.View, error) {
		return a.d.Runner.Confirm(ctx, owner, id, ds, emit)
	}, known...)
}

// stream runs a turn and sends its events as server-sent events ("data: <StreamEvent>"); the
// last is suspended, completed or error. The turn runs on a context a disconnect does not
// cancel: a closed tab loses the stream, never the turn.
// known are calls made before the stream (a confirm's pending calls), whose results it may send.
func (a *web) stream(w http.ResponseWriter, r *http.Request, run func(context.Context, agent.Emit) (steward.View, error), known ...activity.ToolCall) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	gone := false
	owner := current(r).OwnerID
	calls := map[string]activity.ToolCall{}
	for _, c := range known {
		calls[c.CallID] = c
	}
	send := func(e agent.StreamEvent) {
		if gone {
			return
		}
		if e.Call != nil {
			calls[e.Call.ID] = activity.CallOf(*e.Call)
		}
		out := a.eventOf(r.Context(), owner, e, calls, false)
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
		msg, ok := steward.Words(err)
		if !ok {
			msg = "something went wrong"
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
	out := a.eventOf(r.Context(), owner, agent.StreamEvent{Type: eventType(v.Status), Turn: &v}, nil, true)
	if out.Settled = settled(v, nil, a.now.Now()); out.Settled != nil {
		// How a person decided: the journal's and the events' words (decided elsewhere, too).
		ds, err := a.d.Activity.Decided(r.Context(), owner, id)
		if err != nil {
			a.d.Logger.Error().Err(err).Msg("turn status: decisions")
		}
		out.Settled = settled(v, ds, a.now.Now())
	}
	b, _ := json.Marshal(out)
	_, _ = w.Write(append(b, '\n'))
}

// event is a stream event as app.js reads it: the runner's event with the markup the server
// renders for it — a tool call's or result's chip (chip), a suspended turn's approval card
// (card) over the pending calls as stored, so the card shows exactly what an approval runs
// (json.Marshal would re-format them), a completed turn's answer rendered from Markdown
// (internal/markdown) in place of the streamed plain text — and, once a card can no longer
// be decided here, how each of its calls came out (Settled, by call id; "*" for the rest).
// The server renders it so that one renderer, in Go, decides what HTML a page ever gets:
// every value escaped (page.text), Markdown sanitized; the script only inserts it.
type event struct {
	agent.StreamEvent
	ChipHTML   string             `json:"chip_html,omitempty"`
	CardHTML   string             `json:"card_html,omitempty"`
	AnswerHTML string             `json:"answer_html,omitempty"`
	Settled    map[string]verdict `json:"settled,omitempty"`
}

// eventOf is the event app.js gets for e; calls are the calls seen so far by id (a result's
// chip words it with its call's arguments); stored says e.Turn was read from the store.
func (a *web) eventOf(ctx context.Context, owner uuid.UUID, e agent.StreamEvent, calls map[string]activity.ToolCall, stored bool) event {
	out := event{StreamEvent: e}
	reg := a.words()
	var p page
	switch {
	case e.Type == "tool_call" && e.Call != nil:
		chip(&p, reg, activity.CallOf(*e.Call), activity.ToolResult{}, false)
		out.ChipHTML = p.String()
	case e.Type == "tool_result" && e.Result != nil:
		c, ok := calls[e.Result.CallID]
		if !ok {
			c = activity.ToolCall{CallID: e.Result.CallID, Tool: e.Result.Name}
		}
		chip(&p, reg, c, activity.ResultOf(*e.Result), true)
		out.ChipHTML = p.String()
	case e.Type == "suspended" && e.Turn != nil && e.Turn.Awaiting != "":
		out.Settled = settled(*e.Turn, nil, a.now.Now())
	case e.Type == "suspended" && e.Turn != nil:
		v := *e.Turn
		if !stored {
			var err error
			if v, err = a.d.Runner.Turn(ctx, owner, e.Turn.TurnID); err != nil {
				a.d.Logger.Error().Err(err).Msg("read suspended turn")
				return out
			}
		}
		card(&p, reg, v.TurnID, v.Pending)
		out.CardHTML = p.String()
	case e.Type == "completed" && e.Turn != nil && e.Turn.Answer != "":
		out.AnswerHTML = markdown.HTML(e.Turn.Answer)
	}
	return out
}
