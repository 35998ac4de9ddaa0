package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// geminiAnswer is a generateContent answer grounded in Google Search, as the REST API sends
// it (https://ai.google.dev/gemini-api/docs/google-search).
const geminiAnswer = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Spain won Euro 2024, beating England 2-1."}]},
 "finishReason":"STOP",
 "groundingMetadata":{"webSearchQueries":["euro 2024 winner"],
  "groundingChunks":[
   {"web":{"uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/aaa","title":"uefa.com"}},
   {"web":{"uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/bbb","title":"bbc.com"}},
   {"web":{"uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/aaa","title":"uefa.com"}},
   {"web":{"uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/ccc","title":"aljazeera.com"}}]}}],
 "usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":14,"totalTokenCount":26}}`

// TestWebSearchGemini: the default backend makes one generateContent call with the Google
// Search tool and returns the answer and the grounding sources (deduplicated, capped).
func TestWebSearchGemini(t *testing.T) {
	t.Parallel()
	var path, body string
	fake := egresstest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		path, body = r.URL.Path, string(b)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, geminiAnswer)
	})
	g, err := web.NewGemini(context.Background(), "test-key", fake.URL, "gemini-fast", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := search(t, g, `{"query":"who won euro 2024","max_results":2}`)
	if err != nil {
		t.Fatal(err)
	}
	if path != "/v1beta/models/gemini-fast:generateContent" {
		t.Errorf("path %s", path)
	}
	var req struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil || len(req.Tools) != 1 || req.Tools[0]["googleSearch"] == nil {
		t.Errorf("the request does not ask for Google Search grounding: %s", body)
	}
	if !strings.Contains(body, "who won euro 2024") {
		t.Errorf("the query is not in the request: %s", body)
	}
	want := steward.SearchResult{Answer: "Spain won Euro 2024, beating England 2-1.", Sources: []steward.SearchSource{
		{Title: "uefa.com", URL: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/aaa"},
		{Title: "bbc.com", URL: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/bbb"},
	}}
	if fmt.Sprint(res) != fmt.Sprint(want) {
		t.Errorf("result %+v, want %+v", res, want)
	}
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
