package httpapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/document/documenttest"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/testdb"
	uploads "github.com/stewardhq/steward/internal/upload"
)

// heapPeak samples the process's live heap (collected first) every 20 ms until stop is
// called, which returns its peak above what it was at the start.
func heapPeak() (stop func() uint64) {
	live := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := live()
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			peak.Store(max(peak.Load(), live()))
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return max(peak.Load(), base) - base
	}
}

// TestUploadsInFlightAreBounded: 40 uploads of 3 MB from eight owners at once, while the
// only reading slot is held (an object stream read to its deadline). Past the bound (here 4
// in flight, 2 per owner) an upload is refused at once — 429, Retry-After, the limit named —
// before its body is read, and the admitted ones wait for the reader spooled to files: the
// server's live heap grows by what storing one or two of them takes (about 50 MB), not by
// the bodies (on main every body was read whole before waiting: 116 MB for 24 of them).
func TestUploadsInFlightAreBounded(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 8)
	keys := make([]string, 8)
	for i := range keys {
		_, keys[i] = db.Owner(t, fmt.Sprintf("owner%d", i))
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Store: db.Store, Auth: db.Door, Logger: zerolog.Nop(), MaxBodyBytes: 1024,
		Documents: &document.Service{Store: db.Store, MaxBytes: 8 << 20, Readers: doctext.NewReaders(1, 1, time.Minute)},
		Uploads:   &uploads.Gate{InFlight: 4, PerOwner: 2}}))
	t.Cleanup(srv.Close)
	post := func(key, name string, body []byte) response {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/documents?name="+name, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return response{}
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return response{status: resp.StatusCode, header: resp.Header, body: b}
	}
	held := make(chan response, 1)
	go func() { held <- post(keys[0], "objstm.pdf", documenttest.PDFObjectStream()) }()
	time.Sleep(200 * time.Millisecond) // its reading holds the slot

	text := bytes.Repeat([]byte("steward "), 3<<20/8)
	stop := heapPeak()
	answers := make(chan response, 40)
	for i := range 40 {
		go func() { answers <- post(keys[i%8], fmt.Sprintf("notes%d.txt", i), text) }()
	}
	refused := 0
	for range 40 {
		resp := <-answers
		switch resp.status {
		case http.StatusCreated:
		case http.StatusTooManyRequests:
			refused++
			if resp.header.Get("Retry-After") == "" || !strings.Contains(string(resp.body), "STEWARD_UPLOADS_") || !strings.Contains(string(resp.body), "try again in") {
				t.Errorf("a refused upload: %v %s; want Retry-After and the limit named", resp.header, resp.body)
			}
		default:
			t.Errorf("an upload answered %d %s; want 201 or 429", resp.status, resp.body)
		}
	}
	grew := stop()
	if resp := <-held; resp.status != 422 {
		t.Errorf("the object stream: %d %s", resp.status, resp.body)
	}
	if refused < 40-4 {
		t.Errorf("%d of 40 uploads at once were refused; want all but the 4 in flight at most", refused)
	}
	t.Logf("the live heap grew by %.1f MB at most", float64(grew)/(1<<20))
	if grew > 96<<20 {
		t.Errorf("the live heap grew by %.1f MB while 40 uploads of 3 MB came in; want under 96 MB", float64(grew)/(1<<20))
	}
}
