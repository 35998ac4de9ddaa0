package doctools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/doctools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
	"github.com/stewardhq/steward/internal/web"
)

// page is what the test site serves: an article with a title, a paragraph about tide tables.
const page = `<!doctype html><html><head><title>Harbour notes</title></head><body><article>
<h1>Harbour notes</h1><p>The tide tables for the northern harbour are posted at the ferry office every Monday morning,
and the high water mark this spring reached the second step of the old stone quay.</p>
<p>Boats moored on the east pontoon must register with the harbour master before the first of April.</p>
</article></body></html>`

// shelf is one owner's documents over a real database and the real document service (the
// offline embedder), with save_document fetching through the real egress-guarded fetcher
// from a loopback site, the only address allowed.
type shelf struct {
	docs  *document.Service
	owner uuid.UUID
	site  *egresstest.Server
	reg   *tools.Registry
}

func newShelf(t *testing.T, d testdb.Opened, name string) shelf {
	t.Helper()
	o, _ := d.Owner(t, name)
	site := egresstest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/notes":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, page)
		case "/empty":
			w.Header().Set("Content-Type", "text/plain")
		default:
			http.NotFound(w, r)
		}
	})
	docs := &document.Service{Store: d.Store, Embedder: memory.Offline{}}
	s := shelf{docs: docs, owner: o.ID, site: site}
	s.reg = s.registry(t, docs)
	return s
}

func (s shelf) registry(t *testing.T, docs doctools.Documents) *tools.Registry {
	t.Helper()
	fetcher := &web.Fetcher{Client: egress.NewClient(egress.Options{AllowHTTP: true, Lookup: egresstest.Lookup,
		Allow: []netip.AddrPort{s.site.Addr()}})}
	reg, err := tools.NewRegistry(doctools.Tools(docs, fetcher)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// run calls a document tool for the owner and decodes its output into v; it returns the
// inverse a write handed for the undo window.
func (s shelf) run(t *testing.T, reg *tools.Registry, name, args string, v any) (*steward.Inverse, error) {
	t.Helper()
	var inv *steward.Inverse
	env := tools.Env{OwnerID: s.owner, TurnID: uuid.New(), Undo: func(i steward.Inverse) { inv = &i }}
	out, err := reg.Run(context.Background(), env, name, json.RawMessage(args))
	if err == nil && v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("%s output %s: %v", name, out, err)
		}
	}
	return inv, err
}

func (s shelf) url(path string) string { return s.site.URL + path }

func (s shelf) count(t *testing.T) int {
	t.Helper()
	docs, err := s.docs.List(context.Background(), s.owner)
	if err != nil {
		t.Fatal(err)
	}
	return len(docs)
}

// noSaving is the owner's real documents with saving refused.
type noSaving struct{ doctools.Documents }

var errWrote = errors.New("a document was saved")

func (noSaving) SavePage(context.Context, uuid.UUID, steward.SavedPage) (steward.Document, error) {
	return steward.Document{}, errWrote
}

// TestDocumentTools runs the document tools' tests over one real database, an owner each.
func TestDocumentTools(t *testing.T) {
	d := testdb.Open(t, 4)
	for name, test := range map[string]func(*testing.T, shelf){
		"AreWhatTheyDeclare": areWhatTheyDeclare,
		"SaveReadAndFind":    saveReadAndFind,
		"RefuseBadArguments": refuseBadArguments,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newShelf(t, d, name))
		})
	}
}

// areWhatTheyDeclare: listing is a plain read; reading and searching a document's text are
// reads whose output is outside content (they taint the turn); saving fetches a URL out of
// Steward, so it is an External write, asked every time, whose stored row can be undone.
// True of what each does: the reads run with saving refused and fetch nothing; the write is
// stopped by the refusal, after one fetch.
func areWhatTheyDeclare(t *testing.T, s shelf) {
	want := map[string]string{
		"list_documents":   "read",
		"read_document":    "read untrusted",
		"search_documents": "read untrusted",
		"save_document":    "write external untrusted reversible",
	}
	var saved struct {
		Document steward.Document `json:"document"`
	}
	if _, err := s.run(t, s.reg, "save_document", `{"url":"`+s.url("/notes")+`"}`, &saved); err != nil {
		t.Fatal(err)
	}
	args := map[string]string{
		"list_documents":   `{}`,
		"read_document":    `{"id":"` + saved.Document.ID.String() + `"}`,
		"search_documents": `{"query":"tide tables"}`,
		"save_document":    `{"url":"` + s.url("/notes") + `","name":"again"}`,
	}
	guarded := s.registry(t, noSaving{s.docs})
	hits := s.site.Hits.Load()
	for name, policy := range want {
		tool, _ := guarded.Get(name)
		if got := toolstest.Policy(tool); got != policy {
			t.Errorf("%s declares %q; want %q", name, got, policy)
		}
		if tool.Kind == steward.KindWrite && tool.AlwaysOffered() {
			t.Errorf("%s offers an \"always\" rule though it sends a URL out", name)
		}
		_, err := s.run(t, guarded, name, args[name], nil)
		switch {
		case tool.Kind == steward.KindRead && err != nil:
			t.Errorf("%s, a read, failed with saving refused: %v", name, err)
		case tool.Kind == steward.KindWrite && !errors.Is(err, errWrote):
			t.Errorf("%s, a write, = %v with saving refused; want stopped by the refusal", name, err)
		}
	}
	if got := s.site.Hits.Load() - hits; got != 1 {
		t.Errorf("the site served %d requests to the four tools; want the one of save_document", got)
	}
	if n := s.count(t); n != 1 {
		t.Errorf("%d documents; want the one saved before", n)
	}
}

// saveReadAndFind: a page saved by URL becomes a document named by its title, with an undo
// that deletes it; it is listed, read in pages (next_offset says where the rest starts) and
// found by meaning.
func saveReadAndFind(t *testing.T, s shelf) {
	var saved struct {
		Document steward.Document `json:"document"`
	}
	inv, err := s.run(t, s.reg, "save_document", `{"url":" `+s.url("/notes")+` "}`, &saved)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Document.Name != "Harbour notes" || saved.Document.Source != "tool" {
		t.Errorf("saved %+v; want it named by the page's title, from a tool", saved.Document)
	}
	if inv == nil || inv.Op != steward.UndoDeleteDocument || inv.ID != saved.Document.ID {
		t.Errorf("inverse %+v; want the document deleted on undo", inv)
	}
	if got := s.reg.SayResult("save_document", nil, mustJSON(t, saved), false); got != `Saved “Harbour notes”` {
		t.Errorf("save_document's result reads %q", got)
	}

	var named struct {
		Document steward.Document `json:"document"`
	}
	if _, err := s.run(t, s.reg, "save_document", `{"url":"`+s.url("/notes")+`","name":"Quay"}`, &named); err != nil || named.Document.Name != "Quay" {
		t.Errorf("saved with a name = %+v, %v; want it named Quay", named.Document, err)
	}

	var listed struct {
		Documents []steward.Document `json:"documents"`
	}
	if _, err := s.run(t, s.reg, "list_documents", `{}`, &listed); err != nil || len(listed.Documents) != 2 || listed.Documents[0].Name != "Quay" {
		t.Errorf("list = %+v, %v; want the two, newest first", listed.Documents, err)
	}

	id := saved.Document.ID.String()
	var first, rest steward.DocumentText
	if _, err := s.run(t, s.reg, "read_document", `{"id":"`+id+`","max_chars":40}`, &first); err != nil {
		t.Fatal(err)
	}
	if len([]rune(first.Text)) != 40 || first.NextOffset != 40 || !strings.HasPrefix(first.Text, "The tide tables") {
		t.Errorf("first page = %q, next %d; want 40 characters and the rest at 40", first.Text, first.NextOffset)
	}
	if _, err := s.run(t, s.reg, "read_document", fmt.Sprintf(`{"id":%q,"offset":%d}`, id, first.NextOffset), &rest); err != nil {
		t.Fatal(err)
	}
	if rest.NextOffset != 0 || !strings.Contains(rest.Text, "harbour master") {
		t.Errorf("the rest = %q, next %d; want the end of the text", rest.Text, rest.NextOffset)
	}

	var found struct {
		Results []steward.DocumentHit `json:"results"`
	}
	if _, err := s.run(t, s.reg, "search_documents", `{"query":"tide tables at the ferry office","max_results":1}`, &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Results) != 1 || !strings.Contains(found.Results[0].Text, "tide tables") {
		t.Errorf("search = %+v; want one passage about the tide tables", found.Results)
	}
}

// refuseBadArguments: a mistake — a malformed or unknown id, a bound overstepped, an empty
// query, a URL the fetcher refuses or that has no text — is an *ArgError naming the argument,
// and stores nothing. A URL outside the egress allow-list is refused before connecting.
func refuseBadArguments(t *testing.T, s shelf) {
	for _, c := range []struct{ tool, args, field, says string }{
		{"read_document", `{"id":"doc-1"}`, "id", ""},
		{"read_document", `{"id":"` + uuid.NewString() + `"}`, "id", "list_documents"},
		{"read_document", `{"id":"` + uuid.NewString() + `","offset":-1}`, "offset", "negative"},
		{"read_document", `{"id":"` + uuid.NewString() + `","max_chars":100001}`, "max_chars", "100000"},
		{"search_documents", `{"query":"   "}`, "query", "must not be empty"},
		{"search_documents", `{"query":"` + strings.Repeat("q", 501) + `"}`, "query", "too long"},
		{"search_documents", `{"query":"tide","max_results":21}`, "max_results", "20"},
		{"save_document", `{"url":""}`, "url", "must not be empty"},
		{"save_document", `{"url":"` + s.url("/notes") + `","name":"` + strings.Repeat("n", 256) + `"}`, "name", "too long"},
		{"save_document", `{"url":"` + s.url("/missing") + `"}`, "url", "404"},
		{"save_document", `{"url":"` + s.url("/empty") + `"}`, "url", "no text"},
		{"save_document", `{"url":"http://private.example/notes"}`, "url", ""},
		{"save_document", `{"url":"file:///etc/passwd"}`, "url", ""},
		{"list_documents", `{"all":true}`, "", "all"},
	} {
		_, err := s.run(t, s.reg, c.tool, c.args, nil)
		ae, ok := errors.AsType[*tools.ArgError](err)
		if !ok {
			t.Errorf("%s(%.80s) = %v; want an *ArgError", c.tool, c.args, err)
			continue
		}
		if ae.Field != c.field || !strings.Contains(ae.Error(), c.says) {
			t.Errorf("%s(%.80s) = %q (field %q); want field %q and %q", c.tool, c.args, ae, ae.Field, c.field, c.says)
		}
	}
	if n := s.count(t); n != 0 {
		t.Errorf("refused calls stored %d documents", n)
	}
}

// TestSaveDocumentWithoutAFetcher: a registry built without a fetcher refuses save_document
// with an error, not a panic.
func TestSaveDocumentWithoutAFetcher(t *testing.T) {
	reg, err := tools.NewRegistry(doctools.Tools(nil, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Run(context.Background(), tools.Env{}, "save_document", json.RawMessage(`{"url":"https://example.com/"}`)); err == nil ||
		!strings.Contains(err.Error(), "no fetcher") {
		t.Errorf("save_document without a fetcher = %v; want an error saying so", err)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
