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

// BenchmarkOtherOwnerDuringLargeReading (make bench-extract): alice uploads a 19 MB PDF that
// runs to the longest deadline (20 s) from two clients at once, while bob uploads a
// nine-byte note again and again, in the process's readers. It reports bob's upload p50 and
// p99 in ms and how many of his uploads were refused (busy; target 0: an owner holds at most
// her share of the readers).
func BenchmarkOtherOwnerDuringLargeReading(b *testing.B) {
	base, alice, bob := docServerWith(b, 20<<20, doctext.ProcessReaders)
	big := documenttest.PDFObjectStreamOf(19 << 20)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { upload(b, base, alice, "objstm19m.pdf", "application/pdf", big) })
	}
	time.Sleep(time.Second) // alice's readings hold their slots
	n := max(b.N, 50)
	lat := make([]time.Duration, 0, n)
	refused := 0
	b.ResetTimer()
	for range n {
		start := time.Now()
		resp := upload(b, base, bob, "note.txt", "text/plain", []byte("hi, world"))
		lat = append(lat, time.Since(start))
		if resp.status != 201 {
			refused++
		}
	}
	b.StopTimer()
	wg.Wait()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[n/2]), "bob-p50-ms")
	b.ReportMetric(ms(lat[n*99/100]), "bob-p99-ms")
	b.ReportMetric(float64(refused), "bob-refused")
}
