package steward

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Status is where a turn is in its life.
type Status string

// Turn statuses. A turn is running until it completes, fails, is aborted, or suspends for a
// human; a suspended turn is claimed (resuming) by exactly one confirm request, or expires.
// The owner may cancel a turn that has not ended: it ends cancelled between steps (running),
// or at once (suspended, continuing), and its pending writes never run.
// A turn about to outlive its function's deadline (on Lambda) stops between steps as
// continuing, and is claimed back to running by exactly one fresh invocation.
const (
	StatusRunning   Status = "running"
	StatusSuspended Status = "suspended"
	StatusResuming  Status = "resuming"
	// StatusContinuing: stopped before its invocation's deadline, waiting for a fresh one.
	StatusContinuing Status = "continuing"
	StatusCompleted  Status = "completed"
	StatusFailed     Status = "failed"
	StatusAborted    Status = "aborted"
	StatusExpired    Status = "expired"
	StatusCancelled  Status = "cancelled"
)

// Ended reports whether a turn in status s is over: nothing will run in it any more.
func (s Status) Ended() bool {
	switch s {
	case StatusCompleted, StatusFailed, StatusAborted, StatusExpired, StatusCancelled:
		return true
	}
	return false
}

// CancelledNote is the error of a turn its owner cancelled.
const CancelledNote = "cancelled by the owner"

// Trigger is what started a turn.
type Trigger string

// Triggers. Turns triggered by outside data (webhooks) never run a write on a standing rule.
const (
	TriggerChat     Trigger = "chat"
	TriggerWebhook  Trigger = "webhook"
	TriggerSchedule Trigger = "schedule"
	TriggerCLI      Trigger = "cli"
	// TriggerMCP: a client of the MCP face proposed a write; like a webhook's, it never runs
	// on a standing rule or in auto mode.
	TriggerMCP Trigger = "mcp"
)

// StateSchemaVersion is the version of State written by this code.
const StateSchemaVersion = 1

// Turn is one run of the loop, from an incoming message to an answer.
type Turn struct {
	ID             uuid.UUID
	OwnerID        uuid.UUID
	ConversationID uuid.UUID
	Trigger        Trigger
	Status         Status
	// Version increases with every status change; saves are guarded by it.
	Version int32
	// LeaseUntil is when a resuming turn's claim lapses (a crashed resume can be recovered).
	LeaseUntil *time.Time
	State      *State // set while suspended or resuming
	Iterations int
	Usage      Usage
	CostMicros int64
	Model      string
	Answer     string
	Error      string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	ExpiresAt  *time.Time
	// CancelRequestedAt is when the owner asked the turn to stop (nil: never); a running turn
	// ends cancelled at its next step boundary.
	CancelRequestedAt *time.Time
	// Taint is what tainted the turn (State.Taint), recorded with its saves: memory remembers
	// a tainted turn as untrusted, and the turn's story says why it was (§3 of
	// docs/ARCHITECTURE.md).
	Taint string
}

// State is everything a suspended turn needs to continue in another process.
type State struct {
	SchemaVersion int `json:"schema_version"`
	// Messages are the turn's messages so far, exactly as the provider returned them, starting
	// with the user message that began the turn.
	Messages []Message `json:"messages"`
	// Pending are the write calls of the suspended batch, waiting for decisions.
	Pending []PendingCall `json:"pending"`
	// Calls is the whole suspended batch in the model's call order.
	Calls []ToolCall `json:"calls"`
	// Results already produced for calls of the batch (reads, and writes decided by a rule).
	Results    []ToolResult `json:"results"`
	Usage      Usage        `json:"usage"`
	CostMicros int64        `json:"cost_micros"`
	Iterations int          `json:"iterations"`
	TraceSeq   int          `json:"trace_seq"`
	// HistorySeq is the last conversation message (seq) the turn was given as history.
	HistorySeq int `json:"history_seq"`
	// Memory is the recalled memory block shown with the turn's user message; it is part of
	// the request, never of the stored conversation.
	Memory string `json:"memory,omitempty"`
	// Untrusted says Memory holds text that came from outside (a webhook's payload, …): the
	// turn's writes are gated like a webhook turn's (GateRequest.Untrusted).
	Untrusted bool `json:"untrusted,omitempty"`
	// Proposed says the pending calls came from a client (the MCP face), not from a model:
	// once decided, the turn completes with their outcome and no model is called.
	Proposed bool `json:"proposed,omitempty"`
	// Taint names the first untrusted content the turn took in ("tool:web_fetch",
	// "trigger:webhook", "memory", …); "" while the turn has seen only the owner's words and
	// data. From then on every call that can carry data out (GateRequest.Egress) waits for
	// the owner, whatever a rule or the mode says (docs/ARCHITECTURE.md §3).
	Taint string `json:"taint,omitempty"`
}

// ReasonTainted is PendingCall.Reason for a call held because its turn is tainted.
const ReasonTainted = "tainted"

// ReasonUntrusted is PendingCall.Reason for a call asked in a turn that recalled outside text
// from memory: the owner's standing allow rules and auto mode did not apply to it.
const ReasonUntrusted = "untrusted"

// ReasonHousehold is GateDecision.Reason for a call asked because a household policy makes
// other members approve it: no standing rule or auto mode runs it (docs/ARCHITECTURE.md §2).
const ReasonHousehold = "household"

// PendingCall is a write call waiting for the owner's decision.
type PendingCall struct {
	CallID   string          `json:"call_id"`
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args"`
	ArgsHash string          `json:"args_hash"`
	// AlwaysOffered is false for tools whose calls no standing rule may allow (money and
	// egress): the card hides "always" and says why.
	AlwaysOffered bool `json:"always_offered"`
	// Reversible says whether the call, once run, can be undone within the undo window
	// (a database-local write); false for calls with effects outside the database.
	Reversible bool `json:"reversible"`
	// Reason says why the call waits when it is more than an ordinary ask: "tainted" (a call
	// that can carry data out, in a turn that took in untrusted content from Taint) or
	// "untrusted" (a turn that recalled outside text: no standing allow rule applied).
	Reason string `json:"reason,omitempty"`
	// Taint is the source that tainted the turn, in words, with either Reason.
	Taint string `json:"taint,omitempty"`
	// Preview is what the tool's Preview said the call will do, one fact a line (a skill's
	// name, files and scan for install_skill); shown on the card as plain text.
	Preview string `json:"preview,omitempty"`
	// Estimate is what the call will move as its tool estimated it before asking (an
	// order's notional at the quote, §20): a household policy's minimum is compared with it.
	Estimate *Money `json:"estimate,omitempty"`
}

// CallStatus is the journal status of one tool call.
type CallStatus string

// Journal statuses: pending → approved|denied; approved → executing → succeeded|failed; an
// executing call found after a crash becomes unknown and is never re-run.
const (
	CallPending   CallStatus = "pending"
	CallApproved  CallStatus = "approved"
	CallDenied    CallStatus = "denied"
	CallExecuting CallStatus = "executing"
	CallSucceeded CallStatus = "succeeded"
	CallFailed    CallStatus = "failed"
	CallUnknown   CallStatus = "unknown"
)

// CallRecord is one entry of the tool-call journal.
type CallRecord struct {
	TurnID    uuid.UUID
	CallID    string
	Tool      string
	Kind      ToolKind
	Args      json.RawMessage
	ArgsHash  string
	Status    CallStatus
	DecidedBy string
	Message   string
	Result    json.RawMessage
	CreatedAt time.Time
	// Inverse reverts a succeeded database-local write (nil: it cannot be undone);
	// ExecutedAt is when it ran, UndoneAt and UndoneBy when and by whom it was undone.
	Inverse    *Inverse
	ExecutedAt *time.Time
	UndoneAt   *time.Time
	UndoneBy   string
}

// Rule is a standing decision for a write tool: allow or deny, when the call's arguments
// match Predicate as Match says.
type Rule struct {
	ID        uuid.UUID       `json:"id"`
	Tool      string          `json:"tool"` // a tool name or "*"
	Predicate json.RawMessage `json:"predicate"`
	Match     string          `json:"match"`  // MatchExact | MatchPattern
	Effect    string          `json:"effect"` // allow | deny
	Source    string          `json:"source"` // approval | api | setup
	Note      string          `json:"note,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
}

// How a rule's predicate matches a call's arguments.
const (
	// MatchExact: the arguments are exactly the predicate, compared as the canonical JSON the
	// args hash uses; an extra, missing or different argument does not match.
	MatchExact = "exact"
	// MatchPattern: every argument the predicate names has that value, other arguments
	// anything; an empty predicate matches every call of the tool.
	MatchPattern = "pattern"
)

// Event is one immutable row of the audit log.
type Event struct {
	ID        int64           `json:"id"`
	TurnID    *uuid.UUID      `json:"turn_id,omitempty"`
	Seq       int             `json:"seq"`
	Kind      string          `json:"kind"`
	Data      json.RawMessage `json:"data"`
	CreatedAt time.Time       `json:"created_at"`
}

// Conversation is a thread of turns.
type Conversation struct {
	ID        uuid.UUID `json:"id"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Summary is the pinned summary of the conversation's oldest turns (the context budget,
	// internal/agent/context.go); nil: none. Not part of the API.
	Summary *Summary `json:"-"`
}

// Summary is a conversation's pinned summary: its turn groups up to message ThroughSeq,
// summarised once by the background model and sent (as data) instead of them.
type Summary struct {
	Text       string `json:"text"`
	ThroughSeq int    `json:"through_seq"`
	// Groups is how many turn groups it covers.
	Groups int `json:"groups"`
	// Untrusted says the summarised turns held outside content (tool output, webhook data).
	Untrusted bool `json:"untrusted,omitempty"`
}

// StoredMessage is one persisted message of a conversation.
type StoredMessage struct {
	Seq       int       `json:"seq"`
	TurnID    uuid.UUID `json:"turn_id"`
	Message   Message   `json:"message"`
	CreatedAt time.Time `json:"created_at"`
}
