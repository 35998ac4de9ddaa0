package accounting

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

// Recurring payments and anomalies: pure analysis over a ledger's entries, like Summarize.

// Cadences of recurring payments.
const (
	Weekly  = "weekly"
	Monthly = "monthly"
	Yearly  = "yearly"
)

// Anomaly kinds.
const (
	AnomalyDuplicate = "duplicate"
	AnomalyOutlier   = "outlier"
	AnomalyRefund    = "refund"
)

// Subscription is a recurring payment: the same merchant charging a similar amount at a
// steady cadence, with the day it is next expected.
type Subscription struct {
	Merchant    string `json:"merchant"`
	Account     string `json:"account"`
	Cadence     string `json:"cadence"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	Amount      string `json:"amount"`
	Count       int    `json:"count"`
	First       string `json:"first"`
	Last        string `json:"last"`
	Next        string `json:"next_expected"`
}

// cadences: the gaps in days each cadence allows, the charges it needs at least, and the step
// to the next date.
var cadences = []struct {
	name     string
	min, max int
	charges  int
	next     func(time.Time) time.Time
}{
	{Weekly, 6, 8, 3, func(t time.Time) time.Time { return t.AddDate(0, 0, 7) }},
	{Monthly, 27, 34, 3, func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }},
	{Yearly, 355, 375, 2, func(t time.Time) time.Time { return t.AddDate(1, 0, 0) }},
}

// group is the money out (or in) of one merchant on one account in one currency, by date.
func groups(entries []steward.LedgerEntry, out bool) map[[3]string][]steward.LedgerEntry {
	g := map[[3]string][]steward.LedgerEntry{}
	for _, e := range entries {
		if (e.AmountMinor < 0) != out || e.AmountMinor == 0 || strings.TrimSpace(e.Merchant) == "" {
			continue
		}
		k := [3]string{strings.ToLower(e.Merchant), e.Account, e.Currency}
		g[k] = append(g[k], e)
	}
	for _, es := range g {
		slices.SortStableFunc(es, func(a, b steward.LedgerEntry) int { return a.Date.Compare(b.Date) })
	}
	return g
}

// abs is the size of an amount.
func abs(n int64) int64 { return max(n, -n) }

// median is the middle size of the amounts (the lower middle of an even count).
func median(es []steward.LedgerEntry) int64 {
	a := make([]int64, len(es))
	for i, e := range es {
		a[i] = abs(e.AmountMinor)
	}
	slices.Sort(a)
	return a[(len(a)-1)/2]
}

// FindSubscriptions finds the recurring payments among entries: a merchant charging the same
// account at least three times (twice for yearly) with every amount within 10 % of the usual
// one and every gap weekly (6–8 days), monthly (27–34) or yearly (355–375). A second charge
// of the same amount on the same day is a duplicate (find_anomalies), not a period.
func FindSubscriptions(entries []steward.LedgerEntry) []Subscription {
	out := []Subscription{}
	for _, es := range groups(entries, true) {
		es = slices.CompactFunc(slices.Clone(es), func(a, b steward.LedgerEntry) bool {
			return a.Date.Equal(b.Date) && a.AmountMinor == b.AmountMinor
		})
		m := median(es)
		similar := true
		for _, e := range es {
			if abs(abs(e.AmountMinor)-m)*10 > m {
				similar = false
			}
		}
		if !similar || len(es) < 2 {
			continue
		}
		for _, c := range cadences {
			if len(es) < c.charges {
				continue
			}
			steady := true
			for i := 1; i < len(es); i++ {
				gap := int(es[i].Date.Sub(es[i-1].Date).Hours() / 24)
				if gap < c.min || gap > c.max {
					steady = false
					break
				}
			}
			if !steady {
				continue
			}
			first, last := es[0], es[len(es)-1]
			out = append(out, Subscription{Merchant: last.Merchant, Account: last.Account, Cadence: c.name, AmountMinor: m,
				Currency: last.Currency, Amount: steward.FormatMoney(m, last.Currency), Count: len(es),
				First: first.Date.Format(time.DateOnly), Last: last.Date.Format(time.DateOnly),
				Next: c.next(last.Date).Format(time.DateOnly)})
			break
		}
	}
	slices.SortFunc(out, func(a, b Subscription) int {
		return cmp.Or(cmp.Compare(a.Next, b.Next), cmp.Compare(a.Merchant, b.Merchant), cmp.Compare(a.Account, b.Account))
	})
	return out
}

// Anomaly is a transaction worth a look, with why.
type Anomaly struct {
	Kind        string      `json:"kind"`
	Reason      string      `json:"reason"`
	Transaction Transaction `json:"transaction"`
}

// refundWords mark money coming back in a statement's text.
var refundWords = []string{"refund", "erstattung", "gutschrift", "storno", "chargeback", "reversal", "remboursement"}

// Outliers: a charge is far outside a merchant's history when the merchant has charged at
// least outlierHistory times and it is outlierFactor times their usual (median) charge.
const (
	outlierHistory = 5
	outlierFactor  = 4
)

// FindAnomalies finds, among the entries dated in [from, to), duplicate charges (the same
// merchant, account and amount again within a day: the later one is reported), charges
// far outside the merchant's history (all of entries) and refunds (money in whose text says
// so, or from a merchant that charged the account before).
func FindAnomalies(entries []steward.LedgerEntry, from, to time.Time) []Anomaly {
	in := func(e steward.LedgerEntry) bool { return !e.Date.Before(from) && e.Date.Before(to) }
	out := []Anomaly{}
	add := func(kind string, e steward.LedgerEntry, format string, args ...any) {
		if in(e) {
			out = append(out, Anomaly{Kind: kind, Reason: fmt.Sprintf(format, args...), Transaction: ToTransaction(e)})
		}
	}
	charges := groups(entries, true)
	for _, es := range charges {
		for i, e := range es {
			for j := i - 1; j >= 0 && e.Date.Sub(es[j].Date) <= 24*time.Hour; j-- {
				if prev := es[j]; e.AmountMinor == prev.AmountMinor {
					add(AnomalyDuplicate, e, "the same amount was charged by the same merchant on %s (transaction %s)",
						prev.Date.Format(time.DateOnly), prev.ID)
					break
				}
			}
		}
		if len(es) < outlierHistory {
			continue
		}
		m := median(es)
		for _, e := range es {
			if abs(e.AmountMinor) >= outlierFactor*m {
				add(AnomalyOutlier, e, "%s is %.1f times this merchant's usual charge of %s", steward.FormatMoney(abs(e.AmountMinor), e.Currency),
					float64(abs(e.AmountMinor))/float64(m), steward.FormatMoney(m, e.Currency))
			}
		}
	}
	for k, es := range groups(entries, false) {
		for _, e := range es {
			text := strings.ToLower(e.Description)
			if slices.ContainsFunc(refundWords, func(w string) bool { return strings.Contains(text, w) }) {
				add(AnomalyRefund, e, "money in described as a refund")
				continue
			}
			if slices.ContainsFunc(charges[k], func(c steward.LedgerEntry) bool { return !c.Date.After(e.Date) }) {
				add(AnomalyRefund, e, "money in from a merchant that charged this account before")
			}
		}
	}
	slices.SortFunc(out, func(a, b Anomaly) int {
		return cmp.Or(cmp.Compare(a.Transaction.Date, b.Transaction.Date), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Transaction.ID.String(), b.Transaction.ID.String()))
	})
	return out
}
