package agent_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/llm/gemini"
	"github.com/stewardhq/steward/internal/steward"
)

// geminiAPI fakes the Gemini REST API for loop tests that run the real adapter: request n
// (from 0) is answered with answer(n), and every request body is kept.
type geminiAPI struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newGeminiAPI(t *testing.T, answer func(n int) string) *geminiAPI {
	g := &geminiAPI{t: t}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		g.bodies = append(g.bodies, string(b))
		n := len(g.bodies) - 1
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer(n))
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// model is the real Gemini adapter for model name, talking to the fake.
func (g *geminiAPI) model(name string) *gemini.Model {
	g.t.Helper()
	m, err := gemini.New(g.t.Context(), gemini.Config{APIKey: "test-key", BaseURL: g.srv.URL, Model: name})
	if err != nil {
		g.t.Fatal(err)
	}
	return m
}

// request returns request n as raw JSON and decoded.
func (g *geminiAPI) request(n int) (string, map[string]any) {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if n >= len(g.bodies) {
		g.t.Fatalf("the fake got %d requests, want at least %d", len(g.bodies), n+1)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(g.bodies[n]), &body); err != nil {
		g.t.Fatal(err)
	}
	return g.bodies[n], body
}

func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFinalAnswerKeepsToolsWithModeNone: the tool-free completion after the iteration cap
// declares the same tools under the same system prompt as the calls before it (a stable
// prefix), with function calling mode NONE, instead of dropping them.
func TestFinalAnswerKeepsToolsWithModeNone(t *testing.T) {
	t.Parallel()
	api := newGeminiAPI(t, func(n int) string {
		if n < 4 {
			return `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_current_time","args":{}}}]},"finishReason":"STOP"}]}`
		}
		return `{"candidates":[{"content":{"role":"model","parts":[{"text":"It is late."}]},"finishReason":"STOP"}]}`
	})
	h := newHarness(t, api.model("gemini-test"))
	v := h.start("time, forever")
	if v.Status != steward.StatusCompleted || v.Answer != "It is late." || !v.IterationLimit {
		t.Fatalf("view = %+v, want completed at the iteration limit", v)
	}
	_, first := api.request(0)
	_, final := api.request(4)
	if final["tools"] == nil || canonical(t, final["tools"]) != canonical(t, first["tools"]) {
		t.Errorf("final tools = %v, want the tools of the first call", final["tools"])
	}
	if canonical(t, final["systemInstruction"]) != canonical(t, first["systemInstruction"]) {
		t.Errorf("final system instruction differs from the first call's")
	}
	tc, _ := final["toolConfig"].(map[string]any)
	if fc, _ := tc["functionCallingConfig"].(map[string]any); fc["mode"] != "NONE" {
		t.Errorf("final toolConfig = %v, want function calling mode NONE", final["toolConfig"])
	}
	if _, ok := first["toolConfig"]; ok {
		t.Errorf("a call with tools set a tool config: %v", first["toolConfig"])
	}
}

// TestResumeUnderAnotherModel: a turn suspended under one model and resumed under another is
// recorded with the new model, and the old model's thought signatures are not sent to it.
// Gemini 3 wants a signature on the current turn's calls: they carry the documented skip one.
func TestResumeUnderAnotherModel(t *testing.T) {
	t.Parallel()
	oldSig := base64.StdEncoding.EncodeToString([]byte("signature of gemini-2.5-flash"))
	skip := base64.StdEncoding.EncodeToString([]byte("skip_thought_signature_validator"))
	for _, tt := range []struct {
		model    string
		wantSkip bool
	}{
		{"gemini-2.5-pro", false},
		{"gemini-3-flash-preview", true},
	} {
		t.Run(tt.model, func(t *testing.T) {
			t.Parallel()
			api := newGeminiAPI(t, func(n int) string {
				if n == 0 {
					return `{"candidates":[{"content":{"role":"model","parts":[` +
						`{"text":"I will add it.","thoughtSignature":"` + oldSig + `"},` +
						`{"functionCall":{"name":"create_task","args":{"title":"milk"}},"thoughtSignature":"` + oldSig + `"}]},"finishReason":"STOP"}]}`
				}
				return `{"candidates":[{"content":{"role":"model","parts":[{"text":"Added."}]},"finishReason":"STOP"}]}`
			})
			h := newHarness(t, api.model("gemini-2.5-flash"))
			v := h.start("add milk")
			if v.Status != steward.StatusSuspended || v.Model != "gemini-2.5-flash" {
				t.Fatalf("view = %+v, want suspended under gemini-2.5-flash", v)
			}
			h.runner.Model = api.model(tt.model) // a deploy changed the model meanwhile
			v, err := h.confirm(v, approveAll(v))
			if err != nil || v.Status != steward.StatusCompleted || v.Answer != "Added." {
				t.Fatalf("confirm: %+v, %v", v, err)
			}
			if v.Model != tt.model {
				t.Errorf("turn model = %q, want the model that finished it, %s", v.Model, tt.model)
			}
			raw, body := api.request(1)
			if strings.Contains(raw, oldSig) {
				t.Fatalf("the old model's thought signature was sent to %s: %v", tt.model, body["contents"])
			}
			modelTurn := body["contents"].([]any)[1].(map[string]any)["parts"].([]any)
			for i, p := range modelTurn {
				sig, has := p.(map[string]any)["thoughtSignature"]
				_, isCall := p.(map[string]any)["functionCall"]
				if want := tt.wantSkip && isCall; has != want || (has && sig != skip) {
					t.Errorf("model part %d = %v; want the skip signature: %v", i, p, want)
				}
			}
		})
	}
}
