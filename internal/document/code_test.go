package document_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// TestRunCodeOverDocumentsAndLedger: run_code computes over a CSV document's rows, a text
// document and the ledger's transactions, without approval; the number reaches the model
// inside a data block, and a code error reaches it as an error it can correct.
func TestRunCodeOverDocumentsAndLedger(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	ctx := context.Background()
	csvDoc, err := e.docs.Upload(ctx, e.owner, "sales.csv", "text/csv", []byte("month,amount\nJan,120.50\nFeb,99.25\nMar,130.25\n"))
	if err != nil {
		t.Fatal(err)
	}
	txt, err := e.docs.Upload(ctx, e.owner, "note.txt", "text/plain", []byte("one two three four five"))
	if err != nil {
		t.Fatal(err)
	}
	err = e.db.Store.WithOwner(ctx, e.owner, func(tx *store.Tx) error {
		giro, err := tx.Ledger.EnsureAccount(ctx, "Giro", steward.AccountAsset, "EUR")
		if err != nil {
			return err
		}
		food, err := tx.Ledger.EnsureAccount(ctx, "Groceries", steward.AccountExpense, "EUR")
		if err != nil {
			return err
		}
		for i, amount := range []int64{4000, 6000, 11000} {
			_, _, err = tx.Ledger.Record(ctx, steward.NewLedgerTxn{Date: time.Date(2026, 3, 2+7*i, 0, 0, 0, 0, time.UTC),
				Description: "Supermarket", Merchant: "Rewe", Source: steward.SourceImport, Postings: []steward.Posting{
					{AccountID: giro.ID, AmountMinor: -amount, Currency: "EUR"}, {AccountID: food.ID, AmountMinor: amount, Currency: "EUR"}}})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	args := fmt.Sprintf(`{"code":"result = {'sales': sum([money.minor(r['amount']) for r in sales]), 'words': len(note.split()), 'avg': statistics.mean([-t['amount_minor'] for t in food])}",`+
		`"inputs":[{"name":"sales","csv":%q},{"name":"note","document":%q},{"name":"food","ledger":{"query":"rewe","from":"2026-03-01"}}]}`, csvDoc.ID, txt.ID)
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("c1", "run_code", args))),
		scripted.Reply(scripted.Calls(scripted.Call("c2", "run_code", `{"code":"while True:\n    pass"}`))),
		scripted.Reply(scripted.Text("Computed.")))
	if v := e.run(t, model, "compute my totals"); v.Status != steward.StatusCompleted {
		t.Fatalf("turn %+v, want completed without approval", v)
	}
	block := lastToolBlock(t, model.Requests()[1])
	if !strings.HasPrefix(block, `<data source="tool:run_code">`) || !strings.Contains(block, `"avg":7000.0`) ||
		!strings.Contains(block, `"sales":35000`) || !strings.Contains(block, `"words":5`) {
		t.Fatalf("the model got %s", block)
	}
	msgs := model.Requests()[2].Messages
	res := msgs[len(msgs)-1].Parts[0].ToolResult
	if res == nil || !res.IsError || !strings.Contains(string(res.Output), "steps") {
		t.Fatalf("the endless loop reached the model as %+v, want an error about its steps", res)
	}
}

// TestRunCodeOverAnEarlierResult: run_code takes the result an earlier call of the same turn
// returned (by its call id) as a value; a call that does not exist in the turn is an error
// the model reads.
func TestRunCodeOverAnEarlierResult(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	err := e.db.Store.WithOwner(context.Background(), e.owner, func(tx *store.Tx) error {
		for _, title := range []string{"milk", "bread", "eggs"} {
			if _, err := tx.Tasks.CreateTask(context.Background(), steward.NewTask{Title: title}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("c1", "list_tasks", `{}`))),
		scripted.Reply(scripted.Calls(scripted.Call("c2", "run_code",
			`{"code":"result = sorted([t['title'] for t in tasks['tasks']])","inputs":[{"name":"tasks","result":"c1"}]}`))),
		scripted.Reply(scripted.Calls(scripted.Call("c3", "run_code", `{"code":"x","inputs":[{"name":"x","result":"c9"}]}`))),
		scripted.Reply(scripted.Text("Done.")))
	if v := e.run(t, model, "sort my tasks"); v.Status != steward.StatusCompleted {
		t.Fatalf("turn %+v", v)
	}
	if block := lastToolBlock(t, model.Requests()[2]); !strings.Contains(block, `["bread","eggs","milk"]`) {
		t.Fatalf("the model got %s", block)
	}
	msgs := model.Requests()[3].Messages
	if res := msgs[len(msgs)-1].Parts[0].ToolResult; res == nil || !res.IsError || !strings.Contains(string(res.Output), "no earlier call") {
		t.Fatalf("an unknown call reached the model as %+v", res)
	}
}
