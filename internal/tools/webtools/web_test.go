package webtools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
	"github.com/stewardhq/steward/internal/tools/webtools"
	"github.com/stewardhq/steward/internal/web"
)

// site serves a page with a title, a plain text of 30 "ü", a 404 and a SearXNG search
// answering three results; it is the only address the egress guard allows.
func site(t *testing.T) *egresstest.Server {
	t.Helper()
	return egresstest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><head><title>Opening hours</title></head><body><article><p>The library opens at nine every weekday
and closes at six; on Saturdays it opens at ten and closes at one in the afternoon.</p></article></body></html>`)
		case "/umlauts":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprint(w, strings.Repeat("ü", 30))
		case "/search":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"results":[{"title":"One","url":"https://one.example/"},{"title":"Two","url":"https://two.example/"},
				{"title":"Three","url":"https://three.example/"}]}`)
		default:
			http.NotFound(w, r)
		}
	})
}

// registry is web_fetch through the real egress-guarded fetcher and web_search through the
// real SearXNG client, both allowed to reach only s.
func registry(t *testing.T, s *egresstest.Server) *tools.Registry {
	t.Helper()
	client := egress.NewClient(egress.Options{AllowHTTP: true, Lookup: egresstest.Lookup, Allow: []netip.AddrPort{s.Addr()}})
	reg, err := tools.NewRegistry(webtools.Tools(&web.Fetcher{Client: client}, &web.SearXNG{Client: client, BaseURL: s.URL})...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func run(t *testing.T, reg *tools.Registry, name, args string) (map[string]any, error) {
	t.Helper()
	out, err := reg.Run(context.Background(), tools.Env{}, name, json.RawMessage(args))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s output %s: %v", name, out, err)
	}
	return m, nil
}

// TestWebToolsAreWhatTheyDeclare: both are reads that need no store (they run with none);
// web_fetch sends its URL out (egress: in a tainted turn it waits for the owner) and both
// bring in a stranger's text (untrusted). Without a search backend only web_fetch exists.
func TestWebToolsAreWhatTheyDeclare(t *testing.T) {
	s := site(t)
	reg := registry(t, s)
	want := map[string]string{"web_fetch": "read egress untrusted", "web_search": "read untrusted"}
	args := map[string]string{"web_fetch": `{"url":"` + s.URL + `/page"}`, "web_search": `{"query":"library hours"}`}
	if names := reg.Names(); len(names) != len(want) {
		t.Fatalf("the web's tools are %q; want %d", names, len(want))
	}
	for name, policy := range want {
		tool, _ := reg.Get(name)
		if got := toolstest.Policy(tool); got != policy {
			t.Errorf("%s declares %q; want %q", name, got, policy)
		}
		if _, err := run(t, reg, name, args[name]); err != nil {
			t.Errorf("%s with no store: %v", name, err)
		}
	}
	if s.Hits.Load() != 2 {
		t.Errorf("the site served %d requests; want one for each tool", s.Hits.Load())
	}
	if only := webtools.Tools(&web.Fetcher{}, nil); len(only) != 1 || only[0].Name != "web_fetch" {
		t.Errorf("without a search backend the tools are %d; want web_fetch alone", len(only))
	}
}

// TestWebFetchReadsAndCuts: a page comes back as its readable text with its title; a text
// longer than max_chars is cut at that many characters — never inside one — and says so.
func TestWebFetchReadsAndCuts(t *testing.T) {
	s := site(t)
	reg := registry(t, s)
	page, err := run(t, reg, "web_fetch", `{"url":"  `+s.URL+`/page  "}`)
	if err != nil {
		t.Fatal(err)
	}
	if page["title"] != "Opening hours" || !strings.Contains(page["text"].(string), "opens at nine") || page["truncated"] != nil {
		t.Errorf("page = %+v; want its title and whole text", page)
	}
	out, _ := json.Marshal(page)
	if got := reg.SayResult("web_fetch", nil, out, false); got != `Read “Opening hours”` {
		t.Errorf("web_fetch's result reads %q", got)
	}
	cut, err := run(t, reg, "web_fetch", `{"url":"`+s.URL+`/umlauts","max_chars":7}`)
	if err != nil {
		t.Fatal(err)
	}
	text := cut["text"].(string)
	if text != strings.Repeat("ü", 7) || !utf8.ValidString(text) || cut["truncated"] != true ||
		cut["note"] != "the text was cut at 7 of 30 characters" {
		t.Errorf("cut = %+v; want 7 whole characters and a note saying 7 of 30", cut)
	}
}

// TestWebSearchKeepsToMaxResults: web_search returns at most max_results sources, whatever
// the backend sends, and a backend's model call is counted for the turn even when the search
// then fails.
func TestWebSearchKeepsToMaxResults(t *testing.T) {
	s := site(t)
	reg := registry(t, s)
	res, err := run(t, reg, "web_search", `{"query":"  things  ","max_results":2}`)
	if err != nil {
		t.Fatal(err)
	}
	if sources := res["sources"].([]any); len(sources) != 2 {
		t.Errorf("sources = %v; want 2", sources)
	}

	var spent []string
	env := tools.Env{Spend: func(model string, u steward.Usage) { spent = append(spent, fmt.Sprint(model, " ", u.InputTokens)) }}
	generous := &backend{res: steward.SearchResult{Model: "search-model", Usage: steward.Usage{InputTokens: 40},
		Sources: make([]steward.SearchSource, 9)}}
	greg, err := tools.NewRegistry(webtools.Search(generous))
	if err != nil {
		t.Fatal(err)
	}
	out, err := greg.Run(context.Background(), env, "web_search", json.RawMessage(`{"query":"x","max_results":3}`))
	if err != nil {
		t.Fatal(err)
	}
	var got steward.SearchResult
	if err := json.Unmarshal(out, &got); err != nil || len(got.Sources) != 3 {
		t.Errorf("a backend sending 9 sources for 3: %s, %v; want 3", out, err)
	}
	generous.err = errors.New("quota exhausted")
	if _, err := greg.Run(context.Background(), env, "web_search", json.RawMessage(`{"query":"x"}`)); !strings.Contains(fmt.Sprint(err), "the search failed: quota exhausted") {
		t.Errorf("a failed search = %v; want an error the model reads, saying why", err)
	}
	if len(spent) != 2 || spent[0] != "search-model 40" || spent[1] != "search-model 40" {
		t.Errorf("spent = %q; want the backend's model call counted both times", spent)
	}
}

// backend is a search backend that sends what it is given, however many were asked for.
type backend struct {
	res steward.SearchResult
	err error
}

func (b *backend) Search(context.Context, string, int) (steward.SearchResult, error) {
	return b.res, b.err
}

// TestWebToolsRefuseBadArguments: a mistake is an *ArgError naming the argument — a URL
// the guard refuses is refused before connecting, a 404 is the model's to read — and a
// cancelled call is the caller's cancellation, not a bad URL.
func TestWebToolsRefuseBadArguments(t *testing.T) {
	s := site(t)
	reg := registry(t, s)
	for _, c := range []struct{ tool, args, field, says string }{
		{"web_fetch", `{"url":" "}`, "url", "must not be empty"},
		{"web_fetch", `{"url":"` + s.URL + `/page","max_chars":100001}`, "max_chars", "100000"},
		{"web_fetch", `{"url":"` + s.URL + `/missing"}`, "url", "404"},
		{"web_fetch", `{"url":"http://private.example/"}`, "url", ""},
		{"web_fetch", `{"url":"http://169.254.169.254/latest/meta-data/"}`, "url", ""},
		{"web_fetch", `{"url":"ftp://example.com/file"}`, "url", ""},
		{"web_fetch", `{"url":"` + s.URL + `","headers":{}}`, "", "headers"},
		{"web_search", `{"query":""}`, "query", "must not be empty"},
		{"web_search", `{"query":"x","max_results":11}`, "max_results", "10"},
	} {
		_, err := run(t, reg, c.tool, c.args)
		ae, ok := errors.AsType[*tools.ArgError](err)
		if !ok {
			t.Errorf("%s(%s) = %v; want an *ArgError", c.tool, c.args, err)
			continue
		}
		if ae.Field != c.field || !strings.Contains(ae.Error(), c.says) {
			t.Errorf("%s(%s) = %q (field %q); want field %q and %q", c.tool, c.args, ae, ae.Field, c.field, c.says)
		}
	}
	if s.Hits.Load() != 1 {
		t.Errorf("the site served %d requests; want only the 404's", s.Hits.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := reg.Run(ctx, tools.Env{}, "web_fetch", json.RawMessage(`{"url":"`+s.URL+`/page"}`))
	if !errors.Is(err, context.Canceled) || tools.ForModel(err) {
		t.Errorf("a cancelled fetch = %v; want the cancellation, not an error about the URL", err)
	}
	none, err := tools.NewRegistry(webtools.Tools(nil, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.Run(context.Background(), tools.Env{}, "web_fetch", json.RawMessage(`{"url":"https://example.com/"}`)); err == nil ||
		!strings.Contains(err.Error(), "no fetcher") {
		t.Errorf("web_fetch without a fetcher = %v; want an error saying so", err)
	}
}
