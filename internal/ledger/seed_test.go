package ledger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/accounting"
	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// run calls a ledger tool for owner over the store's Ledger repository and decodes its output.
func run(t *testing.T, s *store.Store, owner uuid.UUID, name, args string, out any) error {
	t.Helper()
	ctx := context.Background()
	return s.WithOwner(ctx, owner, func(tx *store.Tx) error {
		raw, err := toolstest.Registry().Run(ctx, tools.Env{OwnerID: owner, Ledger: tx.Ledger}, name, json.RawMessage(args))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s output %s: %v", name, raw, err)
		}
		return nil
	})
}

func newOwner(t *testing.T, d testdb.Opened, name string) uuid.UUID {
	t.Helper()
	o, _, err := d.Door.CreateOwner(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return o.ID
}

// score is precision and recall of found against want (sets of keys).
func score(found, want []string) (precision, recall float64, missed, extra []string) {
	w := map[string]bool{}
	for _, k := range want {
		w[k] = true
	}
	hit, f := 0, map[string]bool{}
	for _, k := range found {
		f[k] = true
		if w[k] {
			hit++
		} else {
			extra = append(extra, k)
		}
	}
	for _, k := range want {
		if !f[k] {
			missed = append(missed, k)
		}
	}
	precision, recall = 1, 1
	if len(found) > 0 {
		precision = float64(hit) / float64(len(found))
	}
	if len(want) > 0 {
		recall = float64(hit) / float64(len(want))
	}
	return precision, recall, missed, extra
}

// TestSeedAnswerKey: the seeded history is what the key says — find_subscriptions and
// find_anomalies recover every planted item (recall 1) with precision at least 0.8 — and
// another owner sees none of it.
func TestSeedAnswerKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.Open(t, 2)
	svc := &ledger.Service{Store: d.Store}
	alice, bob := newOwner(t, d, "alice"), newOwner(t, d, "bob")

	res, err := svc.Seed(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	hist := ledger.SeedHistory()
	if res.Recorded != len(hist) || res.Duplicates != 0 {
		t.Fatalf("seed = %+v, want %d recorded", res, len(hist))
	}
	if share := float64(res.Uncategorized) / float64(res.Recorded); share < 0.06 || share > 0.10 {
		t.Errorf("uncategorised = %d of %d (%.1f %%), want about 8 %%", res.Uncategorized, res.Recorded, 100*share)
	}
	t.Logf("seeded %d transactions, %d uncategorised", res.Recorded, res.Uncategorized)
	if again, err := svc.Seed(ctx, alice); err != nil || again.Recorded != 0 || again.Duplicates != len(hist) {
		t.Errorf("seed again = %+v, %v; want nothing recorded", again, err)
	}

	var subs struct{ Subscriptions []accounting.Subscription }
	if err := run(t, d.Store, alice, "find_subscriptions", `{}`, &subs); err != nil {
		t.Fatal(err)
	}
	var found, want []string
	for _, s := range subs.Subscriptions {
		found = append(found, fmt.Sprintf("%s|%s|%d|%s", s.Merchant, s.Cadence, s.AmountMinor, s.Next))
	}
	for _, s := range ledger.SeedKey.Subscriptions {
		want = append(want, fmt.Sprintf("%s|%s|%d|%s", s.Merchant, s.Cadence, s.AmountMinor, s.Next.Format(time.DateOnly)))
	}
	p, r, missed, extra := score(found, want)
	t.Logf("find_subscriptions: precision %.2f, recall %.2f (%d found, %d planted; missed %v, extra %v)", p, r, len(found), len(want), missed, extra)
	if r != 1 || p < 0.8 {
		t.Errorf("find_subscriptions: precision %.2f, recall %.2f; missed %v, extra %v", p, r, missed, extra)
	}

	var anoms struct{ Anomalies []accounting.Anomaly }
	if err := run(t, d.Store, alice, "find_anomalies", `{}`, &anoms); err != nil {
		t.Fatal(err)
	}
	found, want = nil, nil
	for _, a := range anoms.Anomalies {
		found = append(found, fmt.Sprintf("%s|%s|%s|%d", a.Kind, a.Transaction.Date, a.Transaction.Merchant, a.Transaction.AmountMinor))
	}
	for _, a := range ledger.SeedKey.Anomalies {
		want = append(want, fmt.Sprintf("%s|%s|%s|%d", a.Kind, a.Date.Format(time.DateOnly), a.Merchant, a.AmountMinor))
	}
	p, r, missed, extra = score(found, want)
	t.Logf("find_anomalies: precision %.2f, recall %.2f (%d found, %d planted; missed %v, extra %v)", p, r, len(found), len(want), missed, extra)
	if r != 1 || p < 0.8 {
		t.Errorf("find_anomalies: precision %.2f, recall %.2f; missed %v, extra %v", p, r, missed, extra)
	}

	// A date range keeps only what falls in it: March holds the duplicate charge alone.
	if err := run(t, d.Store, alice, "find_anomalies", `{"from":"2026-03-01","to":"2026-03-31"}`, &anoms); err != nil {
		t.Fatal(err)
	}
	if len(anoms.Anomalies) != 1 || anoms.Anomalies[0].Kind != accounting.AnomalyDuplicate {
		t.Errorf("March anomalies = %+v, want the duplicate charge", anoms.Anomalies)
	}

	// The hostile descriptions are in the book as plain text.
	var search struct{ Transactions []accounting.Transaction }
	if err := run(t, d.Store, alice, "search_transactions", `{"query":"ignore previous instructions"}`, &search); err != nil {
		t.Fatal(err)
	}
	if len(search.Transactions) != 1 || search.Transactions[0].Description != ledger.SeedHostile[0] ||
		search.Transactions[0].Category != steward.Uncategorized {
		t.Errorf("hostile transaction = %+v", search.Transactions)
	}

	// Bob sees none of Alice's history.
	if err := run(t, d.Store, bob, "find_subscriptions", `{}`, &subs); err != nil || len(subs.Subscriptions) != 0 {
		t.Errorf("bob's subscriptions = %+v, %v; want none", subs.Subscriptions, err)
	}
	if err := run(t, d.Store, bob, "find_anomalies", `{}`, &anoms); err != nil || len(anoms.Anomalies) != 0 {
		t.Errorf("bob's anomalies = %+v, %v; want none", anoms.Anomalies, err)
	}
}

// entries lists every entry of owner's ledger.
func entries(t *testing.T, s *store.Store, owner uuid.UUID) []steward.LedgerEntry {
	t.Helper()
	var out []steward.LedgerEntry
	err := s.WithOwner(context.Background(), owner, func(tx *store.Tx) error {
		var err error
		out, err = tx.Ledger.Entries(context.Background(), time.Time{}, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCategorizeOtherOwnersTransactions: categorize with another owner's transaction ids is
// refused and moves nothing, through the tool and through the repository directly.
func TestCategorizeOtherOwnersTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.Open(t, 2)
	alice, bob := newOwner(t, d, "alice"), newOwner(t, d, "bob")
	if _, err := (&ledger.Service{Store: d.Store}).Seed(ctx, alice); err != nil {
		t.Fatal(err)
	}
	if _, err := (&ledger.Service{Store: d.Store}).Import(ctx, bob, ledger.ImportRequest{Account: "Bank",
		CSV: []byte("Date,Description,Amount\n2026-03-01,Coffee,-3.20\n")}); err != nil {
		t.Fatal(err)
	}
	before := entries(t, d.Store, alice)
	var ids []string
	var uids []uuid.UUID
	for _, e := range before {
		if e.Category == steward.Uncategorized {
			ids, uids = append(ids, `"`+e.ID.String()+`"`), append(uids, e.ID)
		}
	}
	if len(ids) == 0 {
		t.Fatal("the seed left nothing uncategorised")
	}
	var out map[string]any
	err := run(t, d.Store, bob, "categorize", `{"transaction_ids":[`+strings.Join(ids, ",")+`],"category":"Stolen"}`, &out)
	if err == nil || !strings.Contains(err.Error(), "not transactions of the ledger") {
		t.Errorf("bob categorizes alice's transactions: %v, %v; want refused", out, err)
	}
	err = d.Store.WithOwner(ctx, bob, func(tx *store.Tx) error {
		acc, err := tx.Ledger.EnsureAccount(ctx, "Stolen", steward.AccountExpense, "EUR")
		if err != nil {
			return err
		}
		n, err := tx.Ledger.Categorize(ctx, uids, acc.ID)
		if err != nil || n != 0 {
			t.Errorf("repository categorize across owners = %d, %v; want 0 moved", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after := entries(t, d.Store, alice)
	if len(after) != len(before) {
		t.Fatalf("alice has %d entries, had %d", len(after), len(before))
	}
	for i := range before {
		if before[i] != after[i] {
			t.Errorf("alice's entry changed: %+v → %+v", before[i], after[i])
		}
	}
	// Alice herself can: her uncategorised transactions move to the category.
	if err := run(t, d.Store, alice, "categorize", `{"transaction_ids":[`+ids[0]+`],"category":"Misc"}`, &out); err != nil || out["categorized"] != float64(1) {
		t.Errorf("alice categorizes her own: %v, %v", out, err)
	}
}

// TestBudgetRoundTrip: set_budget then budget_status shows the budget, what the seeded month
// spent in that category (summed here from the history) and what remains; setting it again
// replaces it.
func TestBudgetRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.Open(t, 2)
	alice, bob := newOwner(t, d, "alice"), newOwner(t, d, "bob")
	if _, err := (&ledger.Service{Store: d.Store}).Seed(ctx, alice); err != nil {
		t.Fatal(err)
	}
	var spent int64
	for _, h := range ledger.SeedHistory() {
		if h.Category == "Groceries" && h.Date.Month() == time.March {
			spent -= h.AmountMinor
		}
	}
	type status struct {
		Month   string
		Budgets []accounting.BudgetLine
	}
	for _, amount := range []int64{40000, 25000} {
		var set map[string]any
		if err := run(t, d.Store, alice, "set_budget", fmt.Sprintf(`{"category":"Groceries","monthly_amount":%d,"currency":"EUR"}`, amount), &set); err != nil {
			t.Fatal(err)
		}
		var st status
		if err := run(t, d.Store, alice, "budget_status", `{"month":"2026-03"}`, &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Budgets) != 1 {
			t.Fatalf("budget_status = %+v, want one budget", st)
		}
		b := st.Budgets[0]
		if st.Month != "2026-03" || b.Category != "Groceries" || b.BudgetMinor != amount || b.SpentMinor != spent ||
			b.RemainingMinor != amount-spent || b.Over != (spent > amount) {
			t.Errorf("budget %d: status = %+v, want spent %d", amount, b, spent)
		}
	}
	var st status
	if err := run(t, d.Store, bob, "budget_status", `{"month":"2026-03"}`, &st); err != nil || len(st.Budgets) != 0 {
		t.Errorf("bob's budgets = %+v, %v; want none", st, err)
	}
}
