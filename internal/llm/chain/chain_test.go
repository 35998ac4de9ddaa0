package chain_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/chain"
	"github.com/stewardhq/steward/internal/llm/gemini"
	"github.com/stewardhq/steward/internal/llm/openai"
	"github.com/stewardhq/steward/internal/llm/retry"
	"github.com/stewardhq/steward/internal/steward"
)

// server is a fake provider answering every request with status and body, counting them and
// keeping the last request body.
type server struct {
	srv  *httptest.Server
	hits atomic.Int32
	last atomic.Value
}

func newServer(t *testing.T, status int, body string) *server {
	s := &server{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.last.Store(string(b))
		s.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

const (
	geminiUnavailable = `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`
	openaiAnswer      = `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test",
		"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Answered by the fallback."}}],
		"usage":{"prompt_tokens":40,"completion_tokens":6,"total_tokens":46}}`
	geminiAnswer = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Gemini here.","thoughtSignature":"c2lnbmF0dXJl"}]},"finishReason":"STOP"}],
		"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3}}`
)

func geminiModel(t *testing.T, s *server) llm.Model {
	m, err := gemini.New(context.Background(), gemini.Config{APIKey: "k", BaseURL: s.srv.URL, Model: "gemini-3.8-flash",
		Retry: retry.Policy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func openaiModel(t *testing.T, s *server) llm.Model {
	m, err := openai.New(openai.Config{APIKey: "k", BaseURL: s.srv.URL + "/v1", Model: "gpt-test", Retry: retry.Policy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// signed is a conversation Gemini produced: its model message carries a thought signature.
var signed = []steward.Message{
	{Role: steward.RoleUser, Parts: []steward.Part{{Text: "what is on my list?"}}},
	{Role: steward.RoleModel, Parts: []steward.Part{{ToolCall: &steward.ToolCall{ID: "call_1", Name: "list_tasks", Args: []byte(`{}`)},
		ProviderMeta: []byte("GEMINI-SIG")}}},
	{Role: steward.RoleUser, Parts: []steward.Part{{ToolResult: &steward.ToolResult{CallID: "call_1", Name: "list_tasks", Output: []byte(`[]`)}}}},
}

func TestGeminiUnavailableFallsBackToOpenAI(t *testing.T) {
	g := newServer(t, http.StatusServiceUnavailable, geminiUnavailable)
	o := newServer(t, http.StatusOK, openaiAnswer)
	c, err := chain.New(chain.Config{}, geminiModel(t, g), openaiModel(t, o))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "gemini-3.8-flash" {
		t.Fatalf("Name = %q, want the first model's", c.Name())
	}
	resp, err := c.Generate(context.Background(), llm.Request{Messages: signed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "Answered by the fallback." || resp.Model != "gpt-test" || resp.Usage.InputTokens != 40 {
		t.Fatalf("response = %q from %s, usage %+v", resp.Text(), resp.Model, resp.Usage)
	}
	if len(resp.Attempts) != 1 || resp.Attempts[0].Model != "gemini-3.8-flash" || resp.Attempts[0].Skipped ||
		!strings.Contains(resp.Attempts[0].Error, "503") {
		t.Fatalf("attempts = %+v, want the failed Gemini call", resp.Attempts)
	}
	if g.hits.Load() != 1 || o.hits.Load() != 1 {
		t.Fatalf("gemini hits %d, openai hits %d; want 1 and 1", g.hits.Load(), o.hits.Load())
	}
	if body := o.last.Load().(string); strings.Contains(body, "GEMINI-SIG") || strings.Contains(body, "R0VNSU5JLVNJRw") {
		t.Fatalf("OpenAI was sent Gemini's thought signature:\n%s", body)
	}
}

func TestBreakerSkipsAFailingProvider(t *testing.T) {
	g := newServer(t, http.StatusTooManyRequests, `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`)
	o := newServer(t, http.StatusOK, openaiAnswer)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	c, err := chain.New(chain.Config{Threshold: 2, Cooldown: time.Minute, Now: func() time.Time { return now }},
		geminiModel(t, g), openaiModel(t, o))
	if err != nil {
		t.Fatal(err)
	}
	call := func() llm.Response {
		t.Helper()
		resp, err := c.Generate(context.Background(), llm.Request{Messages: signed[:1]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	call()
	call()
	if g.hits.Load() != 2 {
		t.Fatalf("gemini hits = %d, want 2", g.hits.Load())
	}
	resp := call() // the breaker is open: Gemini is skipped
	if g.hits.Load() != 2 || len(resp.Attempts) != 1 || !resp.Attempts[0].Skipped {
		t.Fatalf("gemini hits = %d, attempts %+v; want Gemini skipped", g.hits.Load(), resp.Attempts)
	}
	now = now.Add(61 * time.Second) // cool-down over: one probe
	call()
	if g.hits.Load() != 3 {
		t.Fatalf("gemini hits = %d after the cool-down, want one probe", g.hits.Load())
	}
	call() // the probe failed: open again
	if g.hits.Load() != 3 {
		t.Fatalf("gemini hits = %d, want the breaker open again after a failed probe", g.hits.Load())
	}
}

func TestPrimaryKeepsItsSignaturesAndFallbackDropsItsOwn(t *testing.T) {
	o := newServer(t, http.StatusServiceUnavailable, `{"error":{"message":"down"}}`)
	g := newServer(t, http.StatusOK, geminiAnswer)
	// OpenAI first, Gemini as the fallback: Gemini's answer must lose its signature, which the
	// primary (a different model) could not accept later.
	c, err := chain.New(chain.Config{}, openaiModel(t, o), geminiModel(t, g))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Generate(context.Background(), llm.Request{Messages: signed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "Gemini here." || resp.Model == "" {
		t.Fatalf("response = %+v", resp)
	}
	for _, p := range resp.Message.Parts {
		if len(p.ProviderMeta) > 0 {
			t.Fatalf("fallback answer keeps provider meta %q", p.ProviderMeta)
		}
	}
	if body := g.last.Load().(string); strings.Contains(body, "R0VNSU5JLVNJRw") {
		t.Fatalf("the fallback Gemini was sent a signature it did not make:\n%s", body)
	}
}

func TestEveryModelFailingReportsEveryAttempt(t *testing.T) {
	g := newServer(t, http.StatusServiceUnavailable, geminiUnavailable)
	o := newServer(t, http.StatusBadGateway, `{"error":{"message":"bad gateway"}}`)
	c, _ := chain.New(chain.Config{}, geminiModel(t, g), openaiModel(t, o))
	resp, err := c.Generate(context.Background(), llm.Request{Messages: signed[:1]}, nil)
	if err == nil || !llm.IsUnavailable(err) {
		t.Fatalf("err = %v, want unavailable", err)
	}
	if len(resp.Attempts) != 2 || resp.Attempts[1].Model != "gpt-test" {
		t.Fatalf("attempts = %+v", resp.Attempts)
	}
}

func TestBadRequestDoesNotFallBack(t *testing.T) {
	g := newServer(t, http.StatusBadRequest, `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`)
	o := newServer(t, http.StatusOK, openaiAnswer)
	c, _ := chain.New(chain.Config{}, geminiModel(t, g), openaiModel(t, o))
	_, err := c.Generate(context.Background(), llm.Request{Messages: signed[:1]}, nil)
	if err == nil || o.hits.Load() != 0 {
		t.Fatalf("err = %v, openai hits %d; want the 400 returned and no fallback", err, o.hits.Load())
	}
}

// slow never answers before its context ends.
type slow struct{}

func (slow) Name() string { return "slow" }
func (slow) Generate(ctx context.Context, _ llm.Request, _ llm.DeltaFunc) (llm.Response, error) {
	<-ctx.Done()
	return llm.Response{}, ctx.Err()
}

func TestTimeoutFallsBack(t *testing.T) {
	o := newServer(t, http.StatusOK, openaiAnswer)
	c, _ := chain.New(chain.Config{AttemptTimeout: 50 * time.Millisecond}, slow{}, openaiModel(t, o))
	resp, err := c.Generate(context.Background(), llm.Request{Messages: signed[:1]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "gpt-test" || len(resp.Attempts) != 1 ||
		!strings.Contains(resp.Attempts[0].Error, "deadline") {
		t.Fatalf("response from %s, attempts %+v", resp.Model, resp.Attempts)
	}
}

// refusedURL is a loopback address where nothing listens: a connection there is refused.
func refusedURL(t *testing.T) string {
	s := httptest.NewServer(http.NotFoundHandler())
	url := s.URL
	s.Close()
	return url
}

// TestUnreachableModelFallsBack: a model whose server refuses connections is unavailable like
// a 503 — the call moves to the next model, streamed or not — and the error says it could not
// be reached.
func TestUnreachableModelFallsBack(t *testing.T) {
	gOK := newServer(t, http.StatusOK, geminiAnswer)
	oOK := newServer(t, http.StatusOK, openaiAnswer)
	gDown, err := gemini.New(context.Background(), gemini.Config{APIKey: "k", BaseURL: refusedURL(t), Model: "gemini-3.8-flash", Retry: retry.Policy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	oDown, err := openai.New(openai.Config{APIKey: "k", BaseURL: refusedURL(t) + "/v1", Model: "gpt-test", Retry: retry.Policy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		down, up     llm.Model
		stream       bool
		wantAnswered string
	}{
		{"gemini down", gDown, openaiModel(t, oOK), false, "gpt-test"},
		{"gemini down, streamed", gDown, openaiModel(t, oOK), true, "gpt-test"},
		{"openai down", oDown, geminiModel(t, gOK), false, "gemini-3.8-flash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := chain.New(chain.Config{}, tc.down, tc.up)
			if err != nil {
				t.Fatal(err)
			}
			var onDelta llm.DeltaFunc
			if tc.stream {
				onDelta = func(string) error { return nil }
			}
			resp, err := c.Generate(context.Background(), llm.Request{Messages: signed[:1]}, onDelta)
			if err != nil {
				t.Fatalf("no fallback: %v", err)
			}
			if resp.Model != tc.wantAnswered || len(resp.Attempts) != 1 || !strings.Contains(resp.Attempts[0].Error, "refused") {
				t.Fatalf("answered by %q, attempts %+v", resp.Model, resp.Attempts)
			}
		})
	}
	only, err := chain.New(chain.Config{}, gDown)
	if err != nil {
		t.Fatal(err)
	}
	_, err = only.Generate(context.Background(), llm.Request{Messages: signed[:1]}, nil)
	if !llm.IsUnavailable(err) || !llm.IsUnreachable(err) {
		t.Fatalf("err = %v: want unavailable and unreachable", err)
	}
}
