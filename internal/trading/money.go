package trading

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
)

// MaxPriceMinor bounds a price or an amount (10 million dollars), so qty × price never
// overflows.
const MaxPriceMinor = 1_000_000_000

// MaxQty bounds an order's shares.
const MaxQty = 1_000_000

// ParseDollars reads an amount of dollars such as 187.20, 187 or $1,872.5 into cents; more
// than two decimals, a sign or an amount over MaxPriceMinor is an error in words.
func ParseDollars(s string) (int64, error) {
	t := strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(s), "$"), ",", "")
	whole, frac, dot := strings.Cut(t, ".")
	if whole == "" || len(frac) > 2 || (dot && frac == "") || strings.Trim(whole+frac, "0123456789") != "" || len(whole) > 8 {
		return 0, steward.Errorf(steward.CodeInvalid, "%q is not an amount of dollars such as 187.20", s)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || n <= 0 || n > MaxPriceMinor {
		return 0, steward.Errorf(steward.CodeInvalid, "%q must be more than 0 and at most 10,000,000 dollars", s)
	}
	return n, nil
}

// centsOf turns an amount of dollars into cents, or an error naming field.
func centsOf(field string, v float64) (int64, error) {
	c, ok := steward.CentsOf(v)
	if !ok {
		return 0, steward.Errorf(steward.CodeInvalid, "%s must be an amount of dollars above 0 with at most two decimals (at most 10,000,000)", field)
	}
	return c, nil
}

// Money words cents as dollars: 1872.00 USD.
func Money(cents int64) string { return steward.FormatMoney(cents, "USD") }

// dollarsOf reads a broker's decimal string of dollars ("187.2", "-3.5") into cents, rounded.
func dollarsOf(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e13 {
		return 0, fmt.Errorf("not an amount: %q", s)
	}
	return int64(math.Round(f * 100)), nil
}
