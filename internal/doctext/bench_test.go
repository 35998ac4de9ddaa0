package doctext_test

import (
	"errors"
	"testing"

	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/document/documenttest"
	"github.com/stewardhq/steward/internal/steward"
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

// BenchmarkLargeHostile (make bench-extract, once): a 19 MB PDF whose object stream extends
// itself — the reading runs to the deadline of its size (doctext.TimeoutFor: 20 s, the most
// any reading gets) and is killed. It reports the time (ns/op) and the child's memory bound
// (limit-MB: RLIMIT_DATA past its start, doctext.ChildMemory plus twice the document).
func BenchmarkLargeHostile(b *testing.B) {
	data := documenttest.PDFObjectStreamOf(19 << 20)
	for b.Loop() {
		_, _, _, err := doctext.Sandboxed(doctext.Source{Name: "objstm19m.pdf", Data: data})
		if se, ok := errors.AsType[*steward.Error](err); !ok || se.Reason != doctext.ReasonTimeout {
			b.Fatalf("the 19 MB object stream: %v; want refused at its deadline", err)
		}
	}
	b.ReportMetric(float64(doctext.ChildMemory+2*int64(len(data)))/(1<<20), "limit-MB")
}
