package httpapi_test

import (
	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/document/documenttest"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkNeighbourDuringHostileUploads (make bench-extract): bob lists his documents while
// alice uploads hostile documents from four clients without pause (the object stream that
// runs to its deadline, the PDF page tree of itself, the XLSX cell at column AAAAAAAA, the
// 30-million-element DOCX), and, in the same run, with nobody uploading. It reports bob's
// p50 and p99 in ms for both. Target: under 100 ms meanwhile.
func BenchmarkNeighbourDuringHostileUploads(b *testing.B) {
	base, alice, bob := docServerWith(b, 20<<20, doctext.ProcessReaders)
	var files []documenttest.Hostile
	for _, h := range documenttest.HostileCorpus() {
		switch h.Name {
		case "objstm.pdf", "selfkids.pdf", "columns.xlsx", "nested.docx":
			files = append(files, h)
		}
	}
	list := func() time.Duration {
		start := time.Now()
		if resp := doHTTP(b, base, request{method: "GET", path: "/v1/documents", key: bob}); resp.status != 200 {
			b.Fatalf("bob's list: %d %s", resp.status, resp.body)
		}
		return time.Since(start)
	}
	measure := func(n int) (p50, p99 float64) {
		lat := make([]time.Duration, n)
		for i := range lat {
			lat[i] = list()
			time.Sleep(5 * time.Millisecond)
		}
		slices.Sort(lat)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		return ms(lat[n/2]), ms(lat[n*99/100])
	}
	n := max(b.N, 200)
	quiet50, quiet99 := measure(n)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			for i := c; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				h := files[i%len(files)]
				upload(b, base, alice, h.Name, "application/octet-stream", h.Data)
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	b.ResetTimer()
	busy50, busy99 := measure(n)
	b.StopTimer()
	close(stop)
	wg.Wait()
	b.ReportMetric(quiet50, "quiet-p50-ms")
	b.ReportMetric(quiet99, "quiet-p99-ms")
	b.ReportMetric(busy50, "hostile-p50-ms")
	b.ReportMetric(busy99, "hostile-p99-ms")
}
