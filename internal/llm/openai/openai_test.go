package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/openai"
	"github.com/stewardhq/steward/internal/llm/retry"
	"github.com/stewardhq/steward/internal/steward"
)

// fake is an OpenAI chat-completions server: it answers each request with the next scripted
// reply and keeps every request body.
type fake struct {
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	bodies  []string
	auth    []string
}

type reply struct {
	status     int
	retryAfter string
	body       string
}

func newFake(t *testing.T, replies ...reply) *fake {
	f := &fake{replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("path = %s, want /v1/chat/completions", r.URL.Path)
		}
		f.bodies = append(f.bodies, string(b))
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		if len(f.replies) == 0 {
			http.Error(w, `{"error":{"message":"no reply scripted"}}`, http.StatusInternalServerError)
			return
		}
		rep := f.replies[0]
		f.replies = f.replies[1:]
		if rep.retryAfter != "" {
			w.Header().Set("Retry-After", rep.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		if rep.status != 0 {
			w.WriteHeader(rep.status)
		}
		io.WriteString(w, rep.body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) requests(t *testing.T) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, b := range f.bodies {
		var m map[string]any
		if err := json.Unmarshal([]byte(b), &m); err != nil {
			t.Fatalf("request body is not JSON: %v\n%s", err, b)
		}
		out = append(out, m)
	}
	return out
}

// Completion builds a chat completion body.
func completion(message, finish string, prompt, completionTokens, cached int) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test-2026-01-01",
	"choices":[{"index":0,"finish_reason":"` + finish + `","message":` + message + `}],
	"usage":{"prompt_tokens":` + itoa(prompt) + `,"completion_tokens":` + itoa(completionTokens) + `,"total_tokens":` + itoa(prompt+completionTokens) + `,
	"prompt_tokens_details":{"cached_tokens":` + itoa(cached) + `}}}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func newModel(t *testing.T, f *fake) *openai.Model {
	m, err := openai.New(openai.Config{APIKey: "sk-test", BaseURL: f.srv.URL + "/v1/", Model: "gpt-test",
		Retry: retry.Policy{Backoff: time.Millisecond, MaxWait: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var userHi = steward.Message{Role: steward.RoleUser, Parts: []steward.Part{{Text: "hi"}}}

func TestTextAnswerAndUsage(t *testing.T) {
	f := newFake(t, reply{body: completion(`{"role":"assistant","content":"Hello there."}`, "stop", 120, 30, 100)})
	m := newModel(t, f)
	var deltas []string
	resp, err := m.Generate(context.Background(), llm.Request{System: "be brief", Messages: []steward.Message{userHi}, MaxOutputTokens: 50},
		func(s string) error { deltas = append(deltas, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "Hello there." || resp.Finish != llm.FinishStop || resp.Model != "gpt-test" {
		t.Fatalf("response = %q finish %s model %s", resp.Text(), resp.Finish, resp.Model)
	}
	if want := (steward.Usage{InputTokens: 120, OutputTokens: 30, CachedTokens: 100}); resp.Usage != want {
		t.Fatalf("usage = %+v, want %+v", resp.Usage, want)
	}
	if strings.Join(deltas, "") != "Hello there." {
		t.Fatalf("deltas = %q", deltas)
	}
	req := f.requests(t)[0]
	msgs := req["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || msgs[0].(map[string]any)["content"] != "be brief" ||
		msgs[1].(map[string]any)["role"] != "user" || msgs[1].(map[string]any)["content"] != "hi" {
		t.Fatalf("messages = %v", msgs)
	}
	if req["model"] != "gpt-test" || req["max_completion_tokens"] != float64(50) {
		t.Fatalf("request = %v", req)
	}
	if f.auth[0] != "Bearer sk-test" {
		t.Fatalf("Authorization = %q", f.auth[0])
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	f := newFake(t,
		reply{body: completion(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function",
			"function":{"name":"add_task","arguments":"{\"title\":\"milk\"}"}}]}`, "tool_calls", 50, 10, 0)},
		reply{body: completion(`{"role":"assistant","content":"Added milk."}`, "stop", 80, 5, 0)},
	)
	m := newModel(t, f)
	tools := []llm.ToolDecl{{Name: "add_task", Description: "Add a task", Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`)}}
	first, err := m.Generate(context.Background(), llm.Request{Messages: []steward.Message{userHi}, Tools: tools}, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := first.ToolCalls()
	if first.Finish != llm.FinishToolCalls || len(calls) != 1 || calls[0].ID != "call_abc" || calls[0].Name != "add_task" ||
		string(calls[0].Args) != `{"title":"milk"}` || calls[0].MintedID {
		t.Fatalf("first = %+v calls %+v", first, calls)
	}
	results := steward.Message{Role: steward.RoleUser, Parts: []steward.Part{{ToolResult: &steward.ToolResult{
		CallID: "call_abc", Name: "add_task", Output: json.RawMessage(`{"id":7}`)}}}}
	second, err := m.Generate(context.Background(), llm.Request{
		Messages: []steward.Message{userHi, first.Message, results}, Tools: tools, NoToolCalls: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Text() != "Added milk." {
		t.Fatalf("answer = %q", second.Text())
	}
	reqs := f.requests(t)
	if tl := reqs[0]["tools"].([]any); len(tl) != 1 || tl[0].(map[string]any)["function"].(map[string]any)["name"] != "add_task" {
		t.Fatalf("tools = %v", reqs[0]["tools"])
	}
	if _, ok := reqs[0]["tool_choice"]; ok {
		t.Fatalf("first request has tool_choice %v, want none set", reqs[0]["tool_choice"])
	}
	if reqs[1]["tool_choice"] != "none" {
		t.Fatalf("tool_choice = %v, want none", reqs[1]["tool_choice"])
	}
	msgs := reqs[1]["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages = %v", msgs)
	}
	asst, tool := msgs[1].(map[string]any), msgs[2].(map[string]any)
	tc := asst["tool_calls"].([]any)[0].(map[string]any)
	if asst["role"] != "assistant" || tc["id"] != "call_abc" || tc["function"].(map[string]any)["arguments"] != `{"title":"milk"}` {
		t.Fatalf("assistant message = %v", asst)
	}
	if tool["role"] != "tool" || tool["tool_call_id"] != "call_abc" || tool["content"] != `{"output":{"id":7}}` {
		t.Fatalf("tool message = %v", tool)
	}
}

func TestForceToolAndThinking(t *testing.T) {
	f := newFake(t, reply{body: completion(`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"save","arguments":""}}]}`, "stop", 1, 1, 0)})
	m, err := openai.New(openai.Config{BaseURL: f.srv.URL + "/v1", Model: "gpt-5-mini"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(context.Background(), llm.Request{Messages: []steward.Message{userHi},
		Tools: []llm.ToolDecl{{Name: "save"}}, ForceTool: "save", Thinking: llm.ThinkingLow}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Finish != llm.FinishToolCalls || string(resp.ToolCalls()[0].Args) != "{}" {
		t.Fatalf("response = %+v", resp)
	}
	req := f.requests(t)[0]
	choice, _ := req["tool_choice"].(map[string]any)
	if choice["type"] != "function" || choice["function"].(map[string]any)["name"] != "save" || req["reasoning_effort"] != "low" {
		t.Fatalf("request = %v", req)
	}
	if f.auth[0] != "" {
		t.Fatalf("Authorization = %q, want none without a key", f.auth[0])
	}
}

func TestRateLimitedHonoursRetryAfterThenUnavailable(t *testing.T) {
	limited := reply{status: 429, retryAfter: "1", body: `{"error":{"message":"slow down","type":"rate_limit"}}`}
	f := newFake(t, limited, limited, limited)
	m := newModel(t, f)
	start := time.Now()
	_, err := m.Generate(context.Background(), llm.Request{Messages: []steward.Message{userHi}}, nil)
	if err == nil || !llm.IsUnavailable(err) {
		t.Fatalf("err = %v, want unavailable", err)
	}
	if n := len(f.bodies); n != retry.DefaultAttempts {
		t.Fatalf("requests = %d, want %d", n, retry.DefaultAttempts)
	}
	if waited := time.Since(start); waited < 2*time.Second {
		t.Fatalf("waited %s, want the server's Retry-After (1s) twice", waited)
	}
}

func TestBadRequestIsNotUnavailable(t *testing.T) {
	f := newFake(t, reply{status: 400, body: `{"error":{"message":"bad","type":"invalid_request_error"}}`})
	_, err := newModel(t, f).Generate(context.Background(), llm.Request{Messages: []steward.Message{userHi}}, nil)
	if err == nil || llm.IsUnavailable(err) || len(f.bodies) != 1 {
		t.Fatalf("err = %v after %d requests, want one request and a plain error", err, len(f.bodies))
	}
}

// A conversation Gemini produced (thought signatures on its parts, a thought, a minted id)
// sent to an OpenAI-compatible server carries none of the signatures or thoughts.
func TestGeminiProviderMetaIsNeverSent(t *testing.T) {
	f := newFake(t, reply{body: completion(`{"role":"assistant","content":"ok"}`, "stop", 1, 1, 0)})
	sig := []byte("GEMINI-THOUGHT-SIGNATURE-xyz")
	msgs := []steward.Message{
		userHi,
		{Role: steward.RoleModel, Parts: []steward.Part{
			{Text: "secret reasoning", Thought: true, ProviderMeta: sig},
			{Text: "", ProviderMeta: sig},
			{ToolCall: &steward.ToolCall{ID: "call_minted", Name: "add_task", Args: json.RawMessage(`{}`), MintedID: true}, ProviderMeta: sig},
		}},
		{Role: steward.RoleUser, Parts: []steward.Part{{ToolResult: &steward.ToolResult{CallID: "call_minted", Name: "add_task", MintedID: true, Output: json.RawMessage(`{}`)}}}},
	}
	if _, err := newModel(t, f).Generate(context.Background(), llm.Request{Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	body := f.bodies[0]
	for _, bad := range []string{"GEMINI-THOUGHT-SIGNATURE", "R0VNSU5JLVRIT1VHSFQtU0lHTkFUVVJF" /* base64 */, "secret reasoning", "provider_meta", "thought"} {
		if strings.Contains(body, bad) {
			t.Fatalf("request body carries %q:\n%s", bad, body)
		}
	}
	if !strings.Contains(body, `"tool_call_id":"call_minted"`) {
		t.Fatalf("tool result lost its call id:\n%s", body)
	}
}

// A proxy in front of the API may answer a failure with a page that is not OpenAI's JSON
// error; it is retried like any 502 and, once the retries are spent, is unavailable.
func TestNonJSONServerErrorIsRetriedThenUnavailable(t *testing.T) {
	bad := reply{status: 502, body: `<html><body>502 Bad Gateway</body></html>`}
	f := newFake(t, bad, bad, bad)
	_, err := newModel(t, f).Generate(context.Background(), llm.Request{Messages: []steward.Message{userHi}}, nil)
	if err == nil || !llm.IsUnavailable(err) {
		t.Fatalf("err = %v, want unavailable", err)
	}
	if n := len(f.bodies); n != retry.DefaultAttempts {
		t.Fatalf("requests = %d, want %d", n, retry.DefaultAttempts)
	}
}

// A tool declared without parameters is sent with an empty object schema, never a null one.
func TestToolWithoutParametersSendsEmptyObject(t *testing.T) {
	f := newFake(t, reply{body: completion(`{"role":"assistant","content":"ok"}`, "stop", 1, 1, 0)})
	if _, err := newModel(t, f).Generate(context.Background(), llm.Request{Messages: []steward.Message{userHi},
		Tools: []llm.ToolDecl{{Name: "ping"}}}, nil); err != nil {
		t.Fatal(err)
	}
	fn := f.requests(t)[0]["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if params, present := fn["parameters"]; present {
		if schema, ok := params.(map[string]any); !ok || schema["type"] != "object" {
			t.Fatalf("parameters = %v, want an object schema or none", params)
		}
	}
}
