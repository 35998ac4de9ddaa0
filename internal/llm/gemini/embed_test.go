package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llm/retry"
)

// testDimension is the embedding dimension the tests ask for: memory's (memory.Dimension).
const testDimension = 768

// fakeEmbedAPI fakes the Gemini REST API's batchEmbedContents: each request is answered by
// the next scripted reply (then by successes), and recorded.
type fakeEmbedAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	replies  []embedReply
	requests []embedRequest
	times    []time.Time
}

// embedReply is a scripted error answer; a zero status means success.
type embedReply struct {
	status     int
	retryAfter string
	body       string
}

type embedRequest struct {
	path, apiKey string
	Requests     []struct {
		Model                string `json:"model"`
		OutputDimensionality int    `json:"outputDimensionality"`
		Content              struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
	} `json:"requests"`
}

func newFakeEmbedAPI(t *testing.T, replies ...embedReply) *fakeEmbedAPI {
	f := &fakeEmbedAPI{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEmbedAPI) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	req := embedRequest{path: r.URL.Path, apiKey: r.Header.Get("x-goog-api-key")}
	if err := json.Unmarshal(raw, &req); err != nil {
		f.t.Errorf("fake: decode %s: %v", raw, err)
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.times = append(f.times, time.Now())
	var rep embedReply
	if len(f.replies) > 0 {
		rep, f.replies = f.replies[0], f.replies[1:]
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if rep.status != 0 {
		if rep.retryAfter != "" {
			w.Header().Set("Retry-After", rep.retryAfter)
		}
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
		return
	}
	// Each text's vector is (3, 4, 0…, 12 at 2+len(text), 0…) — norm 13 — so that both the
	// normalisation and the order can be checked.
	var resp struct {
		Embeddings []map[string][]float32 `json:"embeddings"`
	}
	for _, rq := range req.Requests {
		v := make([]float32, rq.OutputDimensionality)
		v[0], v[1] = 3, 4
		v[2+len(rq.Content.Parts[0].Text)] = 12
		resp.Embeddings = append(resp.Embeddings, map[string][]float32{"values": v})
	}
	json.NewEncoder(w).Encode(resp)
}

func (f *fakeEmbedAPI) embedder(t *testing.T, cfg EmbedderConfig) *Embedder {
	t.Helper()
	cfg.APIKey, cfg.BaseURL, cfg.Dimension = "test-key", f.srv.URL, testDimension
	if cfg.Retry.Backoff == 0 {
		cfg.Retry.Backoff = time.Millisecond
	}
	g, err := NewEmbedder(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func rateLimited(retryDelay string) string {
	details := ""
	if retryDelay != "" {
		details = fmt.Sprintf(`,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":%q}]`, retryDelay)
	}
	return `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"` + details + `}}`
}

func TestEmbedderBatchesAndNormalises(t *testing.T) {
	t.Parallel()
	f := newFakeEmbedAPI(t)
	g := f.embedder(t, EmbedderConfig{})
	texts := make([]string, 250)
	for i := range texts {
		texts[i] = strings.Repeat("x", 1+i%700)
	}
	vs, err := g.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.requests) != 3 || len(f.requests[0].Requests) != 100 || len(f.requests[1].Requests) != 100 || len(f.requests[2].Requests) != 50 {
		t.Fatalf("requests = %d, want batches of 100, 100, 50", len(f.requests))
	}
	r := f.requests[0]
	if !strings.HasSuffix(r.path, "/models/gemini-embedding-001:batchEmbedContents") || r.apiKey != "test-key" {
		t.Errorf("request %s with key %q", r.path, r.apiKey)
	}
	if q := r.Requests[0]; q.OutputDimensionality != testDimension || q.Model != "models/gemini-embedding-001" || q.Content.Parts[0].Text != texts[0] {
		t.Errorf("first embed request = %+v", q)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if math.Abs(sum-1) > 1e-5 || math.Abs(float64(v[0])-3.0/13) > 1e-6 || math.Abs(float64(v[2+len(texts[i])])-12.0/13) > 1e-6 {
			t.Fatalf("vector %d is not the normalised vector of its own text (norm² %v)", i, sum)
		}
	}
	if g.Name() != EmbeddingModel || g.Dimension() != testDimension {
		t.Errorf("name %q, dimension %d", g.Name(), g.Dimension())
	}
	if _, err := g.Embed(context.Background(), []string{"ok", " "}); err == nil {
		t.Error("an empty text was embedded")
	}
}

func TestEmbedderRetriesWhenRateLimited(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		reply    embedReply
		requests int
		minWait  time.Duration
		fails    bool
	}{
		{"Retry-After header honoured", embedReply{status: 429, retryAfter: "1", body: rateLimited("")}, 2, time.Second, false},
		{"RetryInfo delay honoured", embedReply{status: 429, body: rateLimited("0.3s")}, 2, 300 * time.Millisecond, false},
		{"no hint: backoff", embedReply{status: 503, body: `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`}, 2, 0, false},
		{"wait longer than MaxBackoff: give up", embedReply{status: 429, retryAfter: "120", body: rateLimited("")}, 1, 0, true},
		{"client error: no retry", embedReply{status: 400, body: `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`}, 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeEmbedAPI(t, tt.reply)
			g := f.embedder(t, EmbedderConfig{Retry: retry.Policy{MaxWait: 5 * time.Second}})
			vs, err := g.Embed(context.Background(), []string{"hello"})
			if (err != nil) != tt.fails {
				t.Fatalf("embed: %v, want failure %v", err, tt.fails)
			}
			if len(f.requests) != tt.requests {
				t.Fatalf("%d requests, want %d", len(f.requests), tt.requests)
			}
			if !tt.fails && len(vs) != 1 {
				t.Fatalf("%d vectors", len(vs))
			}
			if tt.requests == 2 {
				if waited := f.times[1].Sub(f.times[0]); waited < tt.minWait {
					t.Errorf("retried after %s, the server asked for %s", waited, tt.minWait)
				}
			}
		})
	}
}

// TestGeminiRetryRespectsDeadline: a wait past the caller's deadline (recall has 3 s) fails
// at once instead of sleeping through it.
func TestEmbedderRetryRespectsDeadline(t *testing.T) {
	t.Parallel()
	f := newFakeEmbedAPI(t, embedReply{status: 429, retryAfter: "2", body: rateLimited("")})
	g := f.embedder(t, EmbedderConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err := g.Embed(ctx, []string{"hello"})
	// It gives up when it learns the wait, not when the deadline ends it (the machine may be
	// slow, so the proof is the reason, not a stopwatch).
	if err == nil || !strings.Contains(err.Error(), "would pass the deadline") || ctx.Err() != nil {
		t.Fatalf("embed: %v (context: %v), want the retry refused before the deadline", err, ctx.Err())
	}
	if len(f.requests) != 1 {
		t.Errorf("%d requests, want 1 (no retry)", len(f.requests))
	}
}
