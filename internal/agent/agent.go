// Package agent is Steward's turn: the loop that calls the model, runs read tools, sends
// every write through the gate, suspends the turn to Postgres when a write needs a human,
// and resumes it — in another request, another process — once the owner decided (docs/ARCHITECTURE.md §2).
//
// The package holds no SQL, no HTTP and no SDK: it depends on llm.Model, tools.Registry, the
// Store interface and the Gate interface; adapters implement them and internal/app wires
// them together.
package agent

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/tools"
)

// Runner runs and resumes turns. Build one per process with New; it is safe for concurrent
// use. Its settings (Config) are read, never assigned, once it is built, and the services it
// calls back into (Hooks) are given only to New (docs/ARCHITECTURE.md §7).
type Runner struct {
	Config
	hooks Hooks
	// stopping is closed by Stop: the process is shutting down.
	stopping chan struct{}
	stopOnce sync.Once

	// afterExecuting, when set (tests only), runs after an external call was journaled
	// executing and before it runs; an error simulates a crash at that point.
	afterExecuting func(callID string) error
}

// Config is a Runner's settings and ports.
type Config struct {
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
	// ContextTokens is the context budget: a request's estimated input tokens (context.go);
	// 0 means DefaultContextTokens.
	ContextTokens int
	// Rates estimate tokens; zero means DefaultRates.
	Rates TokenRates
	// Summarizer is the background model that summarises the turns evicted by the context
	// budget; nil drops them instead.
	Summarizer llm.Model
	// Price estimates the cost of a model call in millionths of a US dollar; nil means 0.
	Price func(model string, u steward.Usage) int64
	// Now is the clock (nil: the system clock).
	Now steward.Clock
	// ContinueMargin is the time before ctx's deadline under which a turn stops between
	// steps and continues elsewhere (continue.go); zero means 30s.
	ContinueMargin time.Duration
	// ModelTimeout bounds one model call of a turn, every attempt and fallback included
	// (STEWARD_MODEL_TIMEOUT); zero means DefaultModelTimeout.
	ModelTimeout time.Duration
}

// DefaultModelTimeout bounds a model call when Config.ModelTimeout is zero.
const DefaultModelTimeout = 2 * time.Minute

// Hooks are the services a Runner calls back into — the runtime's cycles (the household and
// the approval links are called by the runner and call its ConfirmWith; an autonomous run
// starts turns and hears how a continued one ended). They are given once, to New; a nil hook
// does nothing (docs/ARCHITECTURE.md §7).
type Hooks struct {
	// OwnerTools returns an owner's own tools — their MCP servers' — added to Tools for one
	// turn. It reads them in the transaction that starts the turn, or claims it for a resume
	// or a continuation, under a savepoint (Tx.Try); it must not leave the database. An error
	// leaves the turn with Tools alone.
	OwnerTools func(ctx context.Context, tx Tx) ([]tools.Tool, error)
	// Suspended run in order in the transaction that saves a suspended turn (the household's
	// filing, the notification with one-tap links); an error rolls the save back. notify is
	// true when the hook stored a notification for the owner.
	Suspended []func(ctx context.Context, tx Tx, turn steward.Turn) (notify bool, err error)
	// AfterSuspend runs once a suspended turn's save committed, outside any transaction, when
	// a Suspended hook stored a notification in that transaction: it goes out at once rather
	// than at the scheduler's next tick (internal/app). A suspension that stored none costs no
	// transaction more.
	AfterSuspend func(ctx context.Context, ownerID, turnID uuid.UUID)
	// Continue hands a turn saved as continuing to a fresh invocation (work.Spine.Hand: the
	// run queue on Lambda), which calls ContinueTurn; nil means turns never stop before a
	// deadline. The save enqueued the turn on the work spine (ContinueKind) either way, so
	// a hand-off that fails is the spine's drain's to take.
	Continue func(ctx context.Context, ownerID, turnID uuid.UUID) error
	// Ended are the listeners of a continued turn (ContinueTurn) that ended in this
	// invocation — completed, suspended, aborted or failed, not continuing again — called in
	// order outside any transaction with the turn's view: each face that started turns
	// subscribes its own (internal/autonomy finishes the job run whose turn it is,
	// internal/telegram sends the answer to its chat).
	Ended []func(ctx context.Context, ownerID uuid.UUID, v steward.View)
	// Hold runs in a confirm's transaction before the claim (household approvals,
	// internal/household). held commits what Hold wrote and keeps the turn suspended (the
	// confirm returns its view, awaiting the members); otherwise story, when not nil, is
	// recorded as a household_approval event of the resumed turn. Its error refuses the
	// confirm and changes nothing. Nil holds nothing, and no view reads votes.
	Hold func(ctx context.Context, tx Tx, turn steward.Turn, decisions map[string]steward.Decision) (held bool, story *steward.HouseholdStory, err error)
}

// Confirmer is the runner's confirm as the services that resume a turn for its owner see it
// (a household member's vote, an approval link): the port they hold instead of the Runner.
type Confirmer interface {
	ConfirmWith(ctx context.Context, ownerID, turnID uuid.UUID, decisions []steward.Decision, emit Emit,
		inClaim func(context.Context, Tx) error) (steward.View, error)
}

// New builds a Runner from its settings and the hooks it calls back into.
func New(c Config, h Hooks) *Runner {
	return &Runner{Config: c, hooks: h, stopping: make(chan struct{})}
}

// Stop tells the turns this runner runs that the process is shutting down (SIGTERM): a model
// call in flight is abandoned, and each turn is saved continuing at its next step, to be
// continued by the next process (continue.go); writes under way finish first. It returns at
// once; the turns' requests end as they save.
func (r *Runner) Stop() { r.stopOnce.Do(func() { close(r.stopping) }) }

// shuttingDown reports whether Stop was called.
func (r *Runner) shuttingDown() bool {
	select {
	case <-r.stopping:
		return true
	default:
		return false
	}
}

// Memory is recall for the loop, in two steps (docs/ARCHITECTURE.md §2). internal/memory
// implements it.
type Memory interface {
	// Embed computes the owner's message's embedding, before and outside the turn's start
	// transaction (it may call an embedding API). A failure never fails the turn: the recall
	// then goes on without a vector (by keyword).
	Embed(ctx context.Context, ownerID uuid.UUID, message string) ([]float32, error)
	// RecallIn returns a memory block for an incoming message — already delimited as data —
	// or "" when nothing is relevant, reading through tx.Memory in the turn's start
	// transaction (under a savepoint: a failure never fails the turn); vec is Embed's vector
	// or nil. taint, when the block holds text that came from outside (a webhook's payload, a
	// document, a tainted turn's exchange), says what in words ("memory: a document 'x.csv'
	// recalled from memory"): the turn is then tainted by it, and its writes are gated like a
	// webhook turn's (docs/ARCHITECTURE.md §3).
	RecallIn(ctx context.Context, tx Tx, vec []float32, message string) (block, taint string, err error)
}

// Input starts a turn.
type Input struct {
	OwnerID uuid.UUID
	// ConversationID continues a conversation; nil starts a new one.
	ConversationID *uuid.UUID
	Message        string
	Trigger        steward.Trigger
	// Taint, when set, names untrusted content the message itself carries (a job's gathered
	// mail, "job:morning-briefing"): the turn starts tainted (docs/ARCHITECTURE.md §3).
	Taint string
}

// MaxMessageRunes caps an incoming message.
const MaxMessageRunes = 32000

// StreamEvent is one event of a running turn, for streaming clients.
type StreamEvent struct {
	// Type is started (a new turn's first event: Turn, status running) | text | tool_call |
	// tool_result | suspended | continuing | completed | error (also a cancelled turn's end).
	Type   string              `json:"type"`
	Text   string              `json:"text,omitempty"`
	Call   *steward.ToolCall   `json:"call,omitempty"`
	Result *steward.ToolResult `json:"result,omitempty"`
	Turn   *steward.View       `json:"turn,omitempty"`
}

// Emit receives stream events; it may be nil.
type Emit func(StreamEvent)

// Turn reads one turn of the owner.
func (r *Runner) Turn(ctx context.Context, ownerID, turnID uuid.UUID) (steward.View, error) {
	var v steward.View
	err := r.Store.InOwner(ctx, ownerID, func(tx Tx) error {
		t, err := tx.Turns.Get(ctx, turnID)
		if err != nil {
			return err
		}
		v, err = r.view(ctx, tx, t)
		return err
	})
	return v, err
}

// view is the TurnView of a stored turn, the same for a read (Turn) and for a confirm that
// Hold keeps suspended: with Hold set, a suspended turn whose owner has decided says which
// household members it still waits for (awaiting).
func (r *Runner) view(ctx context.Context, tx Tx, t steward.Turn) (steward.View, error) {
	v := steward.ViewOf(t)
	if r.hooks.Hold == nil || t.Status != steward.StatusSuspended {
		return v, nil
	}
	votes, err := tx.Household.Votes(ctx, t.ID)
	if members, ownerPending := steward.HouseholdWait(votes, t.OwnerID); len(members) > 0 && !ownerPending {
		v.Awaiting = "awaiting household approval from " + strings.Join(members, ", ")
	}
	return v, err
}

// ownerRegistry reads, in tx, the registry of a turn: Tools and the owner's own tools
// (OwnerTools), under a savepoint; nil means Tools alone (also when they cannot be read).
func (r *Runner) ownerRegistry(ctx context.Context, tx Tx) *tools.Registry {
	if r.hooks.OwnerTools == nil {
		return nil
	}
	extra, err := r.ownerTools(ctx, tx)
	return r.registryWith(ctx, extra, err)
}

// ownerTools reads the owner's own tools in tx, under a savepoint.
func (r *Runner) ownerTools(ctx context.Context, tx Tx) (extra []tools.Tool, err error) {
	err = tx.Try(ctx, func() error {
		var err error
		extra, err = r.hooks.OwnerTools(ctx, tx)
		return err
	})
	return extra, err
}

// registryWith is Tools with extra (ownerTools' result); nil, logged, when err is set or
// the tools are refused.
func (r *Runner) registryWith(ctx context.Context, extra []tools.Tool, err error) *tools.Registry {
	if err != nil {
		logError(ctx, err, "owner tools unavailable; the turn goes on with the built-in tools")
		return nil
	}
	reg, err := r.Tools.With(extra...)
	if err != nil {
		logError(ctx, err, "owner tools refused; the turn goes on with the built-in tools")
		return nil
	}
	return reg
}

// registry is the registry of x's turn.
func (r *Runner) registry(x *run) *tools.Registry {
	if x.reg != nil {
		return x.reg
	}
	return r.Tools
}
