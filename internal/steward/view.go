package steward

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Decision is the owner's answer for one pending call.
type Decision struct {
	CallID  string `json:"call_id"`
	Approve bool   `json:"approve"`
	// ArgsHash must equal the pending call's args_hash: the owner approves what was shown.
	ArgsHash string `json:"args_hash"`
	Message  string `json:"message,omitempty"`
	// Always, with an approval, stores a standing allow rule so the owner is not asked again;
	// its scope says for what (docs/SECURITY.md, "Safety, in code"). Empty stores nothing.
	Always Always `json:"always,omitempty"`
}

// Always is the scope of the standing allow rule an approval stores.
type Always string

// Scopes of "always".
const (
	// AlwaysNone stores no rule.
	AlwaysNone Always = ""
	// AlwaysArgs allows this tool again with exactly the approved arguments (an exact rule
	// whose predicate is the arguments). It is the default of the approval card and the CLI.
	AlwaysArgs Always = "args"
	// AlwaysTool allows this tool with any arguments.
	AlwaysTool Always = "tool"
)

// ParseAlways reads the "always" field of a decision: "tool", "args", or (for clients of
// the first API) true, which means the safe scope "args"; false, null and absent mean none.
// Anything else is a client error.
func ParseAlways(raw json.RawMessage) (Always, *Error) {
	var b bool
	var s string
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return AlwaysNone, nil
	case json.Unmarshal(raw, &b) == nil:
		if b {
			return AlwaysArgs, nil
		}
		return AlwaysNone, nil
	case json.Unmarshal(raw, &s) == nil && (Always(s) == AlwaysArgs || Always(s) == AlwaysTool):
		return Always(s), nil
	}
	return AlwaysNone, Errorf(CodeInvalid, "always must be \"args\" (these exact arguments) or \"tool\" (any arguments of this tool), not %s", raw)
}

// View is what a client sees of a turn (docs/ARCHITECTURE.md §2).
type View struct {
	TurnID         uuid.UUID `json:"turn_id"`
	ConversationID uuid.UUID `json:"conversation_id"`
	Status         Status    `json:"status"`
	Trigger        Trigger   `json:"trigger"`
	Answer         string    `json:"answer,omitempty"`
	Error          string    `json:"error,omitempty"`
	// IterationLimit is true when the turn reached its step limit and answered without
	// further tool use.
	IterationLimit bool          `json:"iteration_limit,omitempty"`
	Pending        []PendingCall `json:"pending,omitempty"`
	Usage          UsageView     `json:"usage"`
	Model          string        `json:"model"`
	CreatedAt      time.Time     `json:"created_at"`
	ExpiresAt      *time.Time    `json:"expires_at,omitempty"`
	// Awaiting says whom a suspended turn still waits for after its owner decided
	// (household approvals).
	Awaiting string `json:"awaiting,omitempty"`
	// CancelRequested says the owner asked the turn to stop: a running turn ends cancelled at
	// its next step boundary.
	CancelRequested bool `json:"cancel_requested,omitempty"`
	// Taint names the untrusted content the turn took in, in words (Turn.Taint); "" when it
	// saw only the owner's words and data (docs/ARCHITECTURE.md §3).
	Taint string `json:"taint,omitempty"`
}

// UsageView is a turn's token usage and estimated cost.
type UsageView struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// IterationLimitNote is the note (in the turn's error field) of a turn that completed at its
// iteration cap with one final tool-free answer.
const IterationLimitNote = "iteration_limit: the turn reached its step limit; the answer was given without further tool use"

// ViewOf renders a stored turn for clients.
func ViewOf(t Turn) View {
	v := View{TurnID: t.ID, ConversationID: t.ConversationID, Status: t.Status, Trigger: t.Trigger,
		Answer: t.Answer, Error: t.Error, Model: t.Model, CreatedAt: t.CreatedAt,
		Usage: UsageView{InputTokens: t.Usage.InputTokens, OutputTokens: t.Usage.OutputTokens,
			CachedTokens: t.Usage.CachedTokens, CostUSD: float64(t.CostMicros) / 1e6}}
	v.IterationLimit = t.Status == StatusCompleted && strings.HasPrefix(t.Error, IterationLimitNote)
	v.CancelRequested = t.CancelRequestedAt != nil
	v.Taint = t.Taint
	if t.Status == StatusSuspended {
		v.ExpiresAt = t.ExpiresAt
		if t.State != nil {
			v.Pending = t.State.Pending
		}
	}
	return v
}
