// Package llm defines the Model interface every model adapter (Gemini, the scripted test
// double, the offline demo model) implements, with its provider-neutral request and response.
// The messages themselves (steward.Message, Part, ToolCall, ToolResult, Usage) belong to the
// domain: a suspended turn stores them.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

// ToolDecl declares a tool to the model.
type ToolDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema of the arguments object
}

// Request is one model call.
type Request struct {
	System   string
	Messages []steward.Message
	// Tools is nil for a tool-free completion.
	Tools []ToolDecl
	// ForceTool, when set, names a declared tool the model must call (structured output
	// through a forced tool call).
	ForceTool string
	// NoToolCalls keeps Tools declared but forbids calling them: the answer is text. A final
	// tool-free completion sets it rather than dropping Tools, so that its request starts with
	// the same prefix (system prompt, tool declarations) as the calls before it and the model
	// never answers with a call to a tool it can no longer see.
	NoToolCalls     bool
	MaxOutputTokens int
	// Thinking is how much the model may reason before answering; ThinkingDefault leaves it
	// to the model.
	Thinking Thinking
}

// Thinking is a provider-neutral reasoning effort.
type Thinking string

// Reasoning efforts. Background work (fact extraction, summaries) asks for ThinkingLow, so that
// reasoning cannot use up the output token limit before the answer or the forced tool call.
const (
	ThinkingDefault Thinking = ""
	ThinkingLow     Thinking = "low"
)

// Finish is why the model stopped.
type Finish string

// Finish reasons, provider-neutral.
const (
	FinishStop      Finish = "stop"       // a final answer
	FinishToolCalls Finish = "tool_calls" // the message holds tool calls
	FinishMaxTokens Finish = "max_tokens" // output cut at the token limit
	FinishBlocked   Finish = "blocked"    // prompt or answer blocked (safety, policy, recitation)
	FinishRefused   Finish = "refused"    // the model declined to answer
)

// Response is the result of one model call.
type Response struct {
	Message steward.Message
	Usage   steward.Usage
	Finish  Finish
	// FinishDetail is the provider's own reason (e.g. "SAFETY", "MAX_TOKENS"), for the trace.
	FinishDetail string
	Model        string
	// Attempts are the calls that failed before this response when a fallback chain
	// (internal/llm/chain) moved on to another model, in order; nil for a single model. The
	// agent records each in the turn's story and counts its Usage (priced at its own Model)
	// against the budgets.
	Attempts []Attempt
}

// Attempt is one model call of a chain that did not answer: it failed, or was skipped while
// its circuit breaker was open.
type Attempt struct {
	Model string `json:"model"`
	// Error says why the call failed (or "circuit open" for a skipped model).
	Error   string `json:"error"`
	Skipped bool   `json:"skipped,omitempty"`
	// Usage is what the failed call reported having used, if anything (a rate-limited or
	// failing provider usually reports none).
	Usage   steward.Usage `json:"usage"`
	Latency time.Duration `json:"latency"`
}

// Error classes of an Attempt (Attempt.Class).
const (
	ClassCircuitOpen = "circuit_open" // skipped: the model's breaker was open
	ClassRateLimited = "rate_limited" // 429, RESOURCE_EXHAUSTED
	ClassTimeout     = "timeout"      // the attempt's deadline passed
	ClassServer      = "server_error" // 5xx, UNAVAILABLE
	ClassUnreachable = "unreachable"  // anything else a chain moves past (network errors)
)

// Class sorts the attempt's failure for the story and the metrics: one of the Class constants.
func (a Attempt) Class() string {
	e := strings.ToLower(a.Error)
	switch {
	case a.Skipped:
		return ClassCircuitOpen
	case strings.Contains(e, "429") || strings.Contains(e, "resource_exhausted") || strings.Contains(e, "rate limit"):
		return ClassRateLimited
	case strings.Contains(e, "deadline exceeded") || strings.Contains(e, "timeout"):
		return ClassTimeout
	case strings.Contains(e, "unavailable") || strings.Contains(e, "overloaded") ||
		strings.Contains(e, "500") || strings.Contains(e, "502") || strings.Contains(e, "503") || strings.Contains(e, "504"):
		return ClassServer
	}
	return ClassUnreachable
}

// ToolCalls returns the tool calls of the response in the model's order.
func (r Response) ToolCalls() []steward.ToolCall {
	var calls []steward.ToolCall
	for _, p := range r.Message.Parts {
		if p.ToolCall != nil {
			calls = append(calls, *p.ToolCall)
		}
	}
	return calls
}

// Text returns the answer text of the response (steward.Message.Text).
func (r Response) Text() string { return r.Message.Text() }

// DeltaFunc receives streamed answer text as it arrives. Returning an error stops the call.
type DeltaFunc func(text string) error

// Model is a chat model with tool calling.
type Model interface {
	// Name identifies the model, e.g. "gemini-3.8-flash".
	Name() string
	// Generate runs one call. When onDelta is non-nil the call streams and onDelta receives
	// text deltas; the returned Response is complete either way.
	Generate(ctx context.Context, req Request, onDelta DeltaFunc) (Response, error)
}

// errUnavailable marks errors wrapped by Unavailable.
var errUnavailable = errors.New("model unavailable")

// Unavailable marks err as the failure of a call the provider could not serve now — rate
// limited (429), failing or unavailable (5xx), unreachable, or timed out — after the
// adapter's own bounded retries: another model may answer it. A chain moves on only past such
// errors; any other error (a malformed request, a stream that already delivered text) ends
// the call.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	return unavailable{err}
}

// IsUnavailable reports whether err was marked by Unavailable.
func IsUnavailable(err error) bool { return errors.Is(err, errUnavailable) }

// IsUnreachable reports whether err is a failure to reach the provider at all — a refused or
// reset connection, a name that does not resolve, a dial that timed out — and not the caller's
// own cancellation or deadline. Adapters retry it and then mark it Unavailable, like a 503.
func IsUnreachable(err error) bool {
	// The network's own errors only: an *url.Error is a net.Error too, but it also wraps what
	// a transport of Steward's refused (a fixture not recorded), which no retry changes.
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return (errors.As(err, &opErr) || errors.As(err, &dnsErr)) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

type unavailable struct{ err error }

func (u unavailable) Error() string   { return u.err.Error() }
func (u unavailable) Unwrap() []error { return []error{u.err, errUnavailable} }
