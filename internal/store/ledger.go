package store

import (
	"context"
	"errors"

	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/steward"
)

// The owner's double-entry ledger (migration 00010): accounts, balanced transactions and
// budgets. The database refuses an unbalanced transaction at commit.

// Accounts lists the owner's ledger accounts by kind and name.
func (l Ledger) Accounts(ctx context.Context) ([]steward.LedgerAccount, error) {
	rows, err := l.q.LedgerAccounts(ctx, l.ownerID)
	if err != nil {
		return nil, notFound("ledger accounts", err)
	}
	out := make([]steward.LedgerAccount, len(rows))
	for i, r := range rows {
		out[i] = toLedgerAccount(r)
	}
	return out, nil
}

// Account returns the owner's account called name; ErrNotFound when there is none.
func (l Ledger) Account(ctx context.Context, name string) (steward.LedgerAccount, error) {
	r, err := l.q.LedgerAccountByName(ctx, db.LedgerAccountByNameParams{OwnerID: l.ownerID, Name: name})
	if err != nil {
		return steward.LedgerAccount{}, notFound("ledger account", err)
	}
	return toLedgerAccount(r), nil
}

// EnsureAccount returns the account called name, creating it with kind and currency when
// the owner has none by that name (an existing account keeps its own kind and currency).
func (l Ledger) EnsureAccount(ctx context.Context, name, kind, currency string) (steward.LedgerAccount, error) {
	r, err := l.q.CreateLedgerAccount(ctx, db.CreateLedgerAccountParams{OwnerID: l.ownerID, Name: name, Kind: kind, Currency: currency})
	if errors.Is(err, pgx.ErrNoRows) {
		return l.Account(ctx, name)
	}
	if err != nil {
		return steward.LedgerAccount{}, notFound("create ledger account", err)
	}
	return toLedgerAccount(r), nil
}

// Record stores a transaction with its postings; recorded is false (and nothing is written)
// when one with the same import hash is already in the book.
func (l Ledger) Record(ctx context.Context, t steward.NewLedgerTxn) (id uuid.UUID, recorded bool, err error) {
	id, err = l.q.InsertLedgerTransaction(ctx, db.InsertLedgerTransactionParams{OwnerID: l.ownerID,
		Date: pgDate(t.Date), Description: t.Description, Merchant: t.Merchant, Source: t.Source,
		ImportHash: ptrString(t.ImportHash)})
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, false, notFound("record ledger transaction", err)
	}
	for _, p := range t.Postings {
		err := l.q.InsertLedgerPosting(ctx, db.InsertLedgerPostingParams{OwnerID: l.ownerID, TransactionID: id,
			AccountID: p.AccountID, AmountMinor: p.AmountMinor, Currency: p.Currency})
		if err != nil {
			return uuid.Nil, false, notFound("record ledger posting", err)
		}
	}
	return id, true, nil
}

// Entries lists the money side of the owner's transactions dated in [from, to).
func (l Ledger) Entries(ctx context.Context, from, to time.Time) ([]steward.LedgerEntry, error) {
	rows, err := l.q.LedgerEntries(ctx, db.LedgerEntriesParams{OwnerID: l.ownerID, FromDate: pgDate(from), ToDate: pgDate(to)})
	if err != nil {
		return nil, notFound("ledger entries", err)
	}
	out := make([]steward.LedgerEntry, len(rows))
	for i, r := range rows {
		out[i] = steward.LedgerEntry{ID: r.ID, Date: r.Date.Time, Description: r.Description, Merchant: r.Merchant,
			Source: r.Source, Account: r.Account, Category: r.Category, AmountMinor: r.AmountMinor, Currency: r.Currency}
	}
	return out, nil
}

// Categorize re-points the expense and income postings of the given transactions to the
// account categoryID and returns how many postings moved. Amounts do not change, so every
// transaction still balances; ids of other owners move nothing.
func (l Ledger) Categorize(ctx context.Context, ids []uuid.UUID, categoryID uuid.UUID) (int64, error) {
	n, err := l.q.RepointCategory(ctx, db.RepointCategoryParams{OwnerID: l.ownerID, AccountID: categoryID, TransactionIds: ids})
	if err != nil {
		return 0, notFound("categorize", err)
	}
	return n, nil
}

// SetBudget sets the monthly budget of a category.
func (l Ledger) SetBudget(ctx context.Context, b steward.Budget) (steward.Budget, error) {
	r, err := l.q.UpsertLedgerBudget(ctx, db.UpsertLedgerBudgetParams{OwnerID: l.ownerID, Category: b.Category,
		MonthlyMinor: b.MonthlyMinor, Currency: b.Currency})
	if err != nil {
		return steward.Budget{}, notFound("set budget", err)
	}
	return steward.Budget{Category: r.Category, MonthlyMinor: r.MonthlyMinor, Currency: r.Currency}, nil
}

// Budgets lists the owner's budgets by category.
func (l Ledger) Budgets(ctx context.Context) ([]steward.Budget, error) {
	rows, err := l.q.LedgerBudgets(ctx, l.ownerID)
	if err != nil {
		return nil, notFound("budgets", err)
	}
	out := make([]steward.Budget, len(rows))
	for i, r := range rows {
		out[i] = steward.Budget{Category: r.Category, MonthlyMinor: r.MonthlyMinor, Currency: r.Currency}
	}
	return out, nil
}

func toLedgerAccount(r db.LedgerAccount) steward.LedgerAccount {
	return steward.LedgerAccount{ID: r.ID, Name: r.Name, Kind: r.Kind, Currency: r.Currency}
}

// pgDate is the calendar date of t (in t's location).
func pgDate(t time.Time) pgtype.Date {
	y, m, d := t.Date()
	return pgtype.Date{Time: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), Valid: true}
}

// DeleteTransaction deletes a transaction with its postings (an undo of record_expense);
// ErrNotFound when there is no such transaction.
func (l Ledger) DeleteTransaction(ctx context.Context, id uuid.UUID) error {
	n, err := l.q.DeleteLedgerTransaction(ctx, db.DeleteLedgerTransactionParams{OwnerID: l.ownerID, ID: id})
	return rowsOrNotFound("delete transaction "+id.String(), n, err)
}
