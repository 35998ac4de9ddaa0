package agent

import (
	"context"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

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

	CreateConversation(ctx context.Context, title string) (steward.Conversation, error)
	GetConversation(ctx context.Context, id uuid.UUID) (steward.Conversation, error)
	TouchConversation(ctx context.Context, id uuid.UUID, title string) error
	AppendMessages(ctx context.Context, conversationID, turnID uuid.UUID, msgs ...steward.Message) error
	// EnqueueIngest queues a completed turn for memory ingestion (the outbox).
	EnqueueIngest(ctx context.Context, turnID, conversationID uuid.UUID) error
	Messages(ctx context.Context, conversationID uuid.UUID) ([]steward.StoredMessage, error)

	CreateTurn(ctx context.Context, conversationID uuid.UUID, trigger steward.Trigger, model string) (steward.Turn, error)
	GetTurn(ctx context.Context, id uuid.UUID) (steward.Turn, error)
	SaveTurn(ctx context.Context, turn steward.Turn) (steward.Turn, error)
	ClaimTurn(ctx context.Context, id uuid.UUID, lease time.Duration) (steward.Turn, error)

	RecordCall(ctx context.Context, c steward.CallRecord) error
	Calls(ctx context.Context, turnID uuid.UUID) ([]steward.CallRecord, error)
	UpdateCall(ctx context.Context, u steward.CallUpdate) error
	MarkUnknownCalls(ctx context.Context, turnID uuid.UUID) ([]steward.CallRecord, error)

	RulesFor(ctx context.Context, tool string) ([]steward.Rule, error)
	CreateRule(ctx context.Context, r steward.Rule) (steward.Rule, error)

	AppendEvents(ctx context.Context, turnID *uuid.UUID, events []steward.NewEvent) error

	Controls(ctx context.Context) (steward.Controls, error)
	AdmitState(ctx context.Context) (steward.Controls, steward.DailyUsage, error)
	LockOwner(ctx context.Context) error
	Cap(ctx context.Context, currency string) (steward.Cap, bool, error)
	SpentInWindow(ctx context.Context, currency string, window time.Duration) (int64, error)
	RecordSpend(ctx context.Context, turnID uuid.UUID, callID, tool string, m steward.Money) error
}
