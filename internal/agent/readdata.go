package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// readData is the tools.Data a read tool gets: each query is its own short owner
// transaction (the read itself runs outside any), and every write is refused, so a tool
// declared as a read cannot change anything behind the gate.
type readData struct {
	r *Runner
	x *run
}

var (
	_ tools.Data  = readData{}
	_ tools.Calls = readData{}
)

// errReadOnly is what a read tool gets when it tries to write.
var errReadOnly = steward.Errorf(steward.CodeInvalid, "a read tool cannot write")

// query runs one read in its own transaction.
func query[T any](ctx context.Context, d readData, f func(tools.Data) (T, error)) (T, error) {
	var out T
	err := d.r.inOwner(ctx, d.x, func(tx Tx) error {
		var err error
		out, err = f(tx.Data)
		return err
	})
	return out, err
}

func (d readData) ListTasks(ctx context.Context, status string) ([]steward.Task, error) {
	return query(ctx, d, func(data tools.Data) ([]steward.Task, error) { return data.ListTasks(ctx, status) })
}

func (d readData) GetTask(ctx context.Context, id uuid.UUID) (steward.Task, error) {
	return query(ctx, d, func(data tools.Data) (steward.Task, error) { return data.GetTask(ctx, id) })
}

func (d readData) SearchFacts(ctx context.Context, q string, limit int) ([]steward.Fact, error) {
	return query(ctx, d, func(data tools.Data) ([]steward.Fact, error) { return data.SearchFacts(ctx, q, limit) })
}

func (readData) CreateTask(context.Context, steward.NewTask) (steward.Task, error) {
	return steward.Task{}, errReadOnly
}

func (readData) CompleteTask(context.Context, uuid.UUID) (steward.Task, error) {
	return steward.Task{}, errReadOnly
}

func (readData) UpsertFact(context.Context, steward.NewFact) (steward.Fact, bool, error) {
	return steward.Fact{}, false, errReadOnly
}

func (readData) ForgetFact(context.Context, uuid.UUID) (steward.Fact, error) {
	return steward.Fact{}, errReadOnly
}

func (readData) CreateNotification(context.Context, string, string, string) (steward.Notification, error) {
	return steward.Notification{}, errReadOnly
}

// readLedger is the tools.Ledger a read tool gets, like readData: a short transaction per
// query, and every write refused.
type readLedger struct {
	r *Runner
	x *run
}

var _ tools.Ledger = readLedger{}

// ledgerQuery runs one ledger read in its own transaction.
func ledgerQuery[T any](ctx context.Context, d readLedger, f func(tools.Ledger) (T, error)) (T, error) {
	var out T
	err := d.r.inOwner(ctx, d.x, func(tx Tx) error {
		var err error
		out, err = f(tx.Ledger)
		return err
	})
	return out, err
}

func (d readLedger) Accounts(ctx context.Context) ([]steward.LedgerAccount, error) {
	return ledgerQuery(ctx, d, func(l tools.Ledger) ([]steward.LedgerAccount, error) { return l.Accounts(ctx) })
}

func (d readLedger) Account(ctx context.Context, name string) (steward.LedgerAccount, error) {
	return ledgerQuery(ctx, d, func(l tools.Ledger) (steward.LedgerAccount, error) { return l.Account(ctx, name) })
}

func (d readLedger) Entries(ctx context.Context, from, to time.Time) ([]steward.LedgerEntry, error) {
	return ledgerQuery(ctx, d, func(l tools.Ledger) ([]steward.LedgerEntry, error) { return l.Entries(ctx, from, to) })
}

func (d readLedger) Budgets(ctx context.Context) ([]steward.Budget, error) {
	return ledgerQuery(ctx, d, func(l tools.Ledger) ([]steward.Budget, error) { return l.Budgets(ctx) })
}

func (readLedger) EnsureAccount(context.Context, string, string, string) (steward.LedgerAccount, error) {
	return steward.LedgerAccount{}, errReadOnly
}

func (readLedger) Record(context.Context, steward.NewLedgerTxn) (uuid.UUID, bool, error) {
	return uuid.Nil, false, errReadOnly
}

func (readLedger) Categorize(context.Context, []uuid.UUID, uuid.UUID) (int64, error) {
	return 0, errReadOnly
}

func (readLedger) SetBudget(context.Context, steward.Budget) (steward.Budget, error) {
	return steward.Budget{}, errReadOnly
}

// CallResult reads an earlier call's result from the turn's journal (tools.Calls).
func (d readData) CallResult(ctx context.Context, turnID uuid.UUID, callID string) (json.RawMessage, error) {
	var out json.RawMessage
	err := d.r.inOwner(ctx, d.x, func(tx Tx) error {
		calls, err := tx.Journal.Calls(ctx, turnID)
		if err != nil {
			return err
		}
		for _, c := range calls {
			if c.CallID == callID && c.Status == steward.CallSucceeded && len(c.Result) > 0 {
				out = c.Result
				return nil
			}
		}
		return fmt.Errorf("call %s has no result in turn %s: %w", callID, turnID, steward.ErrNotFound)
	})
	return out, err
}
