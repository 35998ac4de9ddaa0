package benchcycle

import (
	"strings"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	t.Parallel()
	var s []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0.001, time.Millisecond}} {
		if got := Percentile(s, tc.p); got != tc.want {
			t.Errorf("p%v of 1..100 ms = %v, want %v", tc.p*100, got, tc.want)
		}
	}
	if s[0] != 100*time.Millisecond {
		t.Errorf("Percentile sorted its input in place")
	}
	if got := Percentile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("p99 of one sample = %v, want it", got)
	}
	if got := Percentile(nil, 0.5); got != 0 {
		t.Errorf("p50 of nothing = %v, want 0", got)
	}
}

func TestWriteTableRatios(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	err := WriteTable(&b, "LangGraph.js", []Row{
		{Metric: "cycles/s", S: 100, P: 40, Steward: "100.0", Peer: "40.0", HigherIsBetter: true},
		{Metric: "p50", S: 2, P: 10, Steward: "2.00 ms", Peer: "10.00 ms"},
		{Metric: "allocations", S: 1800, Steward: "1800"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("want header, rule and 3 rows, got:\n%s", b.String())
	}
	for i, want := range []string{"2.50×", "5.00×", "—"} {
		row := lines[i+2]
		if !strings.HasSuffix(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(row), "|")), want) {
			t.Errorf("row %q: want the ratio %s", row, want)
		}
	}
	if !strings.Contains(lines[4], "| —") {
		t.Errorf("a missing peer value should print —: %q", lines[4])
	}
}
