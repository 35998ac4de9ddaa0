package ledgertools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/ledgertools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// book is one owner's ledger in a real database: a Bank account in EUR and a Card in USD.
type book struct {
	s     *store.Store
	owner uuid.UUID
	reg   *tools.Registry
}

// TestLedgerTools runs the ledger tools' tests over one real database, an owner each.
func TestLedgerTools(t *testing.T) {
	d := testdb.Open(t, 4)
	for name, test := range map[string]func(*testing.T, book){
		"AreWhatTheyDeclare": areWhatTheyDeclare,
		"KeepTheBooks":       keepTheBooks,
		"RefuseBadArguments": refuseBadArguments,
		"SayWhatTheyDid":     sayWhatTheyDid,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newBook(t, d, name))
		})
	}
}

func newBook(t *testing.T, d testdb.Opened, name string) book {
	t.Helper()
	o, _ := d.Owner(t, name)
	reg, err := tools.NewRegistry(ledgertools.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	b := book{s: d.Store, owner: o.ID, reg: reg}
	err = b.s.WithOwner(context.Background(), o.ID, func(tx *store.Tx) error {
		if _, err := tx.Ledger.EnsureAccount(context.Background(), "Bank", steward.AccountAsset, "EUR"); err != nil {
			return err
		}
		_, err := tx.Ledger.EnsureAccount(context.Background(), "Card", steward.AccountLiability, "USD")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// call runs a ledger tool for the owner in an owner transaction over the store's Ledger
// (wrapped by wrap, when given) and returns its output and the inverse it handed for an undo.
func (b book) call(t *testing.T, name, args string, wrap func(tools.Ledger) tools.Ledger) (json.RawMessage, *steward.Inverse, error) {
	t.Helper()
	ctx := context.Background()
	var out json.RawMessage
	var inv *steward.Inverse
	var runErr error
	err := b.s.WithOwner(ctx, b.owner, func(tx *store.Tx) error {
		var l tools.Ledger = tx.Ledger
		if wrap != nil {
			l = wrap(l)
		}
		env := tools.Env{OwnerID: b.owner, Now: func() time.Time { return toolstest.Now }, Ledger: l,
			Undo: func(i steward.Inverse) { inv = &i }}
		out, runErr = b.reg.Run(ctx, env, name, json.RawMessage(args))
		return runErr // a failed call rolls back, as the loop's transaction does
	})
	if err != nil && !errors.Is(err, runErr) {
		t.Fatalf("%s: the transaction: %v", name, err)
	}
	return out, inv, runErr
}

// ok runs a call that must succeed and decodes its output into v.
func (b book) ok(t *testing.T, name, args string, v any) *steward.Inverse {
	t.Helper()
	out, inv, err := b.call(t, name, args, nil)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("%s output %s: %v", name, out, err)
		}
	}
	return inv
}

// readOnly is the owner's real ledger with its writes refused: a tool declared a read must
// run over it, and one declared a write must be refused by it.
type readOnly struct{ tools.Ledger }

var errWrote = errors.New("a write reached the ledger")

func (readOnly) EnsureAccount(context.Context, string, string, string) (steward.LedgerAccount, error) {
	return steward.LedgerAccount{}, fmt.Errorf("EnsureAccount: %w", errWrote)
}

func (readOnly) Record(context.Context, steward.NewLedgerTxn) (uuid.UUID, bool, error) {
	return uuid.Nil, false, fmt.Errorf("Record: %w", errWrote)
}

func (readOnly) Categorize(context.Context, []uuid.UUID, uuid.UUID) (int64, error) {
	return 0, fmt.Errorf("Categorize: %w", errWrote)
}

func (readOnly) SetBudget(context.Context, steward.Budget) (steward.Budget, error) {
	return steward.Budget{}, fmt.Errorf("SetBudget: %w", errWrote)
}

// spend records an expense and returns its transaction's id.
func (b book) spend(t *testing.T, day string, amount int, merchant string) string {
	t.Helper()
	var out struct {
		Transaction struct {
			ID string `json:"id"`
		} `json:"transaction"`
	}
	b.ok(t, "record_expense", fmt.Sprintf(`{"date":%q,"amount":%d,"currency":"EUR","merchant":%q,"account":"Bank"}`, day, amount, merchant), &out)
	return out.Transaction.ID
}

// areWhatTheyDeclare: each tool's declared kind and policy is the one meant —
// only record_expense moves money (the caps guard it), categorize and record_expense can be
// undone — and the declaration is true of what each does over a real ledger: every read
// runs with the ledger's writes refused, every write is stopped by that refusal, and a
// reversible write hands its inverse for the undo window while set_budget hands none.
func areWhatTheyDeclare(t *testing.T, b book) {
	id := b.spend(t, "2025-02-10", 1250, "Luna")
	want := map[string]string{
		"ledger_report":       "read",
		"search_transactions": "read",
		"list_accounts":       "read",
		"budget_status":       "read",
		"find_subscriptions":  "read",
		"find_anomalies":      "read",
		"categorize":          "write reversible",
		"set_budget":          "write",
		"record_expense":      "write money reversible",
	}
	args := map[string]string{
		"ledger_report":       `{"from":"2025-01-01","to":"2025-12-31","by":"category"}`,
		"search_transactions": `{"query":"luna"}`,
		"list_accounts":       `{}`,
		"budget_status":       `{}`,
		"find_subscriptions":  `{}`,
		"find_anomalies":      `{}`,
		"categorize":          `{"transaction_ids":["` + id + `"],"category":"Dining"}`,
		"set_budget":          `{"category":"Dining","monthly_amount":20000,"currency":"EUR"}`,
		"record_expense":      `{"date":"2025-02-11","amount":900,"currency":"EUR","merchant":"Sol","account":"Bank"}`,
	}
	if names := b.reg.Names(); len(names) != len(want) {
		t.Fatalf("the ledger's tools are %q; want the %d of this table", names, len(want))
	}
	for name, policy := range want {
		tool, ok := b.reg.Get(name)
		if !ok {
			t.Errorf("no tool %s", name)
			continue
		}
		if got := toolstest.Policy(tool); got != policy {
			t.Errorf("%s declares %q; want %q", name, got, policy)
		}
		_, inv, err := b.call(t, name, args[name], func(l tools.Ledger) tools.Ledger { return readOnly{l} })
		switch {
		case tool.Kind == steward.KindRead && err != nil:
			t.Errorf("%s, a read, failed with the ledger's writes refused: %v", name, err)
		case tool.Kind == steward.KindWrite && !errors.Is(err, errWrote):
			t.Errorf("%s, a write, = %v with the ledger's writes refused; want it stopped by the refusal", name, err)
		}
		if inv != nil && err == nil {
			t.Errorf("%s handed an inverse without writing", name)
		}
		if tool.Kind == steward.KindWrite {
			inv := b.ok(t, name, args[name], nil)
			if (inv != nil) != tool.Reversible {
				t.Errorf("%s: inverse %+v; a tool declared reversible=%v must hand one exactly when it is", name, inv, tool.Reversible)
			}
		}
	}
	if money := func() *tools.MoneyArgs { tool, _ := b.reg.Get("record_expense"); return tool.Money }(); money == nil ||
		money.Amount != "amount" || money.Currency != "currency" {
		t.Errorf("record_expense's money arguments = %+v; want amount and currency, the arguments the caps read", money)
	}
}

// keepTheBooks: what an owner asks for in words, end to end over a real
// ledger — record an expense, find it, file it under a category, see the report, set and
// check a budget, see the account's balance — and each undo inverse names what to revert.
func keepTheBooks(t *testing.T, b book) {
	luna := b.spend(t, "2025-03-01", 1250, "Luna Cafe")
	b.spend(t, "2025-03-01", 4000, "Hardware Store")

	var found struct {
		Transactions []struct {
			ID, Merchant, Category, Amount string
		} `json:"transactions"`
		Truncated bool `json:"truncated"`
	}
	b.ok(t, "search_transactions", `{"query":"luna","from":"2025-03-01","to":"2025-03-01"}`, &found)
	if len(found.Transactions) != 1 || found.Transactions[0].ID != luna || found.Transactions[0].Category != steward.Uncategorized ||
		found.Transactions[0].Amount != "-12.50 EUR" {
		t.Fatalf("search for luna = %+v; want the one Luna Cafe expense of -12.50 EUR, uncategorized", found)
	}

	inv := b.ok(t, "categorize", `{"transaction_ids":["`+luna+`", "`+luna+`"],"category":"Dining"}`, nil)
	if inv == nil || inv.Op != steward.UndoRecategorize || len(inv.Moves) != 1 || inv.Moves[0].Category != steward.Uncategorized ||
		len(inv.Moves[0].Transactions) != 1 || inv.Moves[0].Transactions[0].String() != luna {
		t.Errorf("categorize's inverse = %+v; want Luna Cafe moved back to %s", inv, steward.Uncategorized)
	}

	var report struct {
		Lines []struct {
			Key      string `json:"key"`
			OutMinor int64  `json:"out_minor"`
		} `json:"lines"`
	}
	b.ok(t, "ledger_report", `{"from":"2025-03-01","to":"2025-03-31","by":"category"}`, &report)
	got := map[string]int64{}
	for _, l := range report.Lines {
		got[l.Key] = l.OutMinor
	}
	if len(got) != 2 || got["Dining"] != 1250 || got[steward.Uncategorized] != 4000 {
		t.Errorf("March by category = %+v; want Dining 1250 and %s 4000", report.Lines, steward.Uncategorized)
	}

	b.ok(t, "set_budget", `{"category":"Dining","monthly_amount":1000,"currency":"EUR"}`, nil)
	var status struct {
		Month   string `json:"month"`
		Budgets []struct {
			Category       string `json:"category"`
			SpentMinor     int64  `json:"spent_minor"`
			RemainingMinor int64  `json:"remaining_minor"`
			Over           bool   `json:"over"`
		} `json:"budgets"`
	}
	b.ok(t, "budget_status", `{}`, &status) // this month: the clock's March 2025
	if status.Month != "2025-03" || len(status.Budgets) != 1 || status.Budgets[0].SpentMinor != 1250 ||
		status.Budgets[0].RemainingMinor != -250 || !status.Budgets[0].Over {
		t.Errorf("budget status = %+v; want March 2025, Dining 1250 spent of 1000, over by 250", status)
	}
	b.ok(t, "budget_status", `{"month":"2025-02"}`, &status)
	if status.Month != "2025-02" || len(status.Budgets) != 1 || status.Budgets[0].SpentMinor != 0 {
		t.Errorf("February's budget status = %+v; want nothing spent", status)
	}

	var accounts struct {
		Accounts []struct {
			Name         string `json:"name"`
			BalanceMinor *int64 `json:"balance_minor"`
		} `json:"accounts"`
	}
	b.ok(t, "list_accounts", `{}`, &accounts)
	balance := map[string]int64{}
	for _, a := range accounts.Accounts {
		if a.BalanceMinor != nil {
			balance[a.Name] = *a.BalanceMinor
		}
	}
	if balance["Bank"] != -5250 || balance["Card"] != 0 {
		t.Errorf("balances = %+v; want Bank at -5250 and Card at 0", balance)
	}
}

// refuseBadArguments: a mistake in the arguments is an *ArgError naming the
// field in words the model can correct — never a panic or a failure of the tool — and it
// leaves the ledger as it was.
func refuseBadArguments(t *testing.T, b book) {
	luna := b.spend(t, "2025-03-01", 1250, "Luna")
	many := make([]string, 201)
	for i := range many {
		many[i] = `"` + uuid.NewString() + `"`
	}
	for _, c := range []struct{ tool, args, field, says string }{
		{"record_expense", `{"date":"2025-03-01","amount":0,"currency":"EUR","merchant":"x","account":"Bank"}`, "amount", "positive"},
		{"record_expense", `{"date":"2025-03-01","amount":-5,"currency":"EUR","merchant":"x","account":"Bank"}`, "amount", "positive"},
		{"record_expense", `{"date":"1 March","amount":5,"currency":"EUR","merchant":"x","account":"Bank"}`, "date", "YYYY-MM-DD"},
		{"record_expense", `{"date":"","amount":5,"currency":"EUR","merchant":"x","account":"Bank"}`, "date", "must not be empty"},
		{"record_expense", `{"date":"2025-03-01","amount":5,"currency":"euro","merchant":"x","account":"Bank"}`, "currency", "ISO 4217"},
		{"record_expense", `{"date":"2025-03-01","amount":5,"currency":"EUR","merchant":"  ","account":"Bank"}`, "merchant", "must not be empty"},
		{"record_expense", `{"date":"2025-03-01","amount":5,"currency":"EUR","merchant":"x","account":"Savings"}`, "account", "no account"},
		{"record_expense", `{"date":"2025-03-01","amount":5,"currency":"EUR","merchant":"x","account":"Card"}`, "currency", "kept in USD"},
		{"record_expense", `{"date":"2025-03-01","amount":5,"currency":"EUR","merchant":"x","account":"Uncategorized"}`, "account", "asset or liability"},
		{"record_expense", `{"date":"2025-03-01","amount":5,"currency":"EUR","merchant":"x","account":"Bank","category":"Bank"}`, "category", "not a category"},
		{"record_expense", `{"date":"2025-03-01","amount":"5","currency":"EUR","merchant":"x","account":"Bank"}`, "", "amount"},
		{"record_expense", `{"date":"2025-03-01","amount":5,"currency":"EUR","merchant":"x","account":"Bank","tip":1}`, "", "tip"},
		{"record_expense", `not json`, "", ""},
		{"categorize", `{"transaction_ids":[],"category":"Dining"}`, "transaction_ids", "1 to 200"},
		{"categorize", `{"transaction_ids":[` + strings.Join(many, ",") + `],"category":"Dining"}`, "transaction_ids", "1 to 200"},
		{"categorize", `{"transaction_ids":["t-1"],"category":"Dining"}`, "transaction_ids", "not a transaction id"},
		{"categorize", `{"transaction_ids":["` + uuid.NewString() + `"],"category":"Dining"}`, "transaction_ids", "1 of the 1 ids are not transactions"},
		{"categorize", `{"transaction_ids":["` + luna + `"],"category":" "}`, "category", "must not be empty"},
		{"categorize", `{"transaction_ids":["` + luna + `"],"category":"Bank"}`, "category", "not a category"},
		{"set_budget", `{"category":"Dining","monthly_amount":-1,"currency":"EUR"}`, "monthly_amount", "negative"},
		{"set_budget", `{"category":"Dining","monthly_amount":100,"currency":"E"}`, "currency", "ISO 4217"},
		{"ledger_report", `{"from":"2025-03-31","to":"2025-03-01","by":"month"}`, "to", "before from"},
		{"ledger_report", `{"from":"","to":"2025-03-01","by":"month"}`, "from", "must not be empty"},
		{"ledger_report", `{"from":"2025-03-01","to":"2025-03-31","by":"weekday"}`, "", "by"},
		{"search_transactions", `{"min":500,"max":100}`, "max", "below min"},
		{"search_transactions", `{"from":"2025-13-01"}`, "from", "not a date"},
		{"search_transactions", `{"query":"` + strings.Repeat("q", 201) + `"}`, "query", "too long"},
		{"budget_status", `{"month":"March"}`, "month", "YYYY-MM"},
		{"find_anomalies", `{"from":"2025-04-01","to":"2025-03-01"}`, "to", "before from"},
	} {
		_, inv, err := b.call(t, c.tool, c.args, nil)
		var ae *tools.ArgError
		if !errors.As(err, &ae) {
			t.Errorf("%s(%s) = %v; want an *ArgError", c.tool, c.args, err)
			continue
		}
		if ae.Tool != c.tool || ae.Field != c.field || !strings.Contains(ae.Error(), c.says) {
			t.Errorf("%s(%s) = %q (field %q); want it to name %q and say %q", c.tool, c.args, ae, ae.Field, c.field, c.says)
		}
		if inv != nil {
			t.Errorf("%s(%s) refused its arguments but handed an inverse %+v", c.tool, c.args, inv)
		}
	}
	var found struct {
		Transactions []json.RawMessage `json:"transactions"`
	}
	b.ok(t, "search_transactions", `{}`, &found)
	if len(found.Transactions) != 1 {
		t.Errorf("after the refused calls the ledger holds %d transactions; want the one it had", len(found.Transactions))
	}
	var status struct {
		Budgets []json.RawMessage `json:"budgets"`
	}
	b.ok(t, "budget_status", `{}`, &status)
	if len(status.Budgets) != 0 {
		t.Errorf("after the refused calls there are %d budgets; want none", len(status.Budgets))
	}
}

// TestLedgerToolsWithoutALedger: a caller that gives no ledger gets an error that says so,
// from every tool, not a panic.
func TestLedgerToolsWithoutALedger(t *testing.T) {
	reg, err := tools.NewRegistry(ledgertools.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]string{
		"ledger_report":  `{"from":"2025-01-01","to":"2025-01-31","by":"month"}`,
		"categorize":     `{"transaction_ids":["` + uuid.NewString() + `"],"category":"Dining"}`,
		"set_budget":     `{"category":"Dining","monthly_amount":1,"currency":"EUR"}`,
		"record_expense": `{"date":"2025-03-01","amount":5,"currency":"EUR","merchant":"x","account":"Bank"}`,
	}
	for _, name := range reg.Names() {
		a, ok := args[name]
		if !ok {
			a = `{}`
		}
		if _, err := reg.Run(context.Background(), tools.Env{}, name, json.RawMessage(a)); err == nil || !strings.Contains(err.Error(), "ledger") {
			t.Errorf("%s without a ledger = %v; want an error naming the missing ledger", name, err)
		}
	}
}

// sayWhatTheyDid: the one-line summary of each result, as the owner reads it
// in the activity feed, is in words — no Go identifier in it.
func sayWhatTheyDid(t *testing.T, b book) {
	b.spend(t, "2025-03-01", 1250, "Luna")
	for _, c := range []struct{ tool, args, want string }{
		{"ledger_report", `{"from":"2025-03-01","to":"2025-03-31","by":"category"}`, "Report of 1 line"},
		{"search_transactions", `{"query":"luna"}`, "Found 1 transaction"},
		{"list_accounts", `{}`, "Found 3 accounts"},
		{"budget_status", `{}`, "Found no budgets"},
		{"find_subscriptions", `{}`, "Found no recurring payments"},
		{"find_anomalies", `{}`, "Found no unusual transactions"},
	} {
		out, _, err := b.call(t, c.tool, c.args, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if got := b.reg.SayResult(c.tool, json.RawMessage(c.args), out, false); got != c.want {
			t.Errorf("%s's result reads %q; want %q", c.tool, got, c.want)
		}
	}
}
