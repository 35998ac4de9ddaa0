package steward_test

import (
	"testing"

	"github.com/stewardhq/steward/internal/steward"
)

func TestFormatMoney(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		minor int64
		cur   string
		want  string
	}{{1234, "EUR", "12.34 EUR"}, {-5, "EUR", "-0.05 EUR"}, {0, "USD", "0.00 USD"}, {1500, "JPY", "1500 JPY"}, {-1234, "KWD", "-1.234 KWD"}} {
		if got := steward.FormatMoney(tc.minor, tc.cur); got != tc.want {
			t.Errorf("FormatMoney(%d, %s) = %q, want %q", tc.minor, tc.cur, got, tc.want)
		}
	}
}
