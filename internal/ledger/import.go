// Package ledger is the owner's double-entry book (docs/ARCHITECTURE.md §6): bank
// statement import into balanced transactions. The store's Ledger repository holds the rows;
// the database refuses any transaction whose postings do not sum to zero.
package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/accounting"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Service imports statements into an owner's ledger.
type Service struct {
	Store *store.Store
}

// ImportRequest is one statement to import into the asset account Account (created with
// Currency, default EUR, when the owner has none by that name).
type ImportRequest struct {
	Account    string
	Currency   string
	DateFormat string
	CSV        []byte
}

// ImportResult says what an import did: rows imported, rows already in the book, and the
// lines that could not be read.
type ImportResult struct {
	Imported   int         `json:"imported"`
	Duplicates int         `json:"duplicates"`
	Rejected   []Rejection `json:"rejected"`
}

// Import parses the statement and records each readable row as a transaction between the
// account and Uncategorized, in one database transaction: all of it or nothing. A row
// already imported (same account, date, amount, description and occurrence that day) is
// counted as a duplicate and not recorded again.
func (s *Service) Import(ctx context.Context, ownerID uuid.UUID, req ImportRequest) (ImportResult, error) {
	res := ImportResult{Rejected: []Rejection{}}
	name := strings.TrimSpace(req.Account)
	if name == "" || len([]rune(name)) > 100 {
		return res, steward.Errorf(steward.CodeInvalid, "account must be a name of 1 to 100 characters")
	}
	cur := strings.ToUpper(strings.TrimSpace(req.Currency))
	if cur == "" {
		cur = "EUR"
	}
	if len(cur) != 3 || strings.Trim(cur, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return res, steward.Errorf(steward.CodeInvalid, "currency must be a three-letter ISO 4217 code")
	}
	rows, rejected, err := Parse(req.CSV, req.DateFormat)
	if err != nil {
		return res, err
	}
	res.Rejected = append(res.Rejected, rejected...)
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		res.Imported, res.Duplicates = 0, 0
		acct, err := tx.Ledger.EnsureAccount(ctx, name, steward.AccountAsset, cur)
		if err != nil {
			return err
		}
		if acct.Kind != steward.AccountAsset && acct.Kind != steward.AccountLiability {
			return steward.Errorf(steward.CodeInvalid, "account %q is an %s account; import into an asset or liability account", name, acct.Kind)
		}
		uncat, err := uncategorized(ctx, tx, acct.Currency)
		if err != nil {
			return err
		}
		seen := map[string]int{}
		for _, r := range rows {
			key := rowKey(acct.ID, r)
			seen[key]++
			t := steward.NewLedgerTxn{Date: r.Date, Description: clipTo(r.Description, 1000), Merchant: Merchant(r.Description),
				Source: steward.SourceImport, ImportHash: hashOf(key, seen[key]), Postings: []steward.Posting{
					{AccountID: acct.ID, AmountMinor: r.AmountMinor, Currency: acct.Currency},
					{AccountID: uncat.ID, AmountMinor: -r.AmountMinor, Currency: acct.Currency}}}
			_, recorded, err := tx.Ledger.Record(ctx, t)
			if err != nil {
				return fmt.Errorf("line %d: %w", r.Line, err)
			}
			if recorded {
				res.Imported++
			} else {
				res.Duplicates++
			}
		}
		return nil
	})
	return res, err
}

// uncategorized is the expense account new money lands on, one per currency.
func uncategorized(ctx context.Context, tx *store.Tx, currency string) (steward.LedgerAccount, error) {
	a, err := tx.Ledger.EnsureAccount(ctx, steward.Uncategorized, steward.AccountExpense, currency)
	if err != nil || a.Currency == currency {
		return a, err
	}
	return tx.Ledger.EnsureAccount(ctx, steward.Uncategorized+" "+currency, steward.AccountExpense, currency)
}

// rowKey is what makes two statement rows the same: account, day, amount and description.
func rowKey(account uuid.UUID, r Row) string {
	return fmt.Sprintf("%s|%s|%d|%s", account, r.Date.Format("2006-01-02"), r.AmountMinor, strings.ToLower(r.Description))
}

// hashOf is the stable import hash of the n-th row with key in one statement, so genuinely
// identical rows on one day import as separate transactions and re-import as duplicates.
func hashOf(key string, n int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%d", key, n))
	return hex.EncodeToString(sum[:])
}

// Merchant is the payee part of a description: its first 60 characters of words, without
// card numbers and references that change from one charge to the next.
func Merchant(desc string) string {
	var words []string
	for _, w := range strings.Fields(desc) {
		digits := 0
		for _, c := range w {
			if c >= '0' && c <= '9' {
				digits++
			}
		}
		if digits*2 > len(w) {
			continue
		}
		words = append(words, w)
	}
	return clipTo(strings.Join(words, " "), 60)
}

func clipTo(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// Report sums the owner's money out and in between from and to (both included, YYYY-MM-DD)
// grouped by by (category, month, merchant or account), like the ledger_report tool.
func (s *Service) Report(ctx context.Context, ownerID uuid.UUID, from, to, by string) (accounting.Report, error) {
	f, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return accounting.Report{}, steward.Errorf(steward.CodeInvalid, "from must be a date, YYYY-MM-DD")
	}
	t, err := time.Parse(time.DateOnly, to)
	if err != nil {
		return accounting.Report{}, steward.Errorf(steward.CodeInvalid, "to must be a date, YYYY-MM-DD")
	}
	if t.Before(f) {
		return accounting.Report{}, steward.Errorf(steward.CodeInvalid, "to must not be before from")
	}
	if by == "" {
		by = accounting.ByCategory
	}
	end := t.AddDate(0, 0, 1)
	var entries []steward.LedgerEntry
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		entries, err = tx.Ledger.Entries(ctx, f, end)
		return err
	})
	if err != nil {
		return accounting.Report{}, fmt.Errorf("ledger report: %w", err)
	}
	return accounting.NewReport(entries, f, end, by)
}
