package ledgertools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/accounting"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// maxCategorize bounds the transactions one categorize call re-points.
const maxCategorize = 200

// categorizeArgs are the arguments of categorize.
type categorizeArgs struct {
	TransactionIDs []string `json:"transaction_ids" jsonschema:"ids of the transactions to categorize (from search_transactions)"`
	Category       string   `json:"category" jsonschema:"the category: an expense or income account name, created when new"`

	ids []uuid.UUID
}

func (a *categorizeArgs) Check() error {
	a.Category = strings.TrimSpace(a.Category)
	if err := tools.CheckLength("category", a.Category, 1, 100); err != nil {
		return err
	}
	if len(a.TransactionIDs) == 0 || len(a.TransactionIDs) > maxCategorize {
		return tools.ArgErrorf("transaction_ids", "give 1 to %d transaction ids", maxCategorize)
	}
	a.ids = a.ids[:0]
	for _, s := range a.TransactionIDs {
		id, err := uuid.Parse(strings.TrimSpace(s))
		if err != nil {
			return tools.ArgErrorf("transaction_ids", "%s is not a transaction id", tools.QuoteValue(s))
		}
		if !slices.Contains(a.ids, id) {
			a.ids = append(a.ids, id)
		}
	}
	return nil
}

// category returns the category account called name in currency, created as an expense
// account when the owner has none; an account of another kind or currency is an ArgError.
func category(ctx context.Context, l tools.Ledger, name, currency string) (steward.LedgerAccount, error) {
	acc, err := l.EnsureAccount(ctx, name, steward.AccountExpense, currency)
	if err != nil {
		return acc, fmt.Errorf("category: %w", err)
	}
	if acc.Kind != steward.AccountExpense && acc.Kind != steward.AccountIncome {
		return acc, tools.ArgErrorf("category", "%s is an %s account, not a category", tools.QuoteValue(name), acc.Kind)
	}
	if acc.Currency != currency {
		return acc, tools.ArgErrorf("category", "%s is kept in %s, the money is in %s", tools.QuoteValue(name), acc.Currency, currency)
	}
	return acc, nil
}

func categorizeTool() tools.Tool {
	t := tools.New("categorize",
		"Book ledger transactions under a category (an expense or income account, created when new), e.g. move them out of Uncategorized.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a categorizeArgs) (any, error) {
			l, err := env.RequireLedger()
			if err != nil {
				return nil, err
			}
			entries, err := l.Entries(ctx, accounting.AllFrom, accounting.AllTo)
			if err != nil {
				return nil, fmt.Errorf("categorize: %w", err)
			}
			var ids []uuid.UUID
			var undo []steward.Recategorize // each transaction's category before, for an undo
			currency := ""
			for _, e := range entries {
				if !slices.Contains(a.ids, e.ID) || slices.Contains(ids, e.ID) {
					continue
				}
				if currency != "" && e.Currency != currency {
					return nil, tools.ArgErrorf("transaction_ids", "the transactions are in %s and %s; categorize one currency at a time", currency, e.Currency)
				}
				currency = e.Currency
				ids = append(ids, e.ID)
				if i := slices.IndexFunc(undo, func(m steward.Recategorize) bool { return m.Category == e.Category }); i >= 0 {
					undo[i].Transactions = append(undo[i].Transactions, e.ID)
				} else {
					undo = append(undo, steward.Recategorize{Category: e.Category, Transactions: []uuid.UUID{e.ID}})
				}
			}
			if len(ids) != len(a.ids) {
				return nil, tools.ArgErrorf("transaction_ids", "%d of the %d ids are not transactions of the ledger", len(a.ids)-len(ids), len(a.ids))
			}
			acc, err := category(ctx, l, a.Category, currency)
			if err != nil {
				return nil, err
			}
			n, err := l.Categorize(ctx, ids, acc.ID)
			if err != nil {
				return nil, fmt.Errorf("categorize: %w", err)
			}
			env.UndoWith(steward.Inverse{Op: steward.UndoRecategorize, Moves: undo})
			return map[string]any{"categorized": len(ids), "postings_moved": n, "category": acc.Name}, nil
		})
	t.Reversible = true
	return tools.Say(t, sayCategorize, saidCategorize)
}

// setBudgetArgs are the arguments of set_budget.
type setBudgetArgs struct {
	Category      string `json:"category" jsonschema:"the category (expense account name)"`
	MonthlyAmount int64  `json:"monthly_amount" jsonschema:"the monthly limit in integer minor units (cents)"`
	Currency      string `json:"currency" jsonschema:"ISO 4217 code, e.g. EUR"`
}

func (a *setBudgetArgs) Check() error {
	a.Category, a.Currency = strings.TrimSpace(a.Category), strings.TrimSpace(a.Currency)
	if err := tools.CheckLength("category", a.Category, 1, 100); err != nil {
		return err
	}
	if a.MonthlyAmount < 0 {
		return tools.ArgErrorf("monthly_amount", "must not be negative")
	}
	if !steward.IsCurrencyCode(a.Currency) {
		return tools.ArgErrorf("currency", "%s is not an ISO 4217 code such as EUR", tools.QuoteValue(a.Currency))
	}
	return nil
}

func setBudgetTool() tools.Tool {
	return tools.Say(tools.New("set_budget",
		"Set the monthly budget of a spending category, in integer minor units (cents).",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a setBudgetArgs) (any, error) {
			l, err := env.RequireLedger()
			if err != nil {
				return nil, err
			}
			b, err := l.SetBudget(ctx, steward.Budget{Category: a.Category, MonthlyMinor: a.MonthlyAmount, Currency: a.Currency})
			if err != nil {
				return nil, fmt.Errorf("set budget: %w", err)
			}
			return map[string]any{"budget": b, "monthly": steward.FormatMoney(b.MonthlyMinor, b.Currency)}, nil
		}), saySetBudget, saidSetBudget)
}

// recordExpenseArgs are the arguments of record_expense.
type recordExpenseArgs struct {
	Date     string `json:"date" jsonschema:"the day of the expense, YYYY-MM-DD"`
	Amount   int64  `json:"amount" jsonschema:"what was paid, in integer minor units (cents), positive"`
	Currency string `json:"currency" jsonschema:"ISO 4217 code, e.g. EUR"`
	Merchant string `json:"merchant" jsonschema:"who was paid"`
	Category string `json:"category,omitempty" jsonschema:"the category (expense account); Uncategorized when empty"`
	Account  string `json:"account" jsonschema:"the asset or liability account paid from (its name)"`

	date time.Time
}

func (a *recordExpenseArgs) Check() error {
	a.Merchant, a.Category, a.Account = strings.TrimSpace(a.Merchant), strings.TrimSpace(a.Category), strings.TrimSpace(a.Account)
	if a.Category == "" {
		a.Category = steward.Uncategorized
	}
	var err error
	if a.date, err = parseDay("date", a.Date); err != nil {
		return err
	}
	if a.date.IsZero() {
		return tools.ArgErrorf("date", "must not be empty")
	}
	if a.Amount <= 0 {
		return tools.ArgErrorf("amount", "must be a positive number of minor units")
	}
	if !steward.IsCurrencyCode(a.Currency) {
		return tools.ArgErrorf("currency", "%s is not an ISO 4217 code such as EUR", tools.QuoteValue(a.Currency))
	}
	for _, c := range []struct {
		field, s string
		max      int
	}{{"merchant", a.Merchant, 200}, {"category", a.Category, 100}, {"account", a.Account, 100}} {
		if err := tools.CheckLength(c.field, c.s, 1, c.max); err != nil {
			return err
		}
	}
	return nil
}

func recordExpenseTool() tools.Tool {
	t := tools.New("record_expense",
		"Record an expense paid from one of the owner's accounts, in integer minor units (cents). It moves money in the ledger, so the money caps apply and the owner is asked every time.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a recordExpenseArgs) (any, error) {
			l, err := env.RequireLedger()
			if err != nil {
				return nil, err
			}
			acc, err := l.Account(ctx, a.Account)
			if errors.Is(err, steward.ErrNotFound) {
				return nil, tools.ArgErrorf("account", "there is no account %s; list_accounts shows them", tools.QuoteValue(a.Account))
			}
			if err != nil {
				return nil, fmt.Errorf("record expense: %w", err)
			}
			if acc.Kind != steward.AccountAsset && acc.Kind != steward.AccountLiability {
				return nil, tools.ArgErrorf("account", "%s is an %s account; pay from an asset or liability account", tools.QuoteValue(a.Account), acc.Kind)
			}
			if acc.Currency != a.Currency {
				return nil, tools.ArgErrorf("currency", "account %s is kept in %s, not %s", tools.QuoteValue(a.Account), acc.Currency, a.Currency)
			}
			cat, err := category(ctx, l, a.Category, a.Currency)
			if err != nil {
				return nil, err
			}
			id, _, err := l.Record(ctx, steward.NewLedgerTxn{Date: a.date, Description: a.Merchant, Merchant: a.Merchant,
				Source: steward.SourceManual, Postings: []steward.Posting{
					{AccountID: acc.ID, AmountMinor: -a.Amount, Currency: a.Currency},
					{AccountID: cat.ID, AmountMinor: a.Amount, Currency: a.Currency}}})
			if err != nil {
				return nil, fmt.Errorf("record expense: %w", err)
			}
			env.UndoWith(steward.Inverse{Op: steward.UndoDeleteTransaction, ID: id})
			return map[string]any{"transaction": accounting.Transaction{ID: id, Date: a.date.Format(time.DateOnly), Description: a.Merchant,
				Merchant: a.Merchant, Account: acc.Name, Category: cat.Name, AmountMinor: -a.Amount, Currency: a.Currency,
				Amount: steward.FormatMoney(-a.Amount, a.Currency)}}, nil
		})
	t.Money = &tools.MoneyArgs{Amount: "amount", Currency: "currency"}
	t.Reversible = true
	return tools.Say(t, sayRecordExpense, saidRecordExpense)
}

func sayCategorize(a categorizeArgs) string {
	return "File " + tools.Count(len(a.TransactionIDs), "transaction") + " under " + tools.Quote(a.Category)
}

func saidCategorize(a categorizeArgs, o struct {
	Categorized int    `json:"categorized"`
	Category    string `json:"category"`
}) string {
	return "Filed " + tools.Count(o.Categorized, "transaction") + " under " + tools.Quote(cmp.Or(o.Category, a.Category))
}

func saySetBudget(a setBudgetArgs) string {
	return "Set the " + tools.Quote(a.Category) + " budget to " + tools.Money(a.MonthlyAmount, tools.Clip(a.Currency, 3)) + " a month"
}

func saidSetBudget(_ setBudgetArgs, o struct {
	Budget struct {
		Category     string `json:"category"`
		MonthlyMinor int64  `json:"monthly_minor"`
		Currency     string `json:"currency"`
	} `json:"budget"`
}) string {
	return "Budget " + tools.Quote(o.Budget.Category) + " set to " + tools.Money(o.Budget.MonthlyMinor, tools.Clip(o.Budget.Currency, 3)) + " a month"
}

func sayRecordExpense(a recordExpenseArgs) string {
	s := "Spend " + tools.Money(a.Amount, tools.Clip(a.Currency, 3)) + " at " + tools.Clip(strings.TrimSpace(a.Merchant), 40)
	if d := strings.TrimSpace(a.Date); d != "" {
		s += " on " + tools.Day(d)
	}
	if acc := strings.TrimSpace(a.Account); acc != "" {
		s += " from " + tools.Clip(acc, 30)
	}
	return s
}

func saidRecordExpense(_ recordExpenseArgs, o struct {
	Transaction struct {
		Merchant    string `json:"merchant"`
		AmountMinor int64  `json:"amount_minor"`
		Currency    string `json:"currency"`
	} `json:"transaction"`
}) string {
	x := o.Transaction
	return "Recorded " + tools.Money(-x.AmountMinor, tools.Clip(x.Currency, 3)) + " at " + tools.Clip(strings.TrimSpace(x.Merchant), 40)
}
