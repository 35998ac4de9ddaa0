package doctext_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/document/documenttest"
	"github.com/stewardhq/steward/internal/steward"
)

// The fuzz targets, one per reader (make fuzz runs each for FUZZTIME; go test runs their
// seeds: the hostile corpus and a real document of each type). The readers Steward writes
// (DOCX, XLSX, CSV, HTML, text) are fuzzed in this process: their own caps must bound them,
// without the sandbox. The PDF library is not bounded by its own code, so the PDF target
// fuzzes the whole of Extract, sandbox included.

// fuzzDeadline bounds one in-process reading; a reader that overruns it has hung.
const fuzzDeadline = 10 * time.Second

// maxSeed bounds the hostile documents that seed a target: the fuzzer mutates and re-runs
// its seeds, and one that costs a reader up to its caps makes it crawl; smaller copies of
// those seed it instead.
const maxSeed = 32 << 10

// seed adds the hostile documents of extension ext (up to maxSeed bytes, and none that only
// the deadline stops: TestHostileDocumentsAreRefused reads that), small copies of the large
// ones, and the given real ones to f's corpus.
func seed(f *testing.F, ext string, real ...[]byte) {
	for _, h := range hostile() {
		if path.Ext(h.Name) == ext && len(h.Data) <= maxSeed && !h.Endless {
			f.Add(h.Data)
		}
	}
	switch ext {
	case ".html":
		f.Add(documenttest.HTMLNested(600))
	case ".csv":
		f.Add([]byte(strings.Repeat(",", 20_000) + "\n"))
	case ".xlsx":
		f.Add(documenttest.XLSXSharedStrings(1 << 12))
	case ".docx":
		f.Add(documenttest.DOCXForgedSize(1 << 12))
	}
	for _, r := range real {
		f.Add(r)
	}
}

// fuzzHere reads data as a file of extension ext in this process and fails on a panic (the
// fuzzer reports it), an overrun, text past the cap, or an error that is not a refusal.
func fuzzHere(t *testing.T, ext string, data []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), fuzzDeadline)
	defer cancel()
	defer watchdog(2 * fuzzDeadline)()
	ex, err := doctext.ExtractHere(ctx, doctext.Source{Name: "fuzz" + ext, Data: data})
	if ctx.Err() != nil {
		t.Fatalf("reading %d bytes ran past its deadline of %v", len(data), fuzzDeadline)
	}
	checkOutcome(t, ex, err)
}

// watchdog crashes the process (the fuzzer then keeps the input as a failure) when the
// reading has not returned within d: a reader that never returns would otherwise only stall
// the fuzzer. The returned func stops it.
func watchdog(d time.Duration) (stop func()) {
	t := time.AfterFunc(d, func() { panic(fmt.Sprintf("a reading did not return within %v", d)) })
	return func() { t.Stop() }
}

func checkOutcome(t *testing.T, ex doctext.Extracted, err error) {
	t.Helper()
	if err != nil {
		var se *steward.Error
		if !errors.As(err, &se) || se.Code != steward.CodeInvalid && se.Code != steward.CodeRateLimited {
			t.Fatalf("error %v (%T) is not a refusal", err, err)
		}
		return
	}
	if n := len(ex.Text()); n > doctext.MaxTextBytes+len(ex.Sections) {
		t.Fatalf("text of %d bytes, past the cap", n)
	}
}

func FuzzDOCX(f *testing.F) {
	seed(f, ".docx", documenttest.DOCX(f, "Dear Ada,", "The meeting moves to Thursday."))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzHere(t, ".docx", data) })
}

func FuzzXLSX(f *testing.F) {
	seed(f, ".xlsx", documenttest.XLSX(f, "gaps.xlsx"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzHere(t, ".xlsx", data) })
}

func FuzzCSV(f *testing.F) {
	seed(f, ".csv", []byte("name,city\nAda,London\n\"Grace, \"\"RA\"\"\",Arlington\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzHere(t, ".csv", data) })
}

func FuzzHTML(f *testing.F) {
	seed(f, ".html", []byte(`<html><head><title>T</title></head><body><article><p>Knead the <a href="https://x.example/b">dough</a>.</p></article></body></html>`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzHere(t, ".html", data) })
}

func FuzzText(f *testing.F) {
	seed(f, ".md", []byte("# Title\n\nSome *markdown*."), []byte{0xff, 0xfe, 0})
	f.Fuzz(func(t *testing.T, data []byte) { fuzzHere(t, ".md", data) })
}

// FuzzPDF reads through Extract: the sandbox is what bounds the PDF library, so a reading
// must come back, refused or read, within its deadline.
func FuzzPDF(f *testing.F) {
	seed(f, ".pdf", documenttest.PDF(f, "First page.", "Second page."))
	f.Fuzz(func(t *testing.T, data []byte) {
		limit := doctext.TimeoutFor(len(data)) + 2*time.Second
		defer watchdog(2 * limit)()
		start := time.Now()
		ex, err := doctext.Extract(context.Background(), doctext.Source{Name: "fuzz.pdf", Data: data})
		if took := time.Since(start); took > limit {
			t.Fatalf("reading %d bytes took %v, past %v", len(data), took, limit)
		}
		checkOutcome(t, ex, err)
	})
}
