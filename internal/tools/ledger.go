package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
)

// Ledger is the owner's double-entry book as the ledger tools see it (issue 13;
// docs/ARCHITECTURE.md §6). The store's Ledger repository implements it inside the caller's
// transaction; a read tool gets one that refuses writes.
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

// ledger returns the Env's Ledger or an error when it is missing.
func (e Env) ledger() (Ledger, error) {
	if e.Ledger == nil {
		return nil, errNoLedger
	}
	return e.Ledger, nil
}

// LedgerTools returns the ledger's tools: reads (ledger_report, search_transactions,
// list_accounts, budget_status, find_subscriptions, find_anomalies) and writes through the gate (categorize, set_budget, and
// record_expense, whose amount the money caps guard).
func LedgerTools() []Tool {
	return []Tool{ledgerReportTool(), searchTransactionsTool(), listAccountsTool(), budgetStatusTool(),
		findSubscriptionsTool(), findAnomaliesTool(), categorizeTool(), setBudgetTool(), recordExpenseTool()}
}

// All of time, for reads without a date range.
var (
	ledgerBegin = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
	ledgerEnd   = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
)

// parseDay parses an optional YYYY-MM-DD argument; zero when empty.
func parseDay(field, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, argErrorf(field, "%s is not a date; use YYYY-MM-DD", quote(s))
	}
	return t, nil
}

// dayRange parses from and to (both inclusive, either may be empty) into [from, to+1 day).
func dayRange(from, to string) (time.Time, time.Time, error) {
	f, err := parseDay("from", from)
	if err != nil {
		return f, f, err
	}
	t, err := parseDay("to", to)
	if err != nil {
		return f, t, err
	}
	if f.IsZero() {
		f = ledgerBegin
	}
	if t.IsZero() {
		t = ledgerEnd
	} else {
		t = t.AddDate(0, 0, 1)
	}
	if !f.Before(t) {
		return f, t, argErrorf("to", "must not be before from")
	}
	return f, t, nil
}

// minorDigits are the ISO 4217 currencies whose minor unit is not a hundredth.
var minorDigits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// FormatMoney is an amount in minor units as a person reads it: "-12.34 EUR", "1500 JPY".
func FormatMoney(minor int64, currency string) string {
	digits, ok := minorDigits[currency]
	if !ok {
		digits = 2
	}
	neg := minor < 0
	u := uint64(minor)
	if neg {
		u = -u
	}
	s := strconv.FormatUint(u, 10)
	if digits > 0 {
		if len(s) <= digits {
			s = strings.Repeat("0", digits-len(s)+1) + s
		}
		s = s[:len(s)-digits] + "." + s[len(s)-digits:]
	}
	if neg {
		s = "-" + s
	}
	return s + " " + currency
}

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

func toTransaction(e steward.LedgerEntry) Transaction {
	return Transaction{ID: e.ID, Date: e.Date.Format(time.DateOnly), Description: e.Description, Merchant: e.Merchant,
		Account: e.Account, Category: e.Category, AmountMinor: e.AmountMinor, Currency: e.Currency,
		Amount: FormatMoney(e.AmountMinor, e.Currency)}
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
			l.Out, l.In, l.Net = FormatMoney(l.OutMinor, l.Currency), FormatMoney(l.InMinor, l.Currency), FormatMoney(l.NetMinor, l.Currency)
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

// ledgerReportArgs are the arguments of ledger_report.
type ledgerReportArgs struct {
	From string `json:"from" jsonschema:"first day, YYYY-MM-DD"`
	To   string `json:"to" jsonschema:"last day (included), YYYY-MM-DD"`
	By   string `json:"by" enum:"category,month,merchant,account" jsonschema:"how to group the money"`

	from, to time.Time
}

func (a *ledgerReportArgs) Check() error {
	if strings.TrimSpace(a.From) == "" {
		return argErrorf("from", "must not be empty")
	}
	if strings.TrimSpace(a.To) == "" {
		return argErrorf("to", "must not be empty")
	}
	var err error
	a.from, a.to, err = dayRange(a.From, a.To)
	return err
}

// LedgerReport reads the entries of [from, to) (to exclusive) and summarizes them by by.
func LedgerReport(ctx context.Context, l Ledger, from, to time.Time, by string) (Report, error) {
	entries, err := l.Entries(ctx, from, to)
	if err != nil {
		return Report{}, fmt.Errorf("ledger report: %w", err)
	}
	lines, totals, err := Summarize(entries, by)
	if err != nil {
		return Report{}, err
	}
	return Report{From: from.Format(time.DateOnly), To: to.AddDate(0, 0, -1).Format(time.DateOnly), By: by, Lines: lines, Totals: totals}, nil
}

func ledgerReportTool() Tool {
	return Say(New("ledger_report",
		"Sum the owner's money out and in between two dates (both included), grouped by category, month, merchant or account. Amounts are integer minor units (cents) with a formatted string.",
		steward.KindRead,
		func(ctx context.Context, env Env, a ledgerReportArgs) (any, error) {
			l, err := env.ledger()
			if err != nil {
				return nil, err
			}
			return LedgerReport(ctx, l, a.from, a.to, a.By)
		}), sayLedgerReport, saidLedgerReport)
}

// maxSearchResults bounds what search_transactions returns.
const maxSearchResults = 100

// searchTransactionsArgs are the arguments of search_transactions.
type searchTransactionsArgs struct {
	Query   string `json:"query,omitempty" jsonschema:"words the description or merchant contains"`
	From    string `json:"from,omitempty" jsonschema:"first day, YYYY-MM-DD"`
	To      string `json:"to,omitempty" jsonschema:"last day (included), YYYY-MM-DD"`
	Min     *int64 `json:"min,omitempty" jsonschema:"smallest amount, in minor units, money in or out"`
	Max     *int64 `json:"max,omitempty" jsonschema:"largest amount, in minor units, money in or out"`
	Account string `json:"account,omitempty" jsonschema:"only this account (its name)"`

	from, to time.Time
}

func (a *searchTransactionsArgs) Check() error {
	a.Query, a.Account = strings.TrimSpace(a.Query), strings.TrimSpace(a.Account)
	if err := checkLength("query", a.Query, 0, 200); err != nil {
		return err
	}
	if a.Min != nil && a.Max != nil && *a.Min > *a.Max {
		return argErrorf("max", "must not be below min")
	}
	var err error
	a.from, a.to, err = dayRange(a.From, a.To)
	return err
}

func (a *searchTransactionsArgs) match(e steward.LedgerEntry) bool {
	amount := max(e.AmountMinor, -e.AmountMinor)
	if a.Min != nil && amount < *a.Min || a.Max != nil && amount > *a.Max {
		return false
	}
	if a.Account != "" && !strings.EqualFold(a.Account, e.Account) {
		return false
	}
	text := strings.ToLower(e.Description + " " + e.Merchant)
	for _, w := range strings.Fields(strings.ToLower(a.Query)) {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

func searchTransactionsTool() Tool {
	return Say(New("search_transactions",
		"Find the owner's ledger transactions by words in the description, dates, amount (minor units, either direction) or account; newest first, at most 100.",
		steward.KindRead,
		func(ctx context.Context, env Env, a searchTransactionsArgs) (any, error) {
			l, err := env.ledger()
			if err != nil {
				return nil, err
			}
			entries, err := l.Entries(ctx, a.from, a.to)
			if err != nil {
				return nil, fmt.Errorf("search transactions: %w", err)
			}
			found := []Transaction{}
			for _, e := range slices.Backward(entries) {
				if a.match(e) {
					found = append(found, toTransaction(e))
				}
			}
			truncated := len(found) > maxSearchResults
			if truncated {
				found = found[:maxSearchResults]
			}
			return map[string]any{"transactions": found, "truncated": truncated}, nil
		}), saySearchTransactions, saidSearchTransactions)
}

// AccountView is an account with, for asset and liability accounts, its balance.
type AccountView struct {
	steward.LedgerAccount
	BalanceMinor *int64 `json:"balance_minor,omitempty"`
	Balance      string `json:"balance,omitempty"`
}

func listAccountsTool() Tool {
	return Say(New("list_accounts",
		"List the owner's ledger accounts (asset, liability, income, expense, equity) with the balance of each asset and liability account.",
		steward.KindRead,
		func(ctx context.Context, env Env, _ struct{}) (any, error) {
			l, err := env.ledger()
			if err != nil {
				return nil, err
			}
			accts, err := l.Accounts(ctx)
			if err != nil {
				return nil, fmt.Errorf("list accounts: %w", err)
			}
			entries, err := l.Entries(ctx, ledgerBegin, ledgerEnd)
			if err != nil {
				return nil, fmt.Errorf("list accounts: %w", err)
			}
			balance := map[string]int64{}
			for _, e := range entries {
				balance[e.Account] += e.AmountMinor
			}
			out := make([]AccountView, len(accts))
			for i, acc := range accts {
				out[i] = AccountView{LedgerAccount: acc}
				if acc.Kind == steward.AccountAsset || acc.Kind == steward.AccountLiability {
					b := balance[acc.Name]
					out[i].BalanceMinor, out[i].Balance = &b, FormatMoney(b, acc.Currency)
				}
			}
			return map[string]any{"accounts": out}, nil
		}), sayListAccounts, saidListAccounts)
}

// budgetStatusArgs are the arguments of budget_status.
type budgetStatusArgs struct {
	Month string `json:"month,omitempty" jsonschema:"the month, YYYY-MM; this month when empty"`

	month time.Time
}

func (a *budgetStatusArgs) Check() error {
	a.Month = strings.TrimSpace(a.Month)
	if a.Month == "" {
		return nil
	}
	m, err := time.Parse("2006-01", a.Month)
	if err != nil {
		return argErrorf("month", "%s is not a month; use YYYY-MM", quote(a.Month))
	}
	a.month = m
	return nil
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

func budgetStatusTool() Tool {
	return Say(New("budget_status",
		"Show each monthly budget with what was spent in its category in a month (this month by default) and what remains.",
		steward.KindRead,
		func(ctx context.Context, env Env, a budgetStatusArgs) (any, error) {
			l, err := env.ledger()
			if err != nil {
				return nil, err
			}
			month := a.month
			if month.IsZero() {
				y, m, _ := env.Now.Now().Date()
				month = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
			}
			budgets, err := l.Budgets(ctx)
			if err != nil {
				return nil, fmt.Errorf("budget status: %w", err)
			}
			entries, err := l.Entries(ctx, month, month.AddDate(0, 1, 0))
			if err != nil {
				return nil, fmt.Errorf("budget status: %w", err)
			}
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
					RemainingMinor: left, Budget: FormatMoney(b.MonthlyMinor, b.Currency), Spent: FormatMoney(spent, b.Currency),
					Remaining: FormatMoney(left, b.Currency), Over: left < 0}
			}
			return map[string]any{"month": month.Format("2006-01"), "budgets": out}, nil
		}), sayBudgetStatus, saidBudgetStatus)
}

func sayLedgerReport(a ledgerReportArgs) string {
	return "Sum money by " + Clip(a.By, 20) + span(a.From, a.To)
}

func saidLedgerReport(_ ledgerReportArgs, o Report) string {
	return "Report of " + Count(len(o.Lines), "line")
}

func saySearchTransactions(a searchTransactionsArgs) string {
	s := "Search transactions"
	if q := strings.TrimSpace(a.Query); q != "" {
		s += " for " + Quote(q)
	}
	if acc := strings.TrimSpace(a.Account); acc != "" {
		s += " in " + Quote(acc)
	}
	return s + span(a.From, a.To)
}

func saidSearchTransactions(_ searchTransactionsArgs, o struct {
	Transactions []json.RawMessage `json:"transactions"`
	Truncated    bool              `json:"truncated"`
}) string {
	s := "Found " + Count(len(o.Transactions), "transaction")
	if o.Truncated {
		s += " (more exist)"
	}
	return s
}

func sayListAccounts(struct{}) string { return "List accounts" }

func saidListAccounts(_ struct{}, o struct {
	Accounts []json.RawMessage `json:"accounts"`
}) string {
	return "Found " + Count(len(o.Accounts), "account")
}

func sayBudgetStatus(a budgetStatusArgs) string {
	if m := strings.TrimSpace(a.Month); m != "" {
		if t, err := time.Parse("2006-01", m); err == nil {
			m = t.Format("January 2006")
		}
		return "Check budgets for " + Clip(m, 20)
	}
	return "Check this month's budgets"
}

func saidBudgetStatus(_ budgetStatusArgs, o struct {
	Budgets []json.RawMessage `json:"budgets"`
}) string {
	return "Found " + Count(len(o.Budgets), "budget")
}
