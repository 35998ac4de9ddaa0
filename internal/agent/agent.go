// Package agent is Steward's turn: the loop that calls the model, runs read tools, sends
// every write through the gate, suspends the turn to Postgres when a write needs a human,
// and resumes it — in another request, another process — once the owner decided (DESIGN §2).
//
// The package holds no SQL, no HTTP and no SDK: it depends on llm.Model, tools.Registry, the
// Store interface and the Gate interface; adapters implement them and internal/app wires
// them together.
package agent

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/tools"
)

// Runner runs and resumes turns. Build one per process; it is safe for concurrent use.
type Runner struct {
	Model llm.Model
	Tools *tools.Registry
	Store Store
	Gate  Gate
	// Memory recalls what Steward knows before a turn's first model call and ingests
	// finished turns off the hot path; nil means no memory.
	Memory Memory
	// Control admits turns (kill switch, budgets) and stops them mid-way; nil admits all.
	Control Control
	// MaxIterations caps model calls with tools per turn; then one tool-free call answers.
	MaxIterations int
	// SuspendTTL is how long a suspended turn waits for decisions.
	SuspendTTL time.Duration
	// Lease is how long a resuming turn is held before another request may recover it.
	Lease time.Duration
	// HistoryMessages caps the prior conversation messages sent to the model.
	HistoryMessages int
	// Price estimates the cost of a model call in millionths of a US dollar; nil means 0.
	Price func(model string, u llm.Usage) int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// afterExecuting, when set (tests only), runs after an external call was journaled
	// executing and before it runs; an error simulates a crash at that point.
	afterExecuting func(callID string) error
}

// Memory is recall for the loop. internal/memory implements it.
type Memory interface {
	// Recall returns a memory block for an incoming message — already delimited as data —
	// or "" when nothing is relevant. It runs outside any transaction (it may call an
	// embedding API); a failure never fails the turn.
	Recall(ctx context.Context, ownerID uuid.UUID, message string) (string, error)
}

// Input starts a turn.
type Input struct {
	OwnerID uuid.UUID
	// ConversationID continues a conversation; nil starts a new one.
	ConversationID *uuid.UUID
	Message        string
	Trigger        Trigger
}

// MaxMessageRunes caps an incoming message.
const MaxMessageRunes = 32000

// Decision is the owner's answer for one pending call.
type Decision struct {
	CallID  string `json:"call_id"`
	Approve bool   `json:"approve"`
	// ArgsHash must equal the pending call's args_hash: the owner approves what was shown.
	ArgsHash string `json:"args_hash"`
	Message  string `json:"message,omitempty"`
	// Always stores a standing allow rule for the tool, so the owner is not asked again.
	Always bool `json:"always,omitempty"`
}

// View is what a client sees of a turn (the TurnView of DESIGN §5).
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
	if t.Status == StatusSuspended {
		v.ExpiresAt = t.ExpiresAt
		if t.State != nil {
			v.Pending = t.State.Pending
		}
	}
	return v
}

// StreamEvent is one event of a running turn, for streaming clients.
type StreamEvent struct {
	// Type is text | tool_call | tool_result | suspended | completed | error.
	Type   string          `json:"type"`
	Text   string          `json:"text,omitempty"`
	Call   *llm.ToolCall   `json:"call,omitempty"`
	Result *llm.ToolResult `json:"result,omitempty"`
	Turn   *View           `json:"turn,omitempty"`
}

// Emit receives stream events; it may be nil.
type Emit func(StreamEvent)

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Turn reads one turn of the owner.
func (r *Runner) Turn(ctx context.Context, ownerID, turnID uuid.UUID) (View, error) {
	var v View
	err := r.Store.InOwner(ctx, ownerID, func(tx Tx) error {
		t, err := tx.GetTurn(ctx, turnID)
		v = ViewOf(t)
		return err
	})
	return v, err
}
