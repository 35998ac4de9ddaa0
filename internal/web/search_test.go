package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/webtools"
	"github.com/stewardhq/steward/internal/web"
)

// search runs web_search as the agent does.
func search(t *testing.T, s webtools.Searcher, args string) (steward.SearchResult, error) {
	t.Helper()
	reg, err := tools.NewRegistry(webtools.Search(s))
	if err != nil {
		t.Fatal(err)
	}
	out, err := reg.Run(context.Background(), tools.Env{}, "web_search", json.RawMessage(args))
	if err != nil {
		return steward.SearchResult{}, err
	}
	var res steward.SearchResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res, nil
}

// TestWebSearchSearXNG: with STEWARD_SEARCH_URL the instance's JSON API is asked, through
// the egress client (its private address allowed explicitly), and its results returned.
func TestWebSearchSearXNG(t *testing.T) {
	t.Parallel()
	fake := egresstest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" || r.URL.Query().Get("q") != "go 1.27 release notes" {
			http.Error(w, "bad query "+r.URL.String(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"query":"go 1.27 release notes","results":[
			{"title":"Go 1.27 Release Notes","url":"https://go.dev/doc/go1.27","content":"The latest Go release."},
			{"title":"no url"},
			{"title":"Go blog","url":"https://go.dev/blog/","content":"News."},
			{"title":"Third","url":"https://example.org/3","content":"..."}]}`)
	})
	client := egress.NewClient(egress.Options{AllowHTTP: true, Allow: []netip.AddrPort{fake.Addr()}})
	res, err := search(t, &web.SearXNG{Client: client, BaseURL: fake.URL + "/"}, `{"query":"  go 1.27 release notes ","max_results":2}`)
	if err != nil {
		t.Fatal(err)
	}
	want := steward.SearchResult{Sources: []steward.SearchSource{
		{Title: "Go 1.27 Release Notes", URL: "https://go.dev/doc/go1.27", Snippet: "The latest Go release."},
		{Title: "Go blog", URL: "https://go.dev/blog/", Snippet: "News."},
	}}
	if fmt.Sprint(res) != fmt.Sprint(want) {
		t.Errorf("result %+v, want %+v", res, want)
	}

	// Without the allowance the same instance is a private address: refused, never reached.
	hits := fake.Hits.Load()
	strict := &web.SearXNG{Client: egress.NewClient(egress.Options{AllowHTTP: true}), BaseURL: fake.URL}
	if _, err := search(t, strict, `{"query":"anything"}`); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a private SearXNG without allowance: %v", err)
	}
	if fake.Hits.Load() != hits {
		t.Error("the refused instance was reached")
	}
	if _, err := search(t, strict, `{"query":"x","max_results":11}`); err == nil || !strings.Contains(err.Error(), "max_results") {
		t.Errorf("max_results 11: %v", err)
	}
}
