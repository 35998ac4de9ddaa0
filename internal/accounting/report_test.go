package accounting

import (
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	d := func(m, day int) time.Time { return time.Date(2026, time.Month(m), day, 0, 0, 0, 0, time.UTC) }
	entries := []steward.LedgerEntry{
		{Date: d(3, 1), Merchant: "Edeka", Account: "Giro", Category: "Groceries", AmountMinor: -1230, Currency: "EUR"},
		{Date: d(3, 9), Merchant: "Edeka", Account: "Giro", Category: "Groceries", AmountMinor: -770, Currency: "EUR"},
		{Date: d(4, 1), Merchant: "ACME", Account: "Giro", Category: "Salary", AmountMinor: 300000, Currency: "EUR"},
		{Date: d(4, 2), Merchant: "Netflix", Account: "Card", Category: "", AmountMinor: -1299, Currency: "EUR"},
	}
	lines, totals, err := Summarize(entries, ByCategory)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || lines[0].Key != "Groceries" || lines[0].OutMinor != 2000 || lines[0].Out != "20.00 EUR" || lines[0].Count != 2 ||
		lines[1].Key != steward.Uncategorized || lines[2].Key != "Salary" || lines[2].InMinor != 300000 {
		t.Errorf("by category = %+v", lines)
	}
	if len(totals) != 1 || totals[0].OutMinor != 3299 || totals[0].InMinor != 300000 || totals[0].Net != "2967.01 EUR" {
		t.Errorf("totals = %+v", totals)
	}
	months, _, _ := Summarize(entries, ByMonth)
	if len(months) != 2 || months[0].Key != "2026-03" || months[1].Key != "2026-04" {
		t.Errorf("by month = %+v", months)
	}
	if _, _, err := Summarize(entries, "weekday"); err == nil {
		t.Error("by weekday: no error")
	}
}
