package tools

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
)

// Data is the owner-scoped persistence the built-in tools need. The store implements it
// inside the caller's transaction (with the owner already set), so a write tool's effect
// commits together with its journal row.
type Data interface {
	// CreateTask stores a new open task.
	CreateTask(ctx context.Context, t steward.NewTask) (steward.Task, error)
	// GetTask returns one task; ErrNotFound when it does not exist.
	GetTask(ctx context.Context, id uuid.UUID) (steward.Task, error)
	// CompleteTask marks a task done; ErrNotFound when it does not exist.
	CompleteTask(ctx context.Context, id uuid.UUID) (steward.Task, error)
	// ListTasks lists tasks with the status ("" = all, TaskOpen, TaskDone).
	ListTasks(ctx context.Context, status string) ([]steward.Task, error)
	// UpsertFact stores a fact unless one with the same Key exists; created says which.
	UpsertFact(ctx context.Context, f steward.NewFact) (fact steward.Fact, created bool, err error)
	// SearchFacts returns at most limit facts matching the keywords of query.
	SearchFacts(ctx context.Context, query string, limit int) ([]steward.Fact, error)
	// ForgetFact deletes a fact and returns it; ErrNotFound when it does not exist.
	ForgetFact(ctx context.Context, id uuid.UUID) (steward.Fact, error)
	// CreateNotification stores a notification for the owner.
	CreateNotification(ctx context.Context, channel, title, message string) (steward.Notification, error)
}

// Calls reads the turn's call journal for a read tool (run_code's inputs).
type Calls interface {
	// CallResult is the result an earlier call of the turn was journaled with (its output as
	// the tool returned it); ErrNotFound when the turn has no such call, or none that ran.
	CallResult(ctx context.Context, turnID uuid.UUID, callID string) (json.RawMessage, error)
}

// Ledger is the owner's double-entry book as the ledger tools see it (docs/ARCHITECTURE.md
// §6). The store's Ledger repository implements it inside the caller's transaction; a read
// tool gets one that refuses writes.
type Ledger interface {
	// Accounts lists the owner's accounts.
	Accounts(ctx context.Context) ([]steward.LedgerAccount, error)
	// Account returns the account called name; ErrNotFound when there is none.
	Account(ctx context.Context, name string) (steward.LedgerAccount, error)
	// EnsureAccount returns the account called name, creating it with kind and currency.
	EnsureAccount(ctx context.Context, name, kind, currency string) (steward.LedgerAccount, error)
	// Entries lists the money side of the transactions dated in [from, to).
	Entries(ctx context.Context, from, to time.Time) ([]steward.LedgerEntry, error)
	// Budgets lists the owner's monthly budgets.
	Budgets(ctx context.Context) ([]steward.Budget, error)
	// Record stores a balanced transaction.
	Record(ctx context.Context, t steward.NewLedgerTxn) (id uuid.UUID, recorded bool, err error)
	// Categorize re-points the category postings of the transactions to account categoryID.
	Categorize(ctx context.Context, ids []uuid.UUID, categoryID uuid.UUID) (int64, error)
	// SetBudget sets the monthly budget of a category.
	SetBudget(ctx context.Context, b steward.Budget) (steward.Budget, error)
}

// errNoLedger is returned by the ledger tools when the caller gave no Ledger.
var errNoLedger = errors.New("tool needs the ledger, but none is configured")

// RequireLedger returns the Env's Ledger or an error when it is missing.
func (e Env) RequireLedger() (Ledger, error) {
	if e.Ledger == nil {
		return nil, errNoLedger
	}
	return e.Ledger, nil
}
