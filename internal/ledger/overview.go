package ledger

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/accounting"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Overview is the owner's money at a glance, as the web app's Money page shows it: the
// accounts (asset and liability ones with their balance), this month's report by category,
// each budget against this month's spending, and the latest transactions.
type Overview struct {
	Month    string
	Accounts []accounting.AccountView
	Report   accounting.Report
	Budgets  []accounting.BudgetLine
	Recent   []accounting.Transaction
}

// RecentTransactions is how many transactions Overview lists.
const RecentTransactions = 20

// Overview reads the owner's money in one read of the ledger; now picks the month.
func (s *Service) Overview(ctx context.Context, ownerID uuid.UUID, now time.Time) (Overview, error) {
	y, m, _ := now.UTC().Date()
	month := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	next := month.AddDate(0, 1, 0)
	var (
		accts   []steward.LedgerAccount
		entries []steward.LedgerEntry
		budgets []steward.Budget
	)
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		if accts, err = tx.Ledger.Accounts(ctx); err != nil {
			return err
		}
		if budgets, err = tx.Ledger.Budgets(ctx); err != nil {
			return err
		}
		entries, err = tx.Ledger.Entries(ctx, accounting.AllFrom, accounting.AllTo)
		return err
	})
	if err != nil {
		return Overview{}, err
	}
	var thisMonth []steward.LedgerEntry
	for _, e := range entries {
		if !e.Date.Before(month) && e.Date.Before(next) {
			thisMonth = append(thisMonth, e)
		}
	}
	report, err := accounting.NewReport(thisMonth, month, next, accounting.ByCategory)
	if err != nil {
		return Overview{}, err
	}
	o := Overview{Month: month.Format("2006-01"), Accounts: accounting.Balances(accts, entries), Report: report,
		Budgets: accounting.BudgetLines(budgets, thisMonth)}
	recent := slices.Clone(entries)
	slices.SortStableFunc(recent, func(a, b steward.LedgerEntry) int { return b.Date.Compare(a.Date) })
	for _, e := range recent[:min(len(recent), RecentTransactions)] {
		o.Recent = append(o.Recent, accounting.ToTransaction(e))
	}
	return o, nil
}
