package agent

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Store runs functions in one owner's transaction. internal/store implements it.
type Store interface {
	InOwner(ctx context.Context, ownerID uuid.UUID, fn func(Tx) error) error
}

// Tx is one owner's transaction as the loop sees it: one narrow port per area, all over the
// same transaction, so a write tool's effect commits with its journal row
// (docs/ARCHITECTURE.md §6).
type Tx struct {
	Turns         Turns
	Journal       Journal
	Conversations Conversations
	Safety        Safety
	Rules         Rules
	Data          tools.Data
	Ledger        tools.Ledger
	// Links are the one-tap approval links; only Runner.Suspended and
	// ConfirmWith's hook use them.
	Links Links
	// Household is the owner's side of household approvals; only the hooks
	// (Runner.Suspended, Runner.Hold) use it.
	Household Household
	// Memory and MCP are the reads of a turn's start (and a confirm's claim, for MCP) that
	// memory recall and the owner's MCP tools need (Runner.Memory, Runner.OwnerTools), in
	// the turn's own transaction (docs/ARCHITECTURE.md §2).
	Memory MemoryReads
	MCP    MCPReads
	// Work enqueues an item on the work spine (internal/work) in this transaction: a turn
	// saved continuing is one (Hooks.ContinueKind).
	Work Work
	// Try runs fn under a savepoint: when fn fails, its statements are rolled back and the
	// transaction goes on (an optional read never fails a turn's start). Not nested.
	Try func(ctx context.Context, fn func() error) error
	// Together runs fns as if one after the other (in order; the first error is returned)
	// while their statements share round trips: the first statement of each fn goes to the
	// database in one batch, then the second, and so on. fns must not depend on each
	// other's results and must do nothing but compute and run statements (they may run
	// more than once); on an error the caller fails the transaction.
	Together func(ctx context.Context, fns ...func() error) error
}

// MemoryReads are the reads of a memory recall. *store.Memory implements it.
type MemoryReads interface {
	// NearestChunks returns the k current chunks nearest to query by cosine distance.
	NearestChunks(ctx context.Context, query []float32, k int, kinds ...string) ([]steward.MemoryChunk, error)
	// MatchFacts lists current facts sharing whole words with words.
	MatchFacts(ctx context.Context, words []string, limit int) ([]steward.MemoryFact, error)
}

// MCPReads read the owner's MCP servers and approved tools. *store.MCPServers implements it.
type MCPReads interface {
	Tools(ctx context.Context) ([]steward.MCPTool, error)
	List(ctx context.Context) ([]steward.MCPServer, error)
}

// Work enqueues an item on the work spine in the caller's transaction. *store.Work
// implements it.
type Work interface {
	Enqueue(ctx context.Context, kind, key string, runAfter time.Time) error
}

// Household files a suspended turn's calls for the household's approval and reads and
// records the votes on the owner's own turn. *store.Household implements it.
type Household interface {
	// Governs reports whether a policy of the household makes another member approve a call
	// of tool moving m (nil: unknown); the gate then asks (docs/ARCHITECTURE.md §2).
	Governs(ctx context.Context, tool string, m *steward.Money) (bool, error)
	// File files the calls for the approval of the members the household's policies name.
	File(ctx context.Context, turnID uuid.UUID, calls []steward.HouseholdCall, expires time.Time) error
	Votes(ctx context.Context, turnID uuid.UUID) ([]steward.HouseholdVote, error)
	DecideOwn(ctx context.Context, turnID uuid.UUID, callID string, approve bool, message string, now time.Time) error
	Close(ctx context.Context, turnID uuid.UUID) error
}

// Links stores one-tap approval links and tells whether the owner can be notified.
type Links interface {
	// Notifiable is true when the owner has a default notification channel.
	Notifiable(ctx context.Context) (bool, error)
	Create(ctx context.Context, l steward.NewLink) error
	Get(ctx context.Context, hash []byte) (steward.Link, error)
	// Use marks a link used at now: once, and only before it expires; else ErrNotFound.
	Use(ctx context.Context, hash []byte, now time.Time) error
}

// Turns stores a turn's row: its status and suspended state.
type Turns interface {
	// Create starts a running turn leased until now+lease (its process renews the lease while
	// the turn waits on its model; the sweep fails a running turn whose lease lapsed).
	Create(ctx context.Context, conversationID uuid.UUID, trigger steward.Trigger, model string, now time.Time, lease time.Duration) (steward.Turn, error)
	Get(ctx context.Context, id uuid.UUID) (steward.Turn, error)
	Save(ctx context.Context, turn steward.Turn) (steward.Turn, error)
	// Finish is Save deferred: it travels with the transaction's next statement or its
	// COMMIT, whose failure then carries its error (ErrConflict for a lost version).
	Finish(ctx context.Context, turn steward.Turn) (steward.Turn, error)
	// Claim takes a suspended turn for one resume (exactly once), leased until now+lease;
	// now (Runner.Now) decides expiry and lapsed leases.
	Claim(ctx context.Context, id uuid.UUID, now time.Time, lease time.Duration) (steward.Turn, error)
	// ClaimContinuing takes a continuing turn back to running for one invocation (exactly
	// once), leased until now+lease.
	ClaimContinuing(ctx context.Context, id uuid.UUID, now time.Time, lease time.Duration) (steward.Turn, error)
	// Cancel records the owner's request that a turn stop, at now: a turn no process runs
	// (suspended, continuing) is cancelled at once, a running one carries the request; an
	// ended turn, or none, is not found.
	Cancel(ctx context.Context, id uuid.UUID, now time.Time) (steward.Turn, error)
	// CancelRequested reports whether the owner asked the turn to stop.
	CancelRequested(ctx context.Context, id uuid.UUID) (bool, error)
	// RenewLease extends a running or resuming turn's lease to now+lease (never shortening it)
	// and reports, as CancelRequested, whether the owner asked it to stop.
	RenewLease(ctx context.Context, id uuid.UUID, now time.Time, lease time.Duration) (bool, error)
}

// Journal records every tool call's decision and outcome, and the turn's audit events.
type Journal interface {
	RecordCall(ctx context.Context, c steward.CallRecord) error
	Calls(ctx context.Context, turnID uuid.UUID) ([]steward.CallRecord, error)
	UpdateCall(ctx context.Context, u steward.CallUpdate) error
	MarkUnknownCalls(ctx context.Context, turnID uuid.UUID) ([]steward.CallRecord, error)
	AppendEvents(ctx context.Context, turnID *uuid.UUID, events []steward.NewEvent) error
}

// Conversations stores conversations and their messages.
type Conversations interface {
	Create(ctx context.Context, title string) (steward.Conversation, error)
	Get(ctx context.Context, id uuid.UUID) (steward.Conversation, error)
	Touch(ctx context.Context, id uuid.UUID, title string) error
	AppendMessages(ctx context.Context, conversationID, turnID uuid.UUID, msgs ...steward.Message) error
	Messages(ctx context.Context, conversationID uuid.UUID) ([]steward.StoredMessage, error)
	// PinSummary pins the summary of the conversation's oldest turns (context.go).
	PinSummary(ctx context.Context, id uuid.UUID, s steward.Summary) error
	// EnqueueIngest queues a completed turn for memory ingestion (the outbox).
	EnqueueIngest(ctx context.Context, turnID, conversationID uuid.UUID) error
}

// Safety is the owner's safety state the gate and admission read and charge.
type Safety interface {
	// Mode is the owner's gate mode: ask, deny or auto.
	Mode(ctx context.Context) (string, error)
	Controls(ctx context.Context) (steward.Controls, error)
	AdmitState(ctx context.Context) (steward.Controls, steward.DailyUsage, error)
	LockOwner(ctx context.Context) error
	Cap(ctx context.Context, currency string) (steward.Cap, bool, error)
	SpentInWindow(ctx context.Context, currency string, window time.Duration) (int64, error)
	RecordSpend(ctx context.Context, turnID uuid.UUID, callID, tool string, m steward.Money) error
}

// Rules are the owner's standing allow/deny rules.
type Rules interface {
	For(ctx context.Context, tool string) ([]steward.Rule, error)
	Create(ctx context.Context, r steward.Rule) (steward.Rule, error)
}
