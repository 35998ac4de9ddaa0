// Package openaiapi is Steward's OpenAI-compatible face (docs/API.md, "OpenAI-compatible API"):
// POST /v1/chat/completions (plain and streamed) and GET /v1/models, so any client of
// OpenAI's Chat Completions API can talk to Steward. internal/httpapi mounts it behind its
// bearer-key auth; this package turns requests into turns through Service.
//
// A client that resends the whole history continues the same conversation (Service finds
// it by its transcript) or pins one with X-Steward-Conversation-Id. A suspended turn
// answers with a listing of its pending writes, and the owner's reply "approve", "approve 2",
// "deny 1 <reason>" or "deny all" confirms that turn.
//
// Errors use OpenAI's shape, {"error":{"message","type","code","param"}}: a body that is not
// a well-formed request or has unacceptable values is 400, a body over the limit 413, a wrong
// key 401, an unknown model or conversation 404, a stale approval 409.
package openaiapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/trace"
)

// ModelID is the one model this API serves.
const ModelID = "steward"

// ConversationHeader pins a request to a conversation, and names the conversation in every
// answer.
const ConversationHeader = "X-Steward-Conversation-Id"

// DefaultMaxBodyBytes is API.MaxBodyBytes when zero.
const DefaultMaxBodyBytes = 1 << 20

// writeTimeout bounds each write of a stream: a client that stops reading loses its stream,
// never the turn.
const writeTimeout = 10 * time.Second

// API serves the OpenAI-compatible routes.
type API struct {
	Service *Service
	// Owner is the owner the request was authenticated as (set by the mounting router's auth).
	Owner func(ctx context.Context) uuid.UUID
	// MaxBodyBytes caps a request body (413 above it); zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Admit, when set, takes one of the owner's turn slots before a turn runs, or fails (a
	// steward.Error, e.g. rate_limited → 429); release gives the slot back.
	Admit func(ctx context.Context, owner uuid.UUID) (release func(), err error)
}

// Models answers GET /v1/models: the one model, steward.
func (a *API) Models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
		map[string]any{"id": ModelID, "object": "model", "created": 0, "owned_by": "steward"},
	}})
}

// chatRequest is the part of a Chat Completions request Steward reads; other fields
// (temperature, tools, …) are accepted and ignored.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// ChatCompletions answers POST /v1/chat/completions.
func (a *API) ChatCompletions(w http.ResponseWriter, r *http.Request) {
	chat, stream, err := a.parse(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	chat.OwnerID = a.Owner(r.Context())
	if a.Admit != nil {
		release, err := a.Admit(r.Context(), chat.OwnerID)
		if err != nil {
			fail(w, r, err)
			return
		}
		defer release()
	}
	// The turn outlives a client that goes away, and the server's write timeout; it keeps the
	// request's deadline (on Lambda the invocation's), so that a long turn stops in time as
	// continuing and goes on in the worker (docs/ARCHITECTURE.md §2).
	ctx := context.WithoutCancel(r.Context())
	if d, ok := r.Context().Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // not supported by every writer: fine
	if !stream {
		v, err := a.Service.Run(ctx, chat, nil)
		if err != nil {
			fail(w, r, err)
			return
		}
		w.Header().Set(ConversationHeader, v.ConversationID.String())
		writeJSON(w, http.StatusOK, completion(v))
		return
	}
	s := &sse{w: w, rc: rc, id: "chatcmpl-" + uuid.NewString(), created: time.Now().Unix()}
	v, err := a.Service.Run(ctx, chat, s.emit)
	if err != nil && !s.begun() {
		fail(w, r, err)
		return
	}
	s.finish(r, v, err)
}

// parse reads and checks a request. Every problem is a steward.Error (invalid → 400) or an
// apiError with its own status.
func (a *API) parse(r *http.Request) (Chat, bool, error) {
	max := a.MaxBodyBytes
	if max <= 0 {
		max = DefaultMaxBodyBytes
	}
	if r.ContentLength > max {
		return Chat{}, false, tooLarge(max)
	}
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, max))
	if err != nil {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			return Chat{}, false, tooLarge(max)
		}
		return Chat{}, false, invalid("", "could not read the request body")
	}
	var req chatRequest
	if b = bytes.TrimSpace(b); len(b) == 0 || b[0] != '{' {
		return Chat{}, false, invalid("", "the request body must be a JSON object")
	}
	if err := json.Unmarshal(b, &req); err != nil {
		return Chat{}, false, invalid("", "malformed JSON body: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	if req.Model != "" && req.Model != ModelID {
		return Chat{}, false, &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found", param: "model",
			message: fmt.Sprintf("the model %q does not exist; this API serves %q", req.Model, ModelID)}
	}
	if len(req.Messages) == 0 {
		return Chat{}, false, invalid("messages", "messages must hold at least one message")
	}
	c := Chat{}
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "developer":
			continue // Steward has its own prompt
		case "user", "assistant":
		default:
			return Chat{}, false, invalid(fmt.Sprintf("messages[%d].role", i),
				fmt.Sprintf("messages[%d]: role %q is not supported; use system, developer, user or assistant", i, m.Role))
		}
		text, err := content(m.Content)
		if err != nil {
			return Chat{}, false, invalid(fmt.Sprintf("messages[%d].content", i), fmt.Sprintf("messages[%d]: %s", i, err))
		}
		c.Messages = append(c.Messages, Message{Role: m.Role, Text: text})
	}
	if len(c.Messages) == 0 || c.Messages[len(c.Messages)-1].Role != "user" {
		return Chat{}, false, invalid("messages", "the last message must be the user's")
	}
	if h := r.Header.Get(ConversationHeader); h != "" {
		id, err := uuid.Parse(h)
		if err != nil {
			return Chat{}, false, invalid("", ConversationHeader+" is not a UUID")
		}
		c.Pin = &id
	}
	return c, req.Stream, nil
}

// content reads a message's content: a string, null, or an array of text parts.
func content(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("content must be a string or an array of text parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return "", fmt.Errorf("content part of type %q is not supported; only text is", p.Type)
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}

// ext is the steward extension object of every answer.
type ext struct {
	TurnID         uuid.UUID      `json:"turn_id"`
	ConversationID uuid.UUID      `json:"conversation_id"`
	Status         steward.Status `json:"status"`
	Pending        []pendingView  `json:"pending"`
}

// pendingView is one listed pending call: its number in the listing and what to decide on.
type pendingView struct {
	Number   int             `json:"number"`
	CallID   string          `json:"call_id"`
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args"`
	ArgsHash string          `json:"args_hash"`
}

func extOf(v steward.View) ext {
	e := ext{TurnID: v.TurnID, ConversationID: v.ConversationID, Status: v.Status, Pending: []pendingView{}}
	for i, p := range v.Pending {
		e.Pending = append(e.Pending, pendingView{Number: i + 1, CallID: p.CallID, Tool: p.Tool, Args: p.Args, ArgsHash: p.ArgsHash})
	}
	return e
}

// answer is the assistant text of a finished, suspended or continuing turn (one that stopped
// before the invocation's deadline: a normal answer with finish_reason stop saying it goes on,
// with the turn's id; the steward object's status is continuing).
func answer(v steward.View) string {
	switch v.Status {
	case steward.StatusSuspended:
		return Listing(v.TurnID, v.Pending)
	case steward.StatusCompleted:
		return v.Answer
	case steward.StatusCancelled:
		return fmt.Sprintf("The turn %s was cancelled: nothing more runs in it, and its pending writes, if any, never will.", v.TurnID)
	case steward.StatusContinuing:
		return fmt.Sprintf("Steward is still working on this: the turn %s continues in the background. "+
			"Its answer will be at GET /v1/turns/%s (and in the web app) when it is done.", v.TurnID, v.TurnID)
	}
	return "Steward could not finish this turn: " + v.Error
}

// completion is a turn as a chat.completion object.
func completion(v steward.View) map[string]any {
	return map[string]any{
		"id": "chatcmpl-" + v.TurnID.String(), "object": "chat.completion", "created": v.CreatedAt.Unix(), "model": ModelID,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": answer(v), "refusal": nil}}},
		"usage": map[string]any{"prompt_tokens": v.Usage.InputTokens, "completion_tokens": v.Usage.OutputTokens,
			"total_tokens": v.Usage.InputTokens + v.Usage.OutputTokens},
		"steward": extOf(v),
	}
}

// sse writes a turn as Chat Completions chunks: "data: <chunk>\n\n" per text delta, a last
// chunk with finish_reason and the steward object, then "data: [DONE]". The response starts
// at the first event, so a request refused before the turn began gets a JSON error.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	id      string
	created int64

	mu      sync.Mutex
	started bool
	gone    bool
	text    bool // some text was sent
}

func (s *sse) begun() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// emit receives the runner's events; only text deltas become chunks before the end (the
// runner never emits inside a transaction: agent.Runner).
func (s *sse) emit(e agent.StreamEvent) {
	if e.Type == "text" && e.Text != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.text = true
		s.chunk(map[string]any{"content": e.Text}, nil, nil)
	}
}

// chunk writes one chunk; the first one carries the role. Callers hold mu.
func (s *sse) chunk(delta map[string]any, finish *string, x *ext) {
	if !s.started {
		s.started = true
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		s.w.WriteHeader(http.StatusOK)
		delta["role"] = "assistant"
	}
	c := map[string]any{"id": s.id, "object": "chat.completion.chunk", "created": s.created, "model": ModelID,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	if x != nil {
		c["steward"] = x
	}
	b, _ := json.Marshal(c) // maps of plain values always encode
	s.write("data: " + string(b) + "\n\n")
}

// write sends one event with a deadline; a client that fails it loses the stream.
func (s *sse) write(event string) {
	if s.gone {
		return
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := io.WriteString(s.w, event); err != nil {
		s.gone = true
		return
	}
	if err := s.rc.Flush(); err != nil {
		s.gone = true
	}
}

// finish ends the stream: the rest of the answer (a listing, an error), the last chunk, and
// [DONE]; or, when the request failed after the stream began, an error event.
func (s *sse) finish(r *http.Request, v steward.View, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		_, body := classify(r, err)
		b, _ := json.Marshal(body)
		s.write("data: " + string(b) + "\n\n")
		return
	}
	if v.Status != steward.StatusCompleted || !s.text {
		text := answer(v)
		if s.text {
			text = "\n\n" + text
		}
		s.chunk(map[string]any{"content": text}, nil, nil)
	}
	stop := "stop"
	x := extOf(v)
	s.chunk(map[string]any{}, &stop, &x)
	s.write("data: [DONE]\n\n")
}

// apiError is an error response in OpenAI's shape with its own status.
type apiError struct {
	status  int
	typ     string
	code    string
	param   string
	message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

func invalid(param, message string) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: string(steward.CodeInvalid), param: param, message: message}
}

func tooLarge(max int64) *apiError {
	return &apiError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error", code: string(steward.CodeTooLarge),
		message: "request body is larger than " + strconv.FormatInt(max, 10) + " bytes"}
}

// overrides are this face's exceptions to the one table (steward.HTTPStatus,
// docs/ARCHITECTURE.md §4): OpenAI answers a request with unacceptable values 400, not 422.
var overrides = map[steward.Code]int{steward.CodeInvalid: http.StatusBadRequest}

// statusOf is err's status at this face: the one table's, or this face's override.
func statusOf(err error) int {
	if s, ok := overrides[steward.ErrorCode(err)]; ok {
		return s
	}
	return steward.HTTPStatusOf(err)
}

// typeOf is OpenAI's error type for a status.
func typeOf(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Code    string  `json:"code"`
	Param   *string `json:"param"`
}

// classify turns an error into its status and body; internal errors are logged and shown
// with no detail.
func classify(r *http.Request, err error) (int, errorBody) {
	var ae *apiError
	if errors.As(err, &ae) {
		d := errorDetail{Message: ae.message, Type: ae.typ, Code: ae.code}
		if ae.param != "" {
			d.Param = &ae.param
		}
		return ae.status, errorBody{Error: d}
	}
	var se *steward.Error
	if status := statusOf(err); status != http.StatusInternalServerError && errors.As(err, &se) {
		return status, errorBody{Error: errorDetail{Message: se.Message, Type: typeOf(status), Code: string(se.Code)}}
	}
	zerolog.Ctx(r.Context()).Error().Str("error", trace.Redact(err.Error())).Msg("chat completion failed")
	return http.StatusInternalServerError, errorBody{Error: errorDetail{Type: "server_error", Code: string(steward.CodeInternal),
		Message: "internal error; the request id identifies it in the server log"}}
}

// fail writes err as an error response, with Retry-After when err says when to try again.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	status, body := classify(r, err)
	if s := steward.RetrySeconds(err); s > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(s))
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v) // the bodies here are plain values
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n')) //nolint:errcheck // the client went away; nothing to do
}
