package benchcycle

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Percentile is the nearest-rank percentile p (0 < p ≤ 1) of samples: the smallest sample
// with at least p of the samples at or below it. Zero for no samples.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := int(float64(len(s))*p+0.999999999) - 1 // ceil(p·n) - 1, robust to float error
	return s[min(max(rank, 0), len(s)-1)]
}

// Row is one line of the comparison table. Steward and Peer are the values as printed;
// S and P are the numbers behind them, for the ratio; HigherIsBetter says which way the
// ratio goes. A zero S or P (not measured) prints no ratio.
type Row struct {
	Metric         string
	S, P           float64
	Steward, Peer  string
	HigherIsBetter bool
}

// Ratio is how many times better Steward is than the peer on the row: S/P when higher is
// better (throughput), P/S otherwise (latency, costs). Zero when either side is missing.
func (r Row) Ratio() float64 {
	if r.S <= 0 || r.P <= 0 {
		return 0
	}
	if r.HigherIsBetter {
		return r.S / r.P
	}
	return r.P / r.S
}

// WriteTable prints rows as one Markdown table: metric, Steward, LangGraph.js, ratio.
func WriteTable(w io.Writer, peerName string, rows []Row) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintf(tw, "| metric\t Steward\t %s\t Steward better by |\n", peerName)
	fmt.Fprintf(tw, "|---\t---\t---\t---|\n")
	for _, r := range rows {
		ratio := "—"
		if x := r.Ratio(); x > 0 {
			ratio = fmt.Sprintf("%.2f×", x)
		}
		fmt.Fprintf(tw, "| %s\t %s\t %s\t %s |\n", r.Metric, orDash(r.Steward), orDash(r.Peer), ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// tabwriter.Debug separates cells with '|'; the rows already start and end with one.
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// ms prints a duration in milliseconds with two decimals.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
