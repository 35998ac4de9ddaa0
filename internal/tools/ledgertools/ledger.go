package ledgertools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/accounting"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Tools returns the ledger's tools: reads (ledger_report, search_transactions,
// list_accounts, budget_status, find_subscriptions, find_anomalies) and writes through the gate (categorize, set_budget, and
// record_expense, whose amount the money caps guard).
func Tools() []tools.Tool {
	return []tools.Tool{ledgerReportTool(), searchTransactionsTool(), listAccountsTool(), budgetStatusTool(),
		findSubscriptionsTool(), findAnomaliesTool(), categorizeTool(), setBudgetTool(), recordExpenseTool()}
}

// parseDay parses an optional YYYY-MM-DD argument; zero when empty.
func parseDay(field, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, tools.ArgErrorf(field, "%s is not a date; use YYYY-MM-DD", tools.QuoteValue(s))
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
		f = accounting.AllFrom
	}
	if t.IsZero() {
		t = accounting.AllTo
	} else {
		t = t.AddDate(0, 0, 1)
	}
	if !f.Before(t) {
		return f, t, tools.ArgErrorf("to", "must not be before from")
	}
	return f, t, nil
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
		return tools.ArgErrorf("from", "must not be empty")
	}
	if strings.TrimSpace(a.To) == "" {
		return tools.ArgErrorf("to", "must not be empty")
	}
	var err error
	a.from, a.to, err = dayRange(a.From, a.To)
	return err
}

func ledgerReportTool() tools.Tool {
	return tools.Say(tools.New("ledger_report",
		"Sum the owner's money out and in between two dates (both included), grouped by category, month, merchant or account. Amounts are integer minor units (cents) with a formatted string.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a ledgerReportArgs) (any, error) {
			l, err := env.RequireLedger()
			if err != nil {
				return nil, err
			}
			entries, err := l.Entries(ctx, a.from, a.to)
			if err != nil {
				return nil, fmt.Errorf("ledger report: %w", err)
			}
			return accounting.NewReport(entries, a.from, a.to, a.By)
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
	if err := tools.CheckLength("query", a.Query, 0, 200); err != nil {
		return err
	}
	if a.Min != nil && a.Max != nil && *a.Min > *a.Max {
		return tools.ArgErrorf("max", "must not be below min")
	}
	var err error
	a.from, a.to, err = dayRange(a.From, a.To)
	return err
}

func (a *searchTransactionsArgs) match(e steward.LedgerEntry) bool {
	return accounting.Filter{Words: a.Query, Min: a.Min, Max: a.Max, Account: a.Account}.Match(e)
}

func searchTransactionsTool() tools.Tool {
	return tools.Say(tools.New("search_transactions",
		"Find the owner's ledger transactions by words in the description, dates, amount (minor units, either direction) or account; newest first, at most 100.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a searchTransactionsArgs) (any, error) {
			l, err := env.RequireLedger()
			if err != nil {
				return nil, err
			}
			entries, err := l.Entries(ctx, a.from, a.to)
			if err != nil {
				return nil, fmt.Errorf("search transactions: %w", err)
			}
			found := []accounting.Transaction{}
			for _, e := range slices.Backward(entries) {
				if a.match(e) {
					found = append(found, accounting.ToTransaction(e))
				}
			}
			truncated := len(found) > maxSearchResults
			if truncated {
				found = found[:maxSearchResults]
			}
			return map[string]any{"transactions": found, "truncated": truncated}, nil
		}), saySearchTransactions, saidSearchTransactions)
}

func listAccountsTool() tools.Tool {
	return tools.Say(tools.New("list_accounts",
		"List the owner's ledger accounts (asset, liability, income, expense, equity) with the balance of each asset and liability account.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, _ struct{}) (any, error) {
			l, err := env.RequireLedger()
			if err != nil {
				return nil, err
			}
			accts, err := l.Accounts(ctx)
			if err != nil {
				return nil, fmt.Errorf("list accounts: %w", err)
			}
			entries, err := l.Entries(ctx, accounting.AllFrom, accounting.AllTo)
			if err != nil {
				return nil, fmt.Errorf("list accounts: %w", err)
			}
			out := accounting.Balances(accts, entries)
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
		return tools.ArgErrorf("month", "%s is not a month; use YYYY-MM", tools.QuoteValue(a.Month))
	}
	a.month = m
	return nil
}

func budgetStatusTool() tools.Tool {
	return tools.Say(tools.New("budget_status",
		"Show each monthly budget with what was spent in its category in a month (this month by default) and what remains.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a budgetStatusArgs) (any, error) {
			l, err := env.RequireLedger()
			if err != nil {
				return nil, err
			}
			month := a.month
			if month.IsZero() {
				y, m, _ := env.Time().Date()
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
			out := accounting.BudgetLines(budgets, entries)
			return map[string]any{"month": month.Format("2006-01"), "budgets": out}, nil
		}), sayBudgetStatus, saidBudgetStatus)
}

func sayLedgerReport(a ledgerReportArgs) string {
	return "Sum money by " + tools.Clip(a.By, 20) + tools.Span(a.From, a.To)
}

func saidLedgerReport(_ ledgerReportArgs, o accounting.Report) string {
	return "Report of " + tools.Count(len(o.Lines), "line")
}

func saySearchTransactions(a searchTransactionsArgs) string {
	s := "Search transactions"
	if q := strings.TrimSpace(a.Query); q != "" {
		s += " for " + tools.Quote(q)
	}
	if acc := strings.TrimSpace(a.Account); acc != "" {
		s += " in " + tools.Quote(acc)
	}
	return s + tools.Span(a.From, a.To)
}

func saidSearchTransactions(_ searchTransactionsArgs, o struct {
	Transactions []json.RawMessage `json:"transactions"`
	Truncated    bool              `json:"truncated"`
}) string {
	s := "Found " + tools.Count(len(o.Transactions), "transaction")
	if o.Truncated {
		s += " (more exist)"
	}
	return s
}

func sayListAccounts(struct{}) string { return "List accounts" }

func saidListAccounts(_ struct{}, o struct {
	Accounts []json.RawMessage `json:"accounts"`
}) string {
	return "Found " + tools.Count(len(o.Accounts), "account")
}

func sayBudgetStatus(a budgetStatusArgs) string {
	if m := strings.TrimSpace(a.Month); m != "" {
		if t, err := time.Parse("2006-01", m); err == nil {
			m = t.Format("January 2006")
		}
		return "Check budgets for " + tools.Clip(m, 20)
	}
	return "Check this month's budgets"
}

func saidBudgetStatus(_ budgetStatusArgs, o struct {
	Budgets []json.RawMessage `json:"budgets"`
}) string {
	return "Found " + tools.Count(len(o.Budgets), "budget")
}
