package doctext_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/document/documenttest"
	"github.com/stewardhq/steward/internal/steward"
)

var (
	corpusOnce sync.Once
	corpus     []documenttest.Hostile
)

// hostile is the hostile corpus, built once for the package's tests.
func hostile() []documenttest.Hostile {
	corpusOnce.Do(func() { corpus = documenttest.HostileCorpus() })
	return corpus
}

// refusedAs is the reason each hostile document is refused with; "" for one that is read
// (count.pdf's one real page).
var refusedAs = map[string]string{
	"columns.xlsx":  doctext.ReasonTooComplex,
	"column7.xlsx":  doctext.ReasonTooComplex,
	"farrow.xlsx":   doctext.ReasonTooComplex,
	"strings.xlsx":  doctext.ReasonTooComplex,
	"selfkids.pdf":  doctext.ReasonTooComplex,
	"count.pdf":     "",
	"objstm.pdf":    doctext.ReasonTimeout,
	"nested.docx":   doctext.ReasonBomb,
	"nested1m.docx": doctext.ReasonTooComplex,
	"manyns.docx":   doctext.ReasonTooComplex,
	"forged.docx":   doctext.ReasonBomb,
	"laughs.docx":   doctext.ReasonCorrupt,
	"laughs.xlsx":   doctext.ReasonCorrupt,
	"nested.html":   doctext.ReasonTooComplex,
	"wide.csv":      doctext.ReasonTooComplex,
}

// TestHostileDocumentsAreRefused: each document of the hostile corpus (a cell at
// column AAAAAAAA, a page tree that is its own kid or claims 4e18 pages, an object stream
// that extends itself, 30 million unclosed elements, a zip with forged sizes, billion laughs,
// a million shared strings, a million nested <div>s, a million fields) is refused with a
// client error and its reason in words, within its deadline; the one with a real page
// under a lying /Count is read. No reading outlives its deadline by more than a second.
func TestHostileDocumentsAreRefused(t *testing.T) {
	for _, h := range hostile() {
		t.Run(h.Name, func(t *testing.T) {
			want, ok := refusedAs[h.Name]
			if !ok {
				t.Fatalf("no expectation for %s", h.Name)
			}
			start := time.Now()
			ex, err := doctext.Extract(context.Background(), doctext.Source{Name: h.Name, Data: h.Data})
			took := time.Since(start)
			if limit := doctext.TimeoutFor(len(h.Data)) + time.Second; took > limit {
				t.Errorf("%s (%s) took %v, past its deadline %v", h.Name, h.What, took, limit)
			}
			if want == "" {
				if err != nil || !strings.Contains(ex.Text(), "Hello world") {
					t.Fatalf("%s: %v, text %q; want its one page read", h.Name, err, ex.Text())
				}
				return
			}
			var se *steward.Error
			if !errors.As(err, &se) || se.Code != steward.CodeInvalid || se.Reason != want {
				t.Fatalf("%s (%s): Extract = %v; want invalid with reason %s", h.Name, h.What, err, want)
			}
			if len(se.Message) < 20 {
				t.Errorf("%s: the reason %q does not say what is wrong", h.Name, se.Message)
			}
		})
	}
}

// TestBusyReadersAnswerRateLimited: when every reading slot stays busy past the wait (a
// reading that runs to its deadline holds the only one), a reading is refused as
// rate_limited with the time to wait, and once the slot is free the next one goes through.
func TestBusyReadersAnswerRateLimited(t *testing.T) {
	t.Parallel()
	readers := doctext.NewReaders(1, 1, 50*time.Millisecond)
	held := make(chan error, 1)
	go func() {
		_, err := readers.Extract(context.Background(), doctext.Source{Name: "objstm.pdf", Data: documenttest.PDFObjectStream()})
		held <- err
	}()
	time.Sleep(300 * time.Millisecond) // the object stream is being read
	_, err := readers.Extract(context.Background(), doctext.Source{Name: "a.txt", Data: []byte("hello")})
	var se *steward.Error
	if !errors.As(err, &se) || se.Code != steward.CodeRateLimited || se.Reason != doctext.ReasonBusy || steward.RetrySeconds(err) <= 0 ||
		!strings.Contains(se.Message, "try again in") {
		t.Fatalf("Extract with every slot busy = %#v; want rate_limited, busy, a Retry-After and words", err)
	}
	if err := <-held; steward.ErrorCode(err) != steward.CodeInvalid {
		t.Fatalf("the object stream: %v", err)
	}
	ex, err := readers.Extract(context.Background(), doctext.Source{Name: "a.txt", Data: []byte("hello")})
	if err != nil || ex.Text() != "hello" {
		t.Fatalf("after the slot came back: %q, %v", ex.Text(), err)
	}
}

// TestReadingIsCancelled: a reading whose caller goes away (the client hung up) is stopped
// at once, not at its deadline.
func TestReadingIsCancelled(t *testing.T) {
	t.Parallel()
	var objstm []byte
	for _, h := range hostile() {
		if h.Name == "objstm.pdf" {
			objstm = h.Data
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := doctext.Extract(ctx, doctext.Source{Name: "objstm.pdf", Data: objstm})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 1500*time.Millisecond {
		t.Fatalf("Extract after its caller's deadline = %v after %v; want the context's error at once", err, time.Since(start))
	}
}
