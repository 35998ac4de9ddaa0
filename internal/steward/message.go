package steward

import "encoding/json"

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
	// Instructions marks a playbook Steward vouches for (a built-in skill or the owner's
	// own, §3): it reaches the model as instructions, not inside a data block.
	Instructions bool `json:"instructions,omitempty"`
}

// Usage counts tokens of one or more model calls.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CachedTokens int64 `json:"cached_tokens"`
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

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.InputTokens + o.InputTokens, u.OutputTokens + o.OutputTokens, u.CachedTokens + o.CachedTokens}
}

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
