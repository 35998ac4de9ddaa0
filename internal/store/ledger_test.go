package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stewardhq/steward/internal/steward"
	. "github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// ledgerSeed is what seedLedger creates for one owner.
type ledgerSeed struct {
	bank, groceries steward.LedgerAccount
	txn             uuid.UUID
}

// seedLedger gives an owner an account pair, one balanced transaction and a budget.
func seedLedger(ctx context.Context, tx *Tx, name string) (ledgerSeed, error) {
	var sd ledgerSeed
	var err error
	if sd.bank, err = tx.Ledger.EnsureAccount(ctx, "Bank", steward.AccountAsset, "EUR"); err != nil {
		return sd, err
	}
	if sd.groceries, err = tx.Ledger.EnsureAccount(ctx, steward.Uncategorized, steward.AccountExpense, "EUR"); err != nil {
		return sd, err
	}
	sd.txn, _, err = tx.Ledger.Record(ctx, balanced(sd.bank, sd.groceries, 1250, "shop of "+name, "h-"+name))
	if err != nil {
		return sd, err
	}
	_, err = tx.Ledger.SetBudget(ctx, steward.Budget{Category: "Groceries", MonthlyMinor: 40000, Currency: "EUR"})
	return sd, err
}

// balanced is a spend of minor units from bank to category on 2026-03-02.
func balanced(bank, category steward.LedgerAccount, minor int64, desc, hash string) steward.NewLedgerTxn {
	return steward.NewLedgerTxn{Date: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), Description: desc, Merchant: desc,
		Source: steward.SourceImport, ImportHash: hash, Postings: []steward.Posting{
			{AccountID: bank.ID, AmountMinor: -minor, Currency: "EUR"},
			{AccountID: category.ID, AmountMinor: minor, Currency: "EUR"}}}
}

var ledgerYear = [2]time.Time{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}

// probeLedger: bob reads none of alice's ledger, and his writes naming her rows change nothing.
func probeLedger(t *testing.T, ctx context.Context, s *Store, a, b seeded) {
	covers("Ledger.Accounts", "Ledger.Account", "Ledger.EnsureAccount", "Ledger.Record", "Ledger.Entries",
		"Ledger.Categorize", "Ledger.SetBudget", "Ledger.Budgets")
	err := s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		accts, err := tx.Ledger.Accounts(ctx)
		if err != nil || len(accts) != 2 {
			t.Errorf("bob's accounts = %+v, %v; want his own 2", accts, err)
		}
		for _, acc := range accts {
			if acc.ID == a.ledger.bank.ID || acc.ID == a.ledger.groceries.ID {
				t.Errorf("bob sees alice's account %+v", acc)
			}
		}
		// Same names: bob's own accounts, never alice's.
		acc, err := tx.Ledger.Account(ctx, "Bank")
		if err != nil || acc.ID != b.ledger.bank.ID {
			t.Errorf("bob's Bank = %+v, %v; want his own %s", acc, err, b.ledger.bank.ID)
		}
		acc, err = tx.Ledger.EnsureAccount(ctx, "Bank", steward.AccountAsset, "EUR")
		if err != nil || acc.ID != b.ledger.bank.ID {
			t.Errorf("bob's ensured Bank = %+v, %v; want his own", acc, err)
		}
		// alice's import hash is not a duplicate for bob.
		if _, recorded, err := tx.Ledger.Record(ctx, balanced(b.ledger.bank, b.ledger.groceries, 5, "x", "h-alice")); err != nil || !recorded {
			t.Errorf("bob recording alice's hash: recorded=%v, %v; want recorded in his own book", recorded, err)
		}
		entries, err := tx.Ledger.Entries(ctx, ledgerYear[0], ledgerYear[1])
		if err != nil || len(entries) != 2 {
			t.Errorf("bob's entries = %+v, %v; want his own 2", entries, err)
		}
		for _, e := range entries {
			if e.ID == a.ledger.txn {
				t.Errorf("bob sees alice's transaction %+v", e)
			}
		}
		// Re-pointing alice's transaction to bob's account moves nothing.
		if n, err := tx.Ledger.Categorize(ctx, []uuid.UUID{a.ledger.txn}, b.ledger.groceries.ID); err != nil || n != 0 {
			t.Errorf("bob categorizing alice's transaction moved %d postings (%v), want 0", n, err)
		}
		// Re-pointing his own transaction to alice's account is refused.
		if _, err := tx.Ledger.Categorize(ctx, []uuid.UUID{b.ledger.txn}, a.ledger.groceries.ID); err == nil {
			t.Error("bob re-pointed his posting to alice's account")
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	err = s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		if _, err := tx.Ledger.SetBudget(ctx, steward.Budget{Category: "Groceries", MonthlyMinor: 1, Currency: "EUR"}); err != nil {
			return err
		}
		budgets, err := tx.Ledger.Budgets(ctx)
		if err != nil || len(budgets) != 1 || budgets[0].MonthlyMinor != 1 {
			t.Errorf("bob's budgets = %+v, %v; want his own one at 1", budgets, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// alice's book is as seeded.
	err = s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		entries, err := tx.Ledger.Entries(ctx, ledgerYear[0], ledgerYear[1])
		if err != nil || len(entries) != 1 || entries[0].ID != a.ledger.txn || entries[0].Category != steward.Uncategorized {
			t.Errorf("alice's entries after bob = %+v, %v", entries, err)
		}
		budgets, err := tx.Ledger.Budgets(ctx)
		if err != nil || len(budgets) != 1 || budgets[0].MonthlyMinor != 40000 {
			t.Errorf("alice's budgets after bob = %+v, %v", budgets, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var errRollback = errors.New("rollback")

// TestLedgerBalanceFromRawSQL: connected as steward_app with raw SQL, no Go code in between,
// the database refuses a transaction whose postings do not sum to zero, one with a single
// posting, and an update that unbalances a committed one; a balanced one commits.
func TestLedgerBalanceFromRawSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.Open(t, 2)
	owner, _, err := d.Door.CreateOwner(ctx, "ledger")
	if err != nil {
		t.Fatal(err)
	}
	var sd ledgerSeed
	if err := d.Store.WithOwner(ctx, owner.ID, func(tx *Tx) error { sd, err = seedLedger(ctx, tx, "x"); return err }); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, d.AppURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	run := func(stmts ...string) error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT set_config('app.owner_id', $1, true)", owner.ID.String()); err != nil {
				return err
			}
			ids := strings.NewReplacer("$1", "'"+owner.ID.String()+"'", "$2", "'"+sd.bank.ID.String()+"'", "$3", "'"+sd.groceries.ID.String()+"'")
			for _, s := range stmts {
				if _, err := tx.Exec(ctx, ids.Replace(s)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	const txn = `INSERT INTO ledger_transactions (id, owner_id, date, description, source)
		VALUES ('00000000-0000-0000-0000-0000000000aa', $1, '2026-03-03', 'raw', 'manual')`
	post := func(account string, minor string) string {
		return `INSERT INTO ledger_postings (owner_id, transaction_id, account_id, amount_minor, currency)
			VALUES ($1, '00000000-0000-0000-0000-0000000000aa', ` + account + `, ` + minor + `, 'EUR')`
	}
	refused := func(what string, err error) {
		t.Helper()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
			t.Errorf("%s: err = %v; want the balance check (23514)", what, err)
		}
	}
	refused("unbalanced by one cent", run(txn, post("$2", "-1000"), post("$3", "999")))
	refused("one posting", run(txn, post("$2", "-1000")))
	refused("no postings", run(txn))
	refused("wrong currency", run(txn, post("$2", "-1000"),
		`INSERT INTO ledger_postings (owner_id, transaction_id, account_id, amount_minor, currency)
			VALUES ($1, '00000000-0000-0000-0000-0000000000aa', $3, 1000, 'USD')`))
	if err := run(txn, post("$2", "-1000"), post("$3", "1000")); err != nil {
		t.Fatalf("balanced transaction refused: %v", err)
	}
	refused("unbalancing a committed transaction", run(`INSERT INTO ledger_postings (owner_id, transaction_id, account_id, amount_minor, currency)
		VALUES ($1, '00000000-0000-0000-0000-0000000000aa', $2, 5, 'EUR')`))
	// The app role may neither delete a leg nor change an amount.
	denied := func(what string, err error) {
		t.Helper()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s: err = %v; want permission denied (42501)", what, err)
		}
	}
	denied("changing an amount", run(`UPDATE ledger_postings SET amount_minor = 1 WHERE owner_id = $1`))
	denied("deleting one leg", run(`DELETE FROM ledger_postings WHERE owner_id = $1 AND account_id = $2
		AND transaction_id = '00000000-0000-0000-0000-0000000000aa'`))
	// Deleting the whole transaction takes its postings with it.
	if err := run(`DELETE FROM ledger_transactions WHERE owner_id = $1 AND id = '00000000-0000-0000-0000-0000000000aa'`); err != nil {
		t.Errorf("delete whole transaction: %v", err)
	}
}

// TestLedgerRecord: an import hash already in the book records nothing; categorizing
// re-points the expense leg and the transaction still balances.
func TestLedgerRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.Open(t, 2)
	owner, _, err := d.Door.CreateOwner(ctx, "ledger")
	if err != nil {
		t.Fatal(err)
	}
	err = d.Store.WithOwner(ctx, owner.ID, func(tx *Tx) error {
		sd, err := seedLedger(ctx, tx, "x")
		if err != nil {
			return err
		}
		if _, recorded, err := tx.Ledger.Record(ctx, balanced(sd.bank, sd.groceries, 1250, "again", "h-x")); err != nil || recorded {
			t.Errorf("same hash again: recorded=%v, %v; want a duplicate", recorded, err)
		}
		food, err := tx.Ledger.EnsureAccount(ctx, "Groceries", steward.AccountExpense, "EUR")
		if err != nil {
			return err
		}
		if n, err := tx.Ledger.Categorize(ctx, []uuid.UUID{sd.txn}, food.ID); err != nil || n != 1 {
			t.Errorf("categorize moved %d, %v; want 1", n, err)
		}
		entries, err := tx.Ledger.Entries(ctx, ledgerYear[0], ledgerYear[1])
		if err != nil || len(entries) != 1 || entries[0].Category != "Groceries" || entries[0].AmountMinor != -1250 || entries[0].Account != "Bank" {
			t.Errorf("entries = %+v, %v", entries, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
