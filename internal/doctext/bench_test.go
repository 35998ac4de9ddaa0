package doctext_test

import (
	"testing"

	"github.com/stewardhq/steward/internal/doctext"
)

// BenchmarkHostile (make bench-extract) reads each document of the hostile corpus in the
// sandbox and reports its time (ns/op) and the reading's peak resident set beyond that of
// reading a five-byte text (extra-MB; 0 for a reading stopped at its deadline, which the
// kernel's limit bounds at doctext.ChildMemory). Target: each ≤ 64 MB extra and
// ≤ 2 s.
func BenchmarkHostile(b *testing.B) {
	_, base, _, err := doctext.Sandboxed(doctext.Source{Name: "a.txt", Data: []byte("hello")})
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range hostile() {
		b.Run(h.Name, func(b *testing.B) {
			var peak int64
			for b.Loop() {
				_, rss, _, _ := doctext.Sandboxed(doctext.Source{Name: h.Name, Data: h.Data})
				peak = max(peak, rss)
			}
			extra := 0.0
			if peak > 0 {
				extra = float64(peak-base) / (1 << 20)
			}
			b.ReportMetric(extra, "extra-MB")
		})
	}
}
