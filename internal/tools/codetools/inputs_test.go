package codetools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/script"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/codetools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// readOnly is the owner's real ledger with its writes refused: run_code, a read, must
// compute over it.
type readOnly struct{ tools.Ledger }

var errWrote = errors.New("a write reached the ledger")

func (readOnly) EnsureAccount(context.Context, string, string, string) (steward.LedgerAccount, error) {
	return steward.LedgerAccount{}, errWrote
}

func (readOnly) Record(context.Context, steward.NewLedgerTxn) (uuid.UUID, bool, error) {
	return uuid.Nil, false, errWrote
}

func (readOnly) Categorize(context.Context, []uuid.UUID, uuid.UUID) (int64, error) {
	return 0, errWrote
}

func (readOnly) SetBudget(context.Context, steward.Budget) (steward.Budget, error) {
	return steward.Budget{}, errWrote
}

// bench is one owner's data in a real database — three expenses in the ledger, a CSV
// document — and run_code reading documents through the real document service.
type bench struct {
	s     *store.Store
	owner uuid.UUID
	csv   string
	reg   *tools.Registry
}

func newBench(t *testing.T) bench {
	t.Helper()
	ctx := context.Background()
	d := testdb.Open(t, 2)
	o, _ := d.Owner(t, "alice")
	docs := &document.Service{Store: d.Store, Embedder: memory.Offline{}}
	doc, err := docs.Upload(ctx, o.ID, "meters.csv", "text/csv", []byte("month,kwh\nJan,310\nFeb,290\nMar,275\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = d.Store.WithOwner(ctx, o.ID, func(tx *store.Tx) error {
		bank, err := tx.Ledger.EnsureAccount(ctx, "Bank", steward.AccountAsset, "EUR")
		if err != nil {
			return err
		}
		food, err := tx.Ledger.EnsureAccount(ctx, "Food", steward.AccountExpense, "EUR")
		if err != nil {
			return err
		}
		for i, spend := range []struct {
			merchant string
			minor    int64
		}{{"Bakery", 450}, {"Market", 2310}, {"Bakery", 380}} {
			_, _, err := tx.Ledger.Record(ctx, steward.NewLedgerTxn{Date: time.Date(2026, 3, 2+i, 0, 0, 0, 0, time.UTC),
				Description: spend.merchant, Merchant: spend.merchant, Source: steward.SourceManual, Postings: []steward.Posting{
					{AccountID: bank.ID, AmountMinor: -spend.minor, Currency: "EUR"},
					{AccountID: food.ID, AmountMinor: spend.minor, Currency: "EUR"}}})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(codetools.Tools(docs)...)
	if err != nil {
		t.Fatal(err)
	}
	return bench{s: d.Store, owner: o.ID, csv: doc.ID.String(), reg: reg}
}

// run calls run_code for the owner inside an owner transaction, over the ledger with its
// writes refused.
func (b bench) run(t *testing.T, args string) (script.Result, error) {
	t.Helper()
	ctx := context.Background()
	var res script.Result
	var runErr error
	err := b.s.WithOwner(ctx, b.owner, func(tx *store.Tx) error {
		out, err := b.reg.Run(ctx, tools.Env{OwnerID: b.owner, Ledger: readOnly{tx.Ledger}}, "run_code", json.RawMessage(args))
		if runErr = err; err == nil {
			runErr = json.Unmarshal(out, &res)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, runErr
}

// TestRunCodeOverTheOwnersData: run_code is a read (untrusted: what it computes from comes
// from documents and the ledger) and computes over the owner's data without writing: the
// ledger's transactions by search_transactions' filters, a CSV document's rows; its
// mistakes are *ArgErrors naming the input or the code.
func TestRunCodeOverTheOwnersData(t *testing.T) {
	b := newBench(t)
	tool, _ := b.reg.Get("run_code")
	if got := toolstest.Policy(tool); got != "read untrusted" {
		t.Errorf("run_code declares %q; want \"read untrusted\"", got)
	}

	res, err := b.run(t, `{"code":"result = sum([r['amount_minor'] for r in spends])","inputs":[{"name":"spends","ledger":{"query":"bakery","from":"2026-03-01","to":"2026-03-31"}}]}`)
	if err != nil || string(res.Result) != "-830" {
		t.Errorf("the bakery's total = %s, %v; want -830 (two spends, money out)", res.Result, err)
	}
	res, err = b.run(t, fmt.Sprintf(`{"code":"print(len(rows))\nresult = max([int(r['kwh']) for r in rows])","inputs":[{"name":"rows","csv":%q}]}`, b.csv))
	if err != nil || string(res.Result) != "310" || strings.TrimSpace(res.Printed) != "3" {
		t.Errorf("the meter readings = %+v, %v; want 3 rows printed and 310 the most", res, err)
	}
	if said := b.reg.SayResult("run_code", nil, json.RawMessage(`{"result":310}`), false); said != "Computed 310" {
		t.Errorf("run_code's result reads %q", said)
	}

	ledger := `{"name":"x","ledger":{}}`
	for _, c := range []struct{ args, field, says string }{
		{`{"code":"  "}`, "code", "must not be empty"},
		{`{"code":"` + strings.Repeat("1", script.MaxCode+1) + `"}`, "code", "at most"},
		{`{"code":"1","inputs":[` + strings.Repeat(ledger+",", 8) + ledger + `]}`, "inputs", "at most 8"},
		{`{"code":"1","inputs":[{"name":"1x","ledger":{}}]}`, "inputs[0].name", "variable name"},
		{`{"code":"1","inputs":[{"name":"a","ledger":{}},{"name":"a","ledger":{}}]}`, "inputs[1].name", "distinct"},
		{`{"code":"1","inputs":[{"name":"a"}]}`, "inputs[0]", "exactly one"},
		{`{"code":"1","inputs":[{"name":"a","ledger":{},"csv":"` + b.csv + `"}]}`, "inputs[0]", "exactly one"},
		{`{"code":"1","inputs":[{"name":"a","document":"notes"}]}`, "inputs[0].document", ""},
		{`{"code":"1","inputs":[{"name":"a","document":"` + uuid.NewString() + `"}]}`, "inputs[0]", "list_documents"},
		{`{"code":"1","inputs":[{"name":"a","ledger":{"from":"March"}}]}`, "inputs[0].ledger.from", "YYYY-MM-DD"},
		{`{"code":"1","inputs":[{"name":"a","ledger":{"from":"2026-03-02","to":"2026-03-01"}}]}`, "inputs[0].ledger.to", "before from"},
		{`{"code":"result = 1 / 0"}`, "code", "division by zero"},
		{`{"code":"load('os', 'system')"}`, "code", ""},
	} {
		_, err := b.run(t, c.args)
		ae, ok := errors.AsType[*tools.ArgError](err)
		if !ok {
			t.Errorf("run_code(%.80s) = %v; want an *ArgError", c.args, err)
			continue
		}
		if ae.Field != c.field || !strings.Contains(ae.Error(), c.says) {
			t.Errorf("run_code(%.80s) = %q (field %q); want field %q and %q", c.args, ae, ae.Field, c.field, c.says)
		}
	}
}
