package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/tools"
)

// Store runs functions in one owner's transaction. internal/store implements it.
type Store interface {
	InOwner(ctx context.Context, ownerID uuid.UUID, fn func(Tx) error) error
}

// Tx is what the loop reads and writes inside one owner's transaction. It includes the
// tools' Data, so a write tool's effect commits with its journal row.
type Tx interface {
	tools.Data

	// Mode is the owner's gate mode: ask, deny or auto.
	Mode(ctx context.Context) (string, error)

	CreateConversation(ctx context.Context, title string) (Conversation, error)
	GetConversation(ctx context.Context, id uuid.UUID) (Conversation, error)
	TouchConversation(ctx context.Context, id uuid.UUID, title string) error
	AppendMessages(ctx context.Context, conversationID, turnID uuid.UUID, msgs ...llm.Message) error
	// EnqueueIngest queues a completed turn for memory ingestion (the outbox).
	EnqueueIngest(ctx context.Context, turnID, conversationID uuid.UUID) error
	Messages(ctx context.Context, conversationID uuid.UUID) ([]StoredMessage, error)

	CreateTurn(ctx context.Context, conversationID uuid.UUID, trigger Trigger, model string) (Turn, error)
	GetTurn(ctx context.Context, id uuid.UUID) (Turn, error)
	SaveTurn(ctx context.Context, turn Turn) (Turn, error)
	ClaimTurn(ctx context.Context, id uuid.UUID, lease time.Duration) (Turn, error)

	RecordCall(ctx context.Context, c CallRecord) error
	Calls(ctx context.Context, turnID uuid.UUID) ([]CallRecord, error)
	UpdateCall(ctx context.Context, u CallUpdate) error
	MarkUnknownCalls(ctx context.Context, turnID uuid.UUID) ([]CallRecord, error)

	RulesFor(ctx context.Context, tool string) ([]Rule, error)
	CreateRule(ctx context.Context, r Rule) (Rule, error)

	AppendEvents(ctx context.Context, turnID *uuid.UUID, events []NewEvent) error

	Controls(ctx context.Context) (Controls, error)
	AdmitState(ctx context.Context) (Controls, DailyUsage, error)
	LockOwner(ctx context.Context) error
	Cap(ctx context.Context, currency string) (Cap, bool, error)
	SpentInWindow(ctx context.Context, currency string, window time.Duration) (int64, error)
	RecordSpend(ctx context.Context, turnID uuid.UUID, callID, tool string, m Money) error
}

// NewEvent is an audit row to append.
type NewEvent struct {
	Seq  int
	Kind string
	Data []byte
}

// CallUpdate moves one journal entry from an expected status to the next.
type CallUpdate struct {
	TurnID    uuid.UUID
	CallID    string
	From, To  CallStatus
	Result    json.RawMessage
	DecidedBy string
	Message   string
}
