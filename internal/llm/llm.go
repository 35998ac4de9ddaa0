// Package llm defines provider-neutral chat messages and the Model interface every model
// adapter (Gemini, the scripted test double, the offline demo model) implements.
//
// Messages are persisted as JSON (jsonb) while a turn is suspended, so every field here is
// part of the stored turn state: provider metadata is kept as opaque bytes (base64 in JSON)
// so that a jsonb round trip cannot normalise it.
package llm

import (
	"context"
	"encoding/json"
)

// Role is who authored a message.
type Role string

// Roles. Tool results travel in a RoleUser message, as Gemini expects.
const (
	RoleUser  Role = "user"
	RoleModel Role = "model"
)

// Message is one entry of a conversation as sent to or returned by a model.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is one piece of a message: text, a tool call or a tool result.
type Part struct {
	Text string `json:"text,omitempty"`
	// Thought marks model reasoning text that is not part of the answer.
	Thought bool `json:"thought,omitempty"`
	// Context marks text Steward adds to a message for the model's context — the recalled
	// memory block on the turn's user message — that its author did not write. Providers
	// send it as text like any other; Message.Text leaves it out, so nothing that interprets
	// what the owner said can read context as the owner's words.
	Context    bool        `json:"context,omitempty"`
	ToolCall   *ToolCall   `json:"tool_call,omitempty"`
	ToolResult *ToolResult `json:"tool_result,omitempty"`
	// ProviderMeta is opaque per-part metadata owned by the adapter that produced the part
	// (for Gemini: the thought signature). It is sent back byte-for-byte.
	ProviderMeta []byte `json:"provider_meta,omitempty"`
}

// ToolCall is the model asking to run a tool.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	// MintedID is true when the provider gave no id and the adapter minted one; a minted id
	// is never sent back to the provider.
	MintedID bool `json:"minted_id,omitempty"`
}

// ToolResult is the outcome of one tool call, sent back to the model.
type ToolResult struct {
	CallID   string `json:"call_id"`
	Name     string `json:"name"`
	MintedID bool   `json:"minted_id,omitempty"`
	// Output is a JSON value (usually an object) the model reads.
	Output  json.RawMessage `json:"output"`
	IsError bool            `json:"is_error,omitempty"`
}

// ToolDecl declares a tool to the model.
type ToolDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema of the arguments object
}

// Request is one model call.
type Request struct {
	System   string
	Messages []Message
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

// Usage counts tokens of one or more model calls.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CachedTokens int64 `json:"cached_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.InputTokens + o.InputTokens, u.OutputTokens + o.OutputTokens, u.CachedTokens + o.CachedTokens}
}

// Response is the result of one model call.
type Response struct {
	Message Message
	Usage   Usage
	Finish  Finish
	// FinishDetail is the provider's own reason (e.g. "SAFETY", "MAX_TOKENS"), for the trace.
	FinishDetail string
	Model        string
}

// ToolCalls returns the tool calls of the response in the model's order.
func (r Response) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, p := range r.Message.Parts {
		if p.ToolCall != nil {
			calls = append(calls, *p.ToolCall)
		}
	}
	return calls
}

// Text returns the answer text of the response (Message.Text).
func (r Response) Text() string { return r.Message.Text() }

// Text returns what the message's author wrote: its text parts concatenated, without model
// thoughts and without context parts. It is the one accessor for "what the owner said" (the
// demo model's parsing, memory ingestion, the conversation view); only provider adapters,
// which must send every part, read context parts.
func (m Message) Text() string {
	var s string
	for _, p := range m.Parts {
		if !p.Thought && !p.Context {
			s += p.Text
		}
	}
	return s
}

// WithoutProviderMeta returns a copy of msgs with no part's ProviderMeta: what a different
// model than the one that produced the parts is sent.
func WithoutProviderMeta(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = Message{Role: m.Role, Parts: make([]Part, len(m.Parts))}
		for j, p := range m.Parts {
			p.ProviderMeta = nil
			out[i].Parts[j] = p
		}
	}
	return out
}

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
