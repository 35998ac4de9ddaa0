package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/webtools"
)

// search runs web_search on s as the agent does; spent lists the model calls it reported to
// its Env ("model in out").
func search(t *testing.T, s webtools.Searcher, args string) (res steward.SearchResult, spent []string, err error) {
	t.Helper()
	reg, err := tools.NewRegistry(webtools.Search(s))
	if err != nil {
		t.Fatal(err)
	}
	out, err := reg.Run(context.Background(), tools.Env{Spend: func(model string, u steward.Usage) {
		spent = append(spent, model+" "+fmt.Sprint(u.InputTokens, u.OutputTokens))
	}},
		"web_search", json.RawMessage(args))
	if err != nil {
		return steward.SearchResult{}, spent, err
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res, spent, nil
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

// TestSearcherGrounded: web_search's default backend makes one generateContent call with
// the Google Search tool and returns the answer and the grounding sources (deduplicated,
// capped).
func TestSearcherGrounded(t *testing.T) {
	t.Parallel()
	var path, body string
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		path, body = r.URL.Path, string(b)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, geminiAnswer)
	}))
	t.Cleanup(fake.Close)
	g, err := NewSearcher(context.Background(), "test-key", fake.URL, "gemini-fast", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, spent, err := search(t, g, `{"query":"who won euro 2024","max_results":2}`)
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
	// The grounded search is a model call of its own: its tokens are the turn's to count.
	if len(spent) != 1 || spent[0] != "gemini-fast 12 14" {
		t.Errorf("spent %q, want the search's one call of gemini-fast, 12 tokens in and 14 out", spent)
	}
}
