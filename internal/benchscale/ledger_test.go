package benchscale

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// joinedEntries is LedgerEntries as it was first written: the window's transactions joined to
// their money-side postings, with each transaction's category from a subquery. It is the
// meaning of the report; the statement the store runs reads the postings per transaction
// so that its cost follows the window (docs/ARCHITECTURE.md §21).
const joinedEntries = `SELECT t.id, t.date, t.description, t.merchant, t.source, a.name AS account, p.amount_minor, p.currency,
    COALESCE((SELECT string_agg(ca.name, ', ' ORDER BY ca.name) FROM ledger_postings cp
        JOIN ledger_accounts ca ON ca.owner_id = cp.owner_id AND ca.id = cp.account_id
        WHERE cp.owner_id = t.owner_id AND cp.transaction_id = t.id AND ca.kind IN ('expense', 'income')), '')::text AS category
FROM ledger_transactions t
JOIN ledger_postings p ON p.owner_id = t.owner_id AND p.transaction_id = t.id
JOIN ledger_accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
WHERE t.owner_id = $1 AND a.kind IN ('asset', 'liability')
    AND t.date >= $2 AND t.date < $3
ORDER BY t.date, t.created_at, t.id`

// TestLedgerEntriesAreTheJoin: over a generated year (fill.go) plus a split purchase (two
// categories) and a transfer to a card (no category, two money-side postings), the ledger
// report's statement returns exactly the rows of the plain join, in its order, for a large,
// a medium and a small owner and windows of a day, 30 days and the whole year.
func TestLedgerEntriesAreTheJoin(t *testing.T) {
	t.Parallel()
	d := filled(t, 0.01)
	ctx := context.Background()
	su, err := pgx.Connect(ctx, d.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	owner := md5UUID("1/owner/1")
	account := func(name string) string { return md5UUID("1/account/1/" + name) }
	card, split, transfer := md5UUID("test/account/card"), md5UUID("test/txn/split"), md5UUID("test/txn/transfer")
	tx, err := su.Begin(ctx) // the book is checked at commit
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO ledger_accounts (id, owner_id, name, kind, currency) VALUES ($1, $2, 'Card', 'liability', 'EUR')`, []any{card, owner}},
		{`INSERT INTO ledger_transactions (id, owner_id, date, description, merchant, source) VALUES
			($1, $3, current_date - 3, 'Market and pharmacy', 'Market', 'manual'),
			($2, $3, current_date - 3, 'Card repayment', '', 'manual')`, []any{split, transfer, owner}},
		{`INSERT INTO ledger_postings (owner_id, transaction_id, account_id, amount_minor, currency) VALUES
			($1, $2, $4, -3000, 'EUR'), ($1, $2, $5, 1000, 'EUR'), ($1, $2, $6, 2000, 'EUR'),
			($1, $3, $4, -5000, 'EUR'), ($1, $3, $7, 5000, 'EUR')`,
			[]any{owner, split, transfer, account("Checking"), account("Utilities"), account("Groceries"), card}},
	} {
		if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	statement := sqlcQueries(t)["LedgerEntries"]
	app, err := pgx.Connect(ctx, d.AppURL)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(ctx)
	rows := func(owner, sql string, days int) []string {
		tx, err := app.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx) //nolint:errcheck // a read
		if _, err := tx.Exec(ctx, "SELECT set_config('app.owner_id', $1, true)", owner); err != nil {
			t.Fatal(err)
		}
		today := time.Now().UTC().Truncate(24 * time.Hour)
		rs, err := tx.Query(ctx, "SELECT row(e.*)::text FROM ("+sql+") e", owner, today.AddDate(0, 0, -days), today.AddDate(0, 0, 1))
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rs, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		// Rows of one transaction (a transfer's two money-side postings) share its sort key
		// and may come in either order: compared as sets.
		slices.Sort(out)
		return out
	}
	sawSplit, sawTransfer := false, false
	for _, rank := range []int{1, 10, Full(1).Scaled(0.01).Owners} {
		o := md5UUID(fmt.Sprintf("1/owner/%d", rank))
		for _, days := range []int{1, 30, 400} {
			want, got := rows(o, joinedEntries, days), rows(o, statement, days)
			if len(want) == 0 && days > 1 {
				t.Fatalf("owner %d, %d days: the join returns no rows: nothing compared", rank, days)
			}
			if !slices.Equal(got, want) {
				t.Errorf("owner %d, last %d days: LedgerEntries returns %d rows, the join %d", rank, days, len(got), len(want))
			}
			for _, r := range got {
				sawSplit = sawSplit || strings.Contains(r, "Groceries, Utilities")
				sawTransfer = sawTransfer || strings.Contains(r, "Card repayment")
			}
		}
	}
	if !sawSplit || !sawTransfer {
		t.Errorf("the split purchase (%v) or the card repayment (%v) is missing from the report", sawSplit, sawTransfer)
	}
}
