package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
)

// Server-sent events of a running turn (POST /v1/chat and POST /v1/turns/{id}/confirm with
// Accept: text/event-stream). Each event is "event: <type>\ndata: <one line of JSON>\n\n",
// flushed as it happens:
//
//	started     the TurnView of a new turn (status running), before its first model call:
//	            its turn_id is what POST /v1/turns/{id}/cancel stops
//	text        {"text": "<delta>"}
//	tool_call   {"call_id", "tool", "args"}
//	tool_result {"call_id", "tool", "output", "is_error"?}
//	suspended   the TurnView (status suspended, with its pending calls)
//	completed   the TurnView (status completed, with the answer)
//	error       the TurnView when the turn ended failed, aborted or cancelled (its "status"
//	            says which, its "error" why), or
//	            {"error":{"code","message"}} when the request failed after the stream began
//
// The last event is always suspended, completed or error. A request refused before the turn
// produced anything (a bad message, an unknown turn, a conflict) gets an ordinary JSON error
// response with its status instead of a stream.

// wantsStream reports whether the client accepts text/event-stream.
func wantsStream(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
			return true
		}
	}
	return false
}

// DefaultStreamWriteTimeout is Deps.StreamWriteTimeout when zero.
const DefaultStreamWriteTimeout = 10 * time.Second

// stream writes a turn's events to one response. It starts the response (200, event-stream
// headers) lazily, at the first event, so a request refused before any event still gets a
// JSON error with its status. Each event must be taken by the client within the write
// timeout; once the client is gone or too slow, events are dropped and the turn goes on (the
// client can GET the turn). The runner never emits inside a transaction (agent.Runner), so a
// client that stops reading holds this goroutine for at most the timeout, never a database
// connection.
type stream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	log     *zerolog.Logger
	timeout time.Duration

	mu       sync.Mutex
	started  bool
	gone     bool
	finished bool // a terminal event (suspended, continuing, completed, error) was sent
}

func newStream(w http.ResponseWriter, r *http.Request, timeout time.Duration) *stream {
	return &stream{w: w, rc: http.NewResponseController(w), log: zerolog.Ctx(r.Context()), timeout: timeout}
}

// emit is the agent.Emit of the turn.
func (s *stream) emit(e agent.StreamEvent) {
	var data any
	switch e.Type {
	case "text":
		data = map[string]string{"text": e.Text}
	case "tool_call":
		if e.Call == nil {
			return
		}
		data = activity.CallOf(*e.Call)
	case "tool_result":
		if e.Result == nil {
			return
		}
		data = activity.ResultOf(*e.Result)
	case "started":
		if e.Turn == nil {
			return
		}
		data = e.Turn
	case "suspended", "continuing", "completed", "error":
		if e.Turn == nil {
			data = errorBody{Error: errorDetail{Code: steward.CodeInternal, Message: internalMessage}}
		} else {
			data = e.Turn
		}
	default:
		return
	}
	s.send(e.Type, data)
}

// finish ends the stream after the runner returned: with its error, or with the final
// TurnView if the runner sent no terminal event.
func (s *stream) finish(v steward.View, err error) {
	s.mu.Lock()
	finished := s.finished
	s.mu.Unlock()
	switch {
	case err != nil:
		_, detail := classify(err)
		s.send("error", errorBody{Error: detail})
	case !finished:
		typ := "error"
		switch v.Status {
		case steward.StatusCompleted:
			typ = "completed"
		case steward.StatusSuspended:
			typ = "suspended"
		case steward.StatusContinuing:
			typ = "continuing"
		}
		s.send(typ, v)
	}
}

// send writes and flushes one event.
func (s *stream) send(typ string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		s.log.Error().Err(err).Str("event", typ).Msg("encode stream event")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if typ == "suspended" || typ == "continuing" || typ == "completed" || typ == "error" {
		s.finished = true
	}
	if s.gone {
		return
	}
	// Each write gets its own deadline, which also replaces the server's WriteTimeout for
	// this long-lived response. A writer without deadlines (lambdaurl's) is bounded by its
	// platform instead.
	if err := s.rc.SetWriteDeadline(time.Now().Add(s.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.gone = true
		s.log.Info().Err(err).Msg("stream write deadline failed; the turn continues")
		return
	}
	if !s.started {
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	}
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", typ, b); err != nil {
		s.gone = true
		s.log.Info().Err(err).Msg("stream client gone; the turn continues")
		return
	}
	// A writer that cannot flush (lambdaurl's) streams as it writes: nothing to do.
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.gone = true
		s.log.Info().Err(err).Msg("stream flush failed; the turn continues")
	}
}

// hasStarted reports whether the response has begun.
func (s *stream) hasStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}
