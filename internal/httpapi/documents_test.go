package httpapi_test

import (
	"encoding/json"
	"fmt"
	"github.com/stewardhq/steward/internal/doctext"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/document/documenttest"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
)

// docServer serves the API with documents capped at maxDoc bytes and every other body at
// 1 KiB, for two owners; it returns the server's URL and their keys.
func docServer(t testing.TB, maxDoc int64) (base, alice, bob string) {
	t.Helper()
	return docServerWith(t, maxDoc, nil)
}

// docServerWith is docServer whose uploads are read in readers' slots (nil: the process's):
// a test that keeps the slots busy gets its own, so the other tests' uploads do not wait.
func docServerWith(t testing.TB, maxDoc int64, readers *doctext.Readers) (base, alice, bob string) {
	t.Helper()
	db := testdb.Open(t, 4)
	_, alice = db.Owner(t, "alice")
	_, bob = db.Owner(t, "bob")
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Store: db.Store, Auth: db.Door, Logger: zerolog.Nop(), MaxBodyBytes: 1024,
		Documents: &document.Service{Store: db.Store, MaxBytes: maxDoc, Readers: readers}}))
	t.Cleanup(srv.Close)
	return srv.URL, alice, bob
}

func upload(t testing.TB, base, key, name, contentType string, data []byte) response {
	t.Helper()
	h := map[string]string{}
	if contentType != "" {
		h["Content-Type"] = contentType
	}
	return doHTTP(t, base, request{method: "POST", path: "/v1/documents?name=" + name, key: key, body: string(data), header: h})
}

func listDocs(t *testing.T, base, key string) []steward.Document {
	t.Helper()
	resp := doHTTP(t, base, request{method: "GET", path: "/v1/documents", key: key})
	var out struct{ Documents []steward.Document }
	if err := json.Unmarshal(resp.body, &out); err != nil || resp.status != 200 {
		t.Fatalf("list: %d %s", resp.status, resp.body)
	}
	return out.Documents
}

// TestDocumentUploadAndRead: a PDF, a DOCX and an XLSX upload (the PDF larger than the
// API's 1 KiB body limit: uploads have their own) and their extracted text is read back,
// paged, through GET /v1/documents/{id}; the list shows all three.
func TestDocumentUploadAndRead(t *testing.T) {
	t.Parallel()
	base, alice, _ := docServer(t, 1<<20)
	files := []struct {
		name, ct string
		data     []byte
		want     string
	}{
		{"report.pdf", "application/pdf", documenttest.PDF(t, "Quarterly revenue rose to 42 million.", "Page two mentions the harbour."), "harbour"},
		{"letter.docx", "application/octet-stream", documenttest.DOCX(t, "Dear tenant, the rent rises in May."), "the rent rises in May"},
		{"budget.xlsx", doctext.TypeXLSX, documenttest.XLSX(t, "budget.xlsx"), "Coffee"},
	}
	if len(files[0].data) <= 1024 {
		t.Fatalf("the PDF is %d bytes; it must exceed the 1 KiB body limit", len(files[0].data))
	}
	for _, f := range files {
		resp := upload(t, base, alice, f.name, f.ct, f.data)
		var created struct{ Document steward.Document }
		if err := json.Unmarshal(resp.body, &created); err != nil || resp.status != 201 || created.Document.Name != f.name {
			t.Fatalf("upload %s: %d %s", f.name, resp.status, resp.body)
		}
		resp = doHTTP(t, base, request{method: "GET", path: "/v1/documents/" + created.Document.ID.String(), key: alice})
		var page steward.DocumentText
		if err := json.Unmarshal(resp.body, &page); err != nil || resp.status != 200 || !strings.Contains(page.Text, f.want) {
			t.Fatalf("read %s: %d %s; want text containing %q", f.name, resp.status, resp.body, f.want)
		}
		// A page of 5 characters, then the next.
		resp = doHTTP(t, base, request{method: "GET", path: "/v1/documents/" + created.Document.ID.String() + "?max_chars=5", key: alice})
		if err := json.Unmarshal(resp.body, &page); err != nil || resp.status != 200 || len([]rune(page.Text)) != 5 || page.NextOffset != 5 {
			t.Fatalf("page of %s: %d %s", f.name, resp.status, resp.body)
		}
	}
	if docs := listDocs(t, base, alice); len(docs) != 3 {
		t.Fatalf("alice has %d documents, want 3: %+v", len(docs), docs)
	}
	if resp := doHTTP(t, base, request{method: "GET", path: "/v1/documents/" + listDocs(t, base, alice)[0].ID.String() + "?offset=x", key: alice}); resp.status != 400 {
		t.Errorf("offset=x: %d %s; want 400", resp.status, resp.body)
	}
}

// TestDocumentUploadRefusals: over the limit (declared or chunked) is 413, a type Steward
// does not read 415, a corrupt PDF or no name 422 — and nothing is stored.
func TestDocumentUploadRefusals(t *testing.T) {
	t.Parallel()
	base, alice, _ := docServer(t, 4096)
	var pages []string
	for i := range 20 {
		pages = append(pages, fmt.Sprintf("Page %d of the long report, line %x.", i, i*7919))
	}
	big := documenttest.PDF(t, pages...)
	if len(big) <= 4096 {
		t.Fatalf("the big PDF is only %d bytes", len(big))
	}
	if resp := upload(t, base, alice, "big.pdf", "application/pdf", big); resp.status != 413 {
		t.Errorf("over the limit: %d %s; want 413", resp.status, resp.body)
	}
	resp := doHTTP(t, base, request{method: "POST", path: "/v1/documents?name=big.pdf", key: alice, body: string(big), chunked: true,
		header: map[string]string{"Content-Type": "application/pdf"}})
	if resp.status != 413 {
		t.Errorf("over the limit, chunked: %d %s; want 413", resp.status, resp.body)
	}
	if resp := upload(t, base, alice, "tool.exe", "application/x-msdownload", []byte("MZ")); resp.status != 415 || !strings.Contains(string(resp.body), "not a type Steward reads") {
		t.Errorf("unknown type: %d %s; want 415 with a clear message", resp.status, resp.body)
	}
	if resp := upload(t, base, alice, "broken.pdf", "application/pdf", []byte("%PDF-1.4 not really")); resp.status != 422 {
		t.Errorf("corrupt PDF: %d %s; want 422", resp.status, resp.body)
	}
	if resp := upload(t, base, alice, "", "text/plain", []byte("hello")); resp.status != 422 {
		t.Errorf("no name: %d %s; want 422", resp.status, resp.body)
	}
	if docs := listDocs(t, base, alice); len(docs) != 0 {
		t.Fatalf("refused uploads stored %d documents: %+v", len(docs), docs)
	}
}

// TestDocumentOwners: bob can neither list, read nor delete alice's document (404, as for
// an unknown id); alice can delete it, and then it is gone.
func TestDocumentOwners(t *testing.T) {
	t.Parallel()
	base, alice, bob := docServer(t, 1<<20)
	resp := upload(t, base, alice, "notes.txt", "text/plain", []byte("Alice's private notes."))
	var created struct{ Document steward.Document }
	if err := json.Unmarshal(resp.body, &created); err != nil || resp.status != 201 {
		t.Fatalf("upload: %d %s", resp.status, resp.body)
	}
	path := "/v1/documents/" + created.Document.ID.String()
	if docs := listDocs(t, base, bob); len(docs) != 0 {
		t.Errorf("bob lists %+v", docs)
	}
	if resp := doHTTP(t, base, request{method: "GET", path: path, key: bob}); resp.status != 404 {
		t.Errorf("bob reads alice's document: %d %s; want 404", resp.status, resp.body)
	}
	if resp := doHTTP(t, base, request{method: "DELETE", path: path, key: bob}); resp.status != 404 {
		t.Errorf("bob deletes alice's document: %d %s; want 404", resp.status, resp.body)
	}
	if resp := doHTTP(t, base, request{method: "GET", path: path, key: alice}); resp.status != 200 || !strings.Contains(string(resp.body), "private notes") {
		t.Fatalf("alice's document after bob's attempts: %d %s", resp.status, resp.body)
	}
	if resp := doHTTP(t, base, request{method: "DELETE", path: path, key: alice}); resp.status != 204 {
		t.Fatalf("alice deletes: %d %s", resp.status, resp.body)
	}
	if resp := doHTTP(t, base, request{method: "GET", path: path, key: alice}); resp.status != 404 {
		t.Errorf("after delete: %d %s; want 404", resp.status, resp.body)
	}
	if resp := doHTTP(t, base, request{method: "GET", path: "/v1/documents/not-a-uuid", key: alice}); resp.status != 404 {
		t.Errorf("bad id: %d %s; want 404", resp.status, resp.body)
	}
}

// TestHostileUploadsAreRefusedInWords: documents built to take the server down —
// an XLSX cell at column AAAAAAAA (on main: a row padded with 10^11 tabs, the process killed
// for memory), a PDF page tree that is its own kid (on main: extraction never ends), a DOCX
// of 30 million unclosed elements (on main: 25 s and 3 GB), an object stream that extends
// itself — each answer 422 with the reason in words within its deadline, store nothing, and
// another owner is answered meanwhile.
func TestHostileUploadsAreRefusedInWords(t *testing.T) {
	t.Parallel()
	base, alice, bob := docServerWith(t, 20<<20, doctext.NewReaders(1, 1, doctext.BusyWait))
	want := map[string]string{
		"columns.xlsx": "past column XFD",
		"selfkids.pdf": "page tree nests more than",
		"nested.docx":  "unpacks to more than",
		"objstm.pdf":   "took longer than",
	}
	for _, h := range documenttest.HostileCorpus() {
		words, ok := want[h.Name]
		if !ok {
			continue
		}
		done := make(chan response, 1)
		go func() { done <- upload(t, base, alice, h.Name, "application/octet-stream", h.Data) }()
		if resp := doHTTP(t, base, request{method: "GET", path: "/v1/documents", key: bob}); resp.status != 200 {
			t.Errorf("while %s was read, bob's list answered %d %s", h.Name, resp.status, resp.body)
		}
		var resp response
		select {
		case resp = <-done:
		case <-time.After(2 * doctext.TimeoutFor(len(h.Data))):
			t.Fatalf("%s (%s): no answer within twice its deadline", h.Name, h.What)
		}
		var body struct {
			Error struct{ Code, Reason, Message string }
		}
		_ = json.Unmarshal(resp.body, &body)
		if resp.status != 422 || body.Error.Code != "invalid" || !strings.Contains(body.Error.Message, words) {
			t.Errorf("%s (%s): %d %s; want 422 saying %q", h.Name, h.What, resp.status, resp.body, words)
		}
	}
	if docs := listDocs(t, base, alice); len(docs) != 0 {
		t.Fatalf("refused uploads stored %d documents", len(docs))
	}
}

// TestDocumentNamesWithInvisibleCharacters: a name with a bidirectional override
// (U+202E shows "invoice\u202Efdp.exe" as "invoiceexe.pdf") or a zero-width space is refused
// with 422 naming the character; nothing is stored. A name in another script, and one with
// the zero-width joiner an emoji needs, is kept as it is.
func TestDocumentNamesWithInvisibleCharacters(t *testing.T) {
	t.Parallel()
	base, alice, _ := docServer(t, 1<<20)
	for name, code := range map[string]string{"invoice\u202efdp.exe": "U+202E", "a\u200bb.txt": "U+200B", "x\u2066y.txt": "U+2066"} {
		resp := upload(t, base, alice, url.QueryEscape(name), "text/plain", []byte("hello"))
		if resp.status != 422 || !strings.Contains(string(resp.body), "invisible character ("+code+")") {
			t.Errorf("upload named %q: %d %s; want 422 naming %s", name, resp.status, resp.body, code)
		}
	}
	if docs := listDocs(t, base, alice); len(docs) != 0 {
		t.Fatalf("refused names stored %d documents: %+v", len(docs), docs)
	}
	for _, name := range []string{"Überweisung.txt", "家族\u200d👨\u200d👩\u200d👧.txt"} {
		if resp := upload(t, base, alice, url.QueryEscape(name), "text/plain", []byte("hello")); resp.status != 201 {
			t.Errorf("upload named %q: %d %s; want 201", name, resp.status, resp.body)
		}
	}
}

// TestBusyReadersAnswer429: when every reading slot of the process stays taken (uploads of a
// document that runs to its deadline), a further upload waits briefly, then answers 429 with
// Retry-After and words; the others are refused 422 as usual, and nothing is a 500.
func TestBusyReadersAnswer429(t *testing.T) {
	t.Parallel()
	readers := doctext.NewReaders(1, 1, doctext.BusyWait)
	base, alice, _ := docServerWith(t, 1<<20, readers)
	objstm := documenttest.PDFObjectStream()
	slots, _ := readers.Slots()
	n := 5 * slots // waves of 1.5 s each: the fifth waits past BusyWait
	answers := make(chan response, n)
	for range n {
		go func() { answers <- upload(t, base, alice, "objstm.pdf", "application/pdf", objstm) }()
	}
	busy := 0
	for range n {
		resp := <-answers
		switch {
		case resp.status == 429:
			busy++
			if resp.header.Get("Retry-After") == "" || !strings.Contains(string(resp.body), "try again in") {
				t.Errorf("429 without Retry-After or words: %v %s", resp.header, resp.body)
			}
		case resp.status != 422:
			t.Errorf("upload answered %d %s; want 422 or 429", resp.status, resp.body)
		}
	}
	if busy == 0 {
		t.Fatalf("none of %d uploads at once (%d readers) was told to come back later", n, slots)
	}
}

// TestManyNamespacesAre422: a DOCX whose one start tag declares a million namespaces or more
// made the reading child run out of its memory, and the runtime's words for that ("cannot
// allocate memory") answered 500 on main. Each upload answers 422 too_complex: the tag is
// refused while it streams (MaxXMLTagBytes), and a child's death for memory is too_complex
// whatever its words (childproc.OutOfMemory).
func TestManyNamespacesAre422(t *testing.T) {
	t.Parallel()
	base, alice, _ := docServerWith(t, 20<<20, doctext.NewReaders(1, 1, doctext.BusyWait))
	for _, mb := range []int{9, 12} {
		resp := upload(t, base, alice, "manyns.docx", "application/octet-stream", documenttest.DOCXManyNamespaces(mb<<20))
		var body struct {
			Error struct{ Code, Reason, Message string }
		}
		_ = json.Unmarshal(resp.body, &body)
		if resp.status != 422 || body.Error.Reason != doctext.ReasonTooComplex {
			t.Fatalf("manyns.docx: %d %s; want 422 too_complex", resp.status, resp.body)
		}
	}
}

// TestOneOwnerCannotTakeEveryReader: while alice's uploads hold the reading slots (two
// object streams, each read to its deadline), bob's nine-byte upload is still read — an owner
// holds at most her share (here one of two slots) — and alice's second upload, past her
// share, is the one told to come back later, naming the limit (on main: bob's was 429).
func TestOneOwnerCannotTakeEveryReader(t *testing.T) {
	t.Parallel()
	base, alice, bob := docServerWith(t, 1<<20, doctext.NewReaders(2, 1, 300*time.Millisecond))
	objstm := documenttest.PDFObjectStream()
	answers := make(chan response, 2)
	for range 2 {
		go func() { answers <- upload(t, base, alice, "objstm.pdf", "application/pdf", objstm) }()
	}
	time.Sleep(200 * time.Millisecond) // alice's readings have begun
	if resp := upload(t, base, bob, "note.txt", "text/plain", []byte("hi, world")); resp.status != 201 {
		t.Fatalf("bob's upload while alice's were read: %d %s; want 201", resp.status, resp.body)
	}
	var got []int
	for range 2 {
		resp := <-answers
		got = append(got, resp.status)
		if resp.status == 429 && !strings.Contains(string(resp.body), "STEWARD_DOCUMENT_READERS_PER_OWNER") {
			t.Errorf("alice's 429 does not name the limit: %s", resp.body)
		}
	}
	if !slices.Contains(got, 422) || !slices.Contains(got, 429) {
		t.Fatalf("alice's two uploads answered %v; want one read (422, its deadline) and one past her share (429)", got)
	}
}
