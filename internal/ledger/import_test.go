package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// Three statement shapes; want is the sum of each file's amounts in cents, added by hand.
var shapes = []struct {
	name, csv, dateFormat string
	rows                  int
	want                  int64
}{
	{"signed amount, comma, header", "Date,Description,Amount,Balance\n" +
		"2026-03-01,\"ACME Payroll, March\",3200.00,4200.00\n" +
		"2026-03-02,REWE SAGT DANKE 1234,-45.67,4154.33\n" +
		"2026-03-02,REWE SAGT DANKE 1234,-45.67,4108.66\n" +
		"2026-03-05,Netflix.com,-12.99,4095.67\n", "", 4, 320000 - 4567 - 4567 - 1299},
	{"debit/credit with BOM and quotes", "\ufeffDate,Payee,Debit,Credit\n" +
		"03/15/2026,\"Landlord \"\"Flat 2\"\"\",950.00,\n" +
		"03/16/2026,Refund Amazon,,19.99\n" +
		"03/17/2026,Spotify,10.99,\n", "", 3, -95000 + 1999 - 1099},
	{"decimal comma, semicolon, DD.MM.YYYY", "Buchungstag;Verwendungszweck;Betrag;Saldo\n" +
		"01.04.2026;Gehalt April;2.500,00;3.000,00\n" +
		"02.04.2026;Edeka Markt;-1.234,56;1.765,44\n" +
		"03.04.2026;Bäckerei;-3,5;1.761,94\n", "", 3, 250000 - 123456 - 350},
}

// TestImportShapes: each shape imports every row, the total equals an independent sum to the
// cent, and importing the same file again imports nothing.
func TestImportShapes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.Open(t, 2)
	svc := &ledger.Service{Store: d.Store}
	owner, _, err := d.Door.CreateOwner(ctx, "importer")
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range shapes {
		acct := "Bank " + sh.name[:6]
		res, err := svc.Import(ctx, owner.ID, ledger.ImportRequest{Account: acct, CSV: []byte(sh.csv), DateFormat: sh.dateFormat})
		if err != nil || res.Imported != sh.rows || res.Duplicates != 0 || len(res.Rejected) != 0 {
			t.Fatalf("%s: import = %+v, %v; want %d imported", sh.name, res, err, sh.rows)
		}
		if got := total(t, d.Store, owner.ID, acct); got != sh.want {
			t.Errorf("%s: ledger total = %d cents, want %d", sh.name, got, sh.want)
		}
		res, err = svc.Import(ctx, owner.ID, ledger.ImportRequest{Account: acct, CSV: []byte(sh.csv)})
		if err != nil || res.Imported != 0 || res.Duplicates != sh.rows {
			t.Errorf("%s: re-import = %+v, %v; want 0 imported, %d duplicates", sh.name, res, err, sh.rows)
		}
	}
	// Another owner sees none of it.
	other, _, err := d.Door.CreateOwner(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	err = d.Store.WithOwner(ctx, other.ID, func(tx *store.Tx) error {
		e, err := tx.Ledger.Entries(ctx, time.Time{}, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
		if err != nil || len(e) != 0 {
			t.Errorf("other owner's entries = %d, %v; want 0", len(e), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// total sums the entries of one account.
func total(t *testing.T, s *store.Store, ownerID uuid.UUID, account string) int64 {
	t.Helper()
	var n int64
	err := s.WithOwner(context.Background(), ownerID, func(tx *store.Tx) error {
		e, err := tx.Ledger.Entries(context.Background(), time.Time{}, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
		for _, x := range e {
			if x.Account == account {
				n += x.AmountMinor
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestImportRejectsBadLines: two malformed lines are rejected by line number; the rest import.
func TestImportRejectsBadLines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.Open(t, 2)
	owner, _, err := d.Door.CreateOwner(ctx, "importer")
	if err != nil {
		t.Fatal(err)
	}
	csv := "Date,Description,Amount\n" +
		"2026-03-01,Coffee,-3.20\n" +
		"2026-13-45,Broken date,-1.00\n" +
		"2026-03-02,Lunch,-12.50\n" +
		"2026-03-03,Broken amount,twelve\n" +
		"2026-03-04,Book,-20.00\n"
	res, err := (&ledger.Service{Store: d.Store}).Import(ctx, owner.ID, ledger.ImportRequest{Account: "Bank", CSV: []byte(csv)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported != 3 || len(res.Rejected) != 2 || res.Rejected[0].Line != 3 || res.Rejected[1].Line != 5 {
		t.Errorf("import = %+v; want 3 imported and lines 3 and 5 rejected", res)
	}
	if got := total(t, d.Store, owner.ID, "Bank"); got != -320-1250-2000 {
		t.Errorf("total = %d, want %d", got, -320-1250-2000)
	}
	// An ambiguous date column is a client error, and nothing is imported.
	_, err = (&ledger.Service{Store: d.Store}).Import(ctx, owner.ID, ledger.ImportRequest{Account: "Card",
		CSV: []byte("Date,Description,Amount\n03/04/2026,X,-1.00\n")})
	if steward.ErrorCode(err) != steward.CodeInvalid {
		t.Errorf("ambiguous dates: err = %v, want invalid", err)
	}
}
