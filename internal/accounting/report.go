// Package accounting computes over the owner's ledger entries — reports, balances, budgets
// against spending, recurring payments and anomalies — and reads nothing itself: no database,
// no tool. The ledger service (internal/ledger, the web app's Money page and the API) and the
// ledger's tools (internal/tools/ledgertools) read the entries and hand them here, so both
// compute the same figures (docs/ARCHITECTURE.md §1).
package accounting

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
)

// All of time, for reads without a date range: [AllFrom, AllTo).
var (
	AllFrom = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
	AllTo   = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
)

// Transaction is one ledger entry as a tool and the API show it.
type Transaction struct {
	ID          uuid.UUID `json:"id"`
	Date        string    `json:"date"`
	Description string    `json:"description"`
	Merchant    string    `json:"merchant"`
	Account     string    `json:"account"`
	Category    string    `json:"category"`
	AmountMinor int64     `json:"amount_minor"`
	Currency    string    `json:"currency"`
	Amount      string    `json:"amount"`
}

// ToTransaction is an entry as a tool and the API show it.
func ToTransaction(e steward.LedgerEntry) Transaction {
	return Transaction{ID: e.ID, Date: e.Date.Format(time.DateOnly), Description: e.Description, Merchant: e.Merchant,
		Account: e.Account, Category: e.Category, AmountMinor: e.AmountMinor, Currency: e.Currency,
		Amount: steward.FormatMoney(e.AmountMinor, e.Currency)}
}

// ReportLine is one group of a ledger report in one currency: money out (spent) and in, as
// positive minor units, and their net.
type ReportLine struct {
	Key      string `json:"key"`
	Currency string `json:"currency"`
	Count    int    `json:"count"`
	OutMinor int64  `json:"out_minor"`
	InMinor  int64  `json:"in_minor"`
	NetMinor int64  `json:"net_minor"`
	Out      string `json:"out"`
	In       string `json:"in"`
	Net      string `json:"net"`
}

// Report is a ledger report: its lines, largest spending first, and a total per currency.
type Report struct {
	From   string       `json:"from"`
	To     string       `json:"to"`
	By     string       `json:"by"`
	Lines  []ReportLine `json:"lines"`
	Totals []ReportLine `json:"totals"`
}

// Report groupings.
const (
	ByCategory = "category"
	ByMonth    = "month"
	ByMerchant = "merchant"
	ByAccount  = "account"
)

// Summarize groups entries by category, month, merchant or account. Money out is what left
// an asset or liability account (a negative posting on it), money in what arrived.
func Summarize(entries []steward.LedgerEntry, by string) ([]ReportLine, []ReportLine, error) {
	key := map[string]func(steward.LedgerEntry) string{
		ByCategory: func(e steward.LedgerEntry) string { return cmp.Or(e.Category, steward.Uncategorized) },
		ByMonth:    func(e steward.LedgerEntry) string { return e.Date.Format("2006-01") },
		ByMerchant: func(e steward.LedgerEntry) string { return e.Merchant },
		ByAccount:  func(e steward.LedgerEntry) string { return e.Account },
	}[by]
	if key == nil {
		return nil, nil, steward.Errorf(steward.CodeInvalid, "by must be category, month, merchant or account")
	}
	lines, totals := map[[2]string]*ReportLine{}, map[string]*ReportLine{}
	add := func(l *ReportLine, e steward.LedgerEntry) {
		l.Count++
		if e.AmountMinor < 0 {
			l.OutMinor -= e.AmountMinor
		} else {
			l.InMinor += e.AmountMinor
		}
	}
	for _, e := range entries {
		k := [2]string{key(e), e.Currency}
		if lines[k] == nil {
			lines[k] = &ReportLine{Key: k[0], Currency: e.Currency}
		}
		if totals[e.Currency] == nil {
			totals[e.Currency] = &ReportLine{Key: "total", Currency: e.Currency}
		}
		add(lines[k], e)
		add(totals[e.Currency], e)
	}
	finish := func(m []*ReportLine) []ReportLine {
		out := make([]ReportLine, 0, len(m))
		for _, l := range m {
			l.NetMinor = l.InMinor - l.OutMinor
			l.Out, l.In, l.Net = steward.FormatMoney(l.OutMinor, l.Currency), steward.FormatMoney(l.InMinor, l.Currency), steward.FormatMoney(l.NetMinor, l.Currency)
			out = append(out, *l)
		}
		slices.SortFunc(out, func(a, b ReportLine) int {
			if by == ByMonth {
				return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Currency, b.Currency))
			}
			return cmp.Or(cmp.Compare(b.OutMinor, a.OutMinor), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Currency, b.Currency))
		})
		return out
	}
	var ls, ts []*ReportLine
	for _, l := range lines {
		ls = append(ls, l)
	}
	for _, l := range totals {
		ts = append(ts, l)
	}
	return finish(ls), finish(ts), nil
}

// NewReport summarizes by by the entries of [from, to) (to exclusive).
func NewReport(entries []steward.LedgerEntry, from, to time.Time, by string) (Report, error) {
	lines, totals, err := Summarize(entries, by)
	if err != nil {
		return Report{}, err
	}
	return Report{From: from.Format(time.DateOnly), To: to.AddDate(0, 0, -1).Format(time.DateOnly), By: by, Lines: lines, Totals: totals}, nil
}

// AccountView is an account with, for asset and liability accounts, its balance.
type AccountView struct {
	steward.LedgerAccount
	BalanceMinor *int64 `json:"balance_minor,omitempty"`
	Balance      string `json:"balance,omitempty"`
}

// Balances is the accounts, each asset and liability account with its balance over entries.
func Balances(accts []steward.LedgerAccount, entries []steward.LedgerEntry) []AccountView {
	balance := map[string]int64{}
	for _, e := range entries {
		balance[e.Account] += e.AmountMinor
	}
	out := make([]AccountView, len(accts))
	for i, acc := range accts {
		out[i] = AccountView{LedgerAccount: acc}
		if acc.Kind == steward.AccountAsset || acc.Kind == steward.AccountLiability {
			b := balance[acc.Name]
			out[i].BalanceMinor, out[i].Balance = &b, steward.FormatMoney(b, acc.Currency)
		}
	}
	return out
}

// BudgetLine is one category's budget and what was spent against it in a month.
type BudgetLine struct {
	Category       string `json:"category"`
	Currency       string `json:"currency"`
	BudgetMinor    int64  `json:"budget_minor"`
	SpentMinor     int64  `json:"spent_minor"`
	RemainingMinor int64  `json:"remaining_minor"`
	Budget         string `json:"budget"`
	Spent          string `json:"spent"`
	Remaining      string `json:"remaining"`
	Over           bool   `json:"over"`
}

// BudgetLines is each budget against what entries (one month's) spent in its category.
func BudgetLines(budgets []steward.Budget, entries []steward.LedgerEntry) []BudgetLine {
	out := make([]BudgetLine, len(budgets))
	for i, b := range budgets {
		var spent int64
		for _, e := range entries {
			if e.Currency == b.Currency && strings.EqualFold(e.Category, b.Category) {
				spent -= e.AmountMinor
			}
		}
		left := b.MonthlyMinor - spent
		out[i] = BudgetLine{Category: b.Category, Currency: b.Currency, BudgetMinor: b.MonthlyMinor, SpentMinor: spent,
			RemainingMinor: left, Budget: steward.FormatMoney(b.MonthlyMinor, b.Currency), Spent: steward.FormatMoney(spent, b.Currency),
			Remaining: steward.FormatMoney(left, b.Currency), Over: left < 0}
	}
	return out
}

// Filter picks ledger entries as search_transactions and run_code's ledger inputs do: every
// word of Words in the description or merchant, an amount (either direction, minor units)
// within [Min, Max] where set, and the account called Account where set.
type Filter struct {
	Words    string
	Min, Max *int64
	Account  string
}

// Match reports whether e passes the filter.
func (f Filter) Match(e steward.LedgerEntry) bool {
	amount := max(e.AmountMinor, -e.AmountMinor)
	if f.Min != nil && amount < *f.Min || f.Max != nil && amount > *f.Max {
		return false
	}
	if f.Account != "" && !strings.EqualFold(f.Account, e.Account) {
		return false
	}
	text := strings.ToLower(e.Description + " " + e.Merchant)
	for _, w := range strings.Fields(strings.ToLower(f.Words)) {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}
