package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

const (
	testModel  = "gemini-test"
	testAPIKey = "test-key"
)

// fakeGemini fakes the Gemini REST API: each request is answered with the next scripted reply
// and recorded for assertions.
type fakeGemini struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	replies  []reply
	received []received
	// forever, when set, answers every request once replies are used up.
	forever *reply
}

// reply is one scripted answer: a JSON body with a status (and a Retry-After header when
// retryAfter is set), or SSE chunks for a stream.
type reply struct {
	status     int
	retryAfter string
	body       string
	chunks     []string
}

// received is one request the fake got.
type received struct {
	path   string
	query  string
	apiKey string
	raw    string
	body   wireRequest
}

// wireRequest is the part of the REST request body the tests look at.
type wireRequest struct {
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			ParametersJsonSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		MaxOutputTokens int `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

type wireContent struct {
	Role  string     `json:"role"`
	Parts []wirePart `json:"parts"`
}

type wirePart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature []byte `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   *string        `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       *string        `json:"id"`
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
	} `json:"functionResponse"`
}

// newFake starts a fake server that answers with replies in order.
func newFake(t *testing.T, replies ...reply) *fakeGemini {
	t.Helper()
	f := &fakeGemini{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGemini) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := received{path: r.URL.Path, query: r.URL.RawQuery, apiKey: r.Header.Get("x-goog-api-key"), raw: string(raw)}
	if err := json.Unmarshal(raw, &rec.body); err != nil {
		f.t.Errorf("fake gemini: decode request: %v\n%s", err, raw)
	}

	f.mu.Lock()
	f.received = append(f.received, rec)
	if strings.HasSuffix(r.URL.Path, ":countTokens") && len(f.replies) == 0 && f.forever == nil {
		// countTokens with nothing scripted: a deterministic count derived from the length.
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"totalTokens": %d}`, fakeCount(raw))
		return
	}
	var rep reply
	ok := len(f.replies) > 0
	if ok {
		rep, f.replies = f.replies[0], f.replies[1:]
	} else if f.forever != nil {
		rep, ok = *f.forever, true
	}
	f.mu.Unlock()

	switch {
	case !ok:
		f.t.Errorf("fake gemini: unexpected request %s", r.URL.Path)
		http.Error(w, "no reply scripted", http.StatusInternalServerError)
	case r.Method != http.MethodPost:
		f.t.Errorf("fake gemini: method %s, want POST", r.Method)
		http.Error(w, "method", http.StatusMethodNotAllowed)
	case rep.chunks != nil:
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range rep.chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
			w.(http.Flusher).Flush()
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		if rep.retryAfter != "" {
			w.Header().Set("Retry-After", rep.retryAfter)
		}
		status := rep.status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		io.WriteString(w, rep.body)
	}
}

// fakeCount is the fake countTokens' answer to a request body: a third of its length.
func fakeCount(body []byte) int { return len(body)/3 + 1 }

// requests returns what the fake received so far.
func (f *fakeGemini) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.received...)
}

// last returns the last request the fake received.
func (f *fakeGemini) last() received {
	f.t.Helper()
	reqs := f.requests()
	if len(reqs) == 0 {
		f.t.Fatal("fake gemini received no request")
	}
	return reqs[len(reqs)-1]
}

// model returns a Model talking to the fake.
func (f *fakeGemini) model() *Model {
	f.t.Helper()
	return f.modelWith(Config{})
}

// modelWith returns a Model talking to the fake, configured by cfg (its key, endpoint and
// HTTP client are the fake's; its model name testModel unless set).
func (f *fakeGemini) modelWith(cfg Config) *Model {
	f.t.Helper()
	cfg.APIKey, cfg.BaseURL, cfg.HTTPClient = testAPIKey, f.srv.URL, f.srv.Client()
	if cfg.Model == "" {
		cfg.Model = testModel
	}
	m, err := New(context.Background(), cfg)
	if err != nil {
		f.t.Fatalf("New: %v", err)
	}
	return m
}

// jsonReply is a non-streamed 200 answer with body.
func jsonReply(body string) reply { return reply{body: body} }

// sseReply is a streamed answer of chunks.
func sseReply(chunks ...string) reply { return reply{chunks: chunks} }
