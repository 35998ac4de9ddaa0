package ledger

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
)

// Overview is the owner's money at a glance, as the web app's Money page shows it: the
// accounts (asset and liability ones with their balance), this month's report by category,
// each budget against this month's spending, and the latest transactions.
type Overview struct {
	Month    string
	Accounts []tools.AccountView
	Report   tools.Report
	Budgets  []tools.BudgetLine
	Recent   []tools.Transaction
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
		entries, err = tx.Ledger.Entries(ctx, time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC))
		return err
	})
	if err != nil {
		return Overview{}, err
	}
	o := Overview{Month: month.Format("2006-01")}
	balance := map[string]int64{}
	var thisMonth []steward.LedgerEntry
	for _, e := range entries {
		balance[e.Account] += e.AmountMinor
		if !e.Date.Before(month) && e.Date.Before(next) {
			thisMonth = append(thisMonth, e)
		}
	}
	for _, a := range accts {
		v := tools.AccountView{LedgerAccount: a}
		if a.Kind == steward.AccountAsset || a.Kind == steward.AccountLiability {
			b := balance[a.Name]
			v.BalanceMinor, v.Balance = &b, tools.FormatMoney(b, a.Currency)
		}
		o.Accounts = append(o.Accounts, v)
	}
	lines, totals, err := tools.Summarize(thisMonth, tools.ByCategory)
	if err != nil {
		return Overview{}, err
	}
	o.Report = tools.Report{From: month.Format(time.DateOnly), To: next.AddDate(0, 0, -1).Format(time.DateOnly),
		By: tools.ByCategory, Lines: lines, Totals: totals}
	for _, b := range budgets {
		var spent int64
		for _, e := range thisMonth {
			if e.Currency == b.Currency && strings.EqualFold(e.Category, b.Category) {
				spent -= e.AmountMinor
			}
		}
		left := b.MonthlyMinor - spent
		o.Budgets = append(o.Budgets, tools.BudgetLine{Category: b.Category, Currency: b.Currency, BudgetMinor: b.MonthlyMinor,
			SpentMinor: spent, RemainingMinor: left, Budget: tools.FormatMoney(b.MonthlyMinor, b.Currency),
			Spent: tools.FormatMoney(spent, b.Currency), Remaining: tools.FormatMoney(left, b.Currency), Over: left < 0})
	}
	recent := slices.Clone(entries)
	slices.SortStableFunc(recent, func(a, b steward.LedgerEntry) int { return b.Date.Compare(a.Date) })
	for _, e := range recent[:min(len(recent), RecentTransactions)] {
		o.Recent = append(o.Recent, tools.Transaction{ID: e.ID, Date: e.Date.Format(time.DateOnly), Description: e.Description,
			Merchant: e.Merchant, Account: e.Account, Category: e.Category, AmountMinor: e.AmountMinor, Currency: e.Currency,
			Amount: tools.FormatMoney(e.AmountMinor, e.Currency)})
	}
	return o, nil
}
