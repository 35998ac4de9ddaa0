package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/retry"
	"github.com/stewardhq/steward/internal/steward"
)

const (
	okBody       = `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}]}`
	okChunk      = `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}]}`
	limitedBody  = `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`
	overloadBody = `{"error":{"code":503,"message":"The model is overloaded","status":"UNAVAILABLE"}}`
)

// TestRateLimitedThenSucceeds: one 429 (or 503) asking to retry in a second does not fail the
// call: the adapter waits what the server asked and the second attempt answers.
func TestRateLimitedThenSucceeds(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "generateContent", true: "streamGenerateContent"}[stream]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ok := jsonReply(okBody)
			if stream {
				ok = sseReply(okChunk)
			}
			f := newFake(t, reply{status: 429, retryAfter: "1", body: limitedBody}, ok)
			var deltas []string
			var onDelta llm.DeltaFunc
			if stream {
				onDelta = func(s string) error { deltas = append(deltas, s); return nil }
			}
			start := time.Now()
			resp, err := f.modelWith(Config{Retry: retry.Policy{Backoff: time.Millisecond}}).
				Generate(context.Background(), llm.Request{Messages: []steward.Message{userText("hello")}}, onDelta)
			if err != nil {
				t.Fatalf("Generate after one 429: %v", err)
			}
			if resp.Text() != "hi" || len(f.requests()) != 2 {
				t.Fatalf("answer %q after %d requests, want hi after 2", resp.Text(), len(f.requests()))
			}
			if waited := time.Since(start); waited < time.Second {
				t.Errorf("retried after %s; the server asked for 1s", waited)
			}
			if stream && strings.Join(deltas, "") != "hi" {
				t.Errorf("deltas = %q, want the answer once", deltas)
			}
		})
	}
}

// TestUnavailableFailsWithinBound: an API that stays unavailable fails the call after a few
// attempts, quickly; a wait longer than the cap or past the deadline fails at once.
func TestUnavailableFailsWithinBound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		policy    retry.Policy
		forever   reply
		timeout   time.Duration
		requests  int
		withinDur time.Duration
	}{
		{"503 forever, default policy", retry.Policy{}, reply{status: 503, retryAfter: "1", body: overloadBody}, 0, retry.DefaultAttempts, 4 * time.Second},
		{"503 forever, no hint", retry.Policy{Attempts: 4, Backoff: 5 * time.Millisecond}, reply{status: 503, body: overloadBody}, 0, 4, time.Second},
		{"Retry-After above the cap", retry.Policy{}, reply{status: 429, retryAfter: "120", body: limitedBody}, 0, 1, time.Second},
		{"retry would pass the deadline", retry.Policy{}, reply{status: 429, retryAfter: "2", body: limitedBody}, 500 * time.Millisecond, 1, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.forever = &tt.forever
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			start := time.Now()
			_, err := f.modelWith(Config{Retry: tt.policy}).Generate(ctx, llm.Request{Messages: []steward.Message{userText("hello")}}, nil)
			elapsed := time.Since(start)
			var apiErr genai.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != tt.forever.status {
				t.Fatalf("err = %v, want the API's %d", err, tt.forever.status)
			}
			if n := len(f.requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if elapsed > tt.withinDur {
				t.Errorf("failed after %s, want within %s", elapsed, tt.withinDur)
			}
		})
	}
}

// TestStreamIsNotReplayedAfterText: an error in the middle of a stream that already delivered
// text is returned, not retried (the client has seen the text).
func TestStreamIsNotReplayedAfterText(t *testing.T) {
	t.Parallel()
	f := newFake(t, sseReply(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}]}`, overloadBody), sseReply(okChunk))
	var deltas []string
	_, err := f.modelWith(Config{Retry: retry.Policy{Backoff: time.Millisecond}}).Generate(context.Background(),
		llm.Request{Messages: []steward.Message{userText("hello")}}, func(s string) error { deltas = append(deltas, s); return nil })
	if err == nil || len(f.requests()) != 1 || strings.Join(deltas, "") != "Hel" {
		t.Fatalf("err %v after %d requests, deltas %q: want the error, 1 request, Hel once", err, len(f.requests()), deltas)
	}
}

// TestThinkingLow: a background request's low thinking is sent in the form the model family
// takes (thinkingLevel from Gemini 3, thinkingBudget for 2.5), and not at all when unasked or
// when the model is not known to think.
func TestThinkingLow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		model    string
		thinking llm.Thinking
		want     string // the generationConfig's thinkingConfig as JSON; "" for none
	}{
		{"gemini-3-flash-preview", llm.ThinkingLow, `{"thinkingLevel":"LOW"}`},
		{"gemini-3.1-flash-lite", llm.ThinkingLow, `{"thinkingLevel":"LOW"}`},
		{"models/gemini-3.5-flash", llm.ThinkingLow, `{"thinkingLevel":"LOW"}`},
		{"gemini-2.5-flash", llm.ThinkingLow, `{"thinkingBudget":0}`},
		{"gemini-2.5-flash-lite", llm.ThinkingLow, `{"thinkingBudget":0}`},
		{"gemini-2.5-pro", llm.ThinkingLow, `{"thinkingBudget":128}`},
		{"gemini-2.0-flash", llm.ThinkingLow, ""},
		{"gemini-test", llm.ThinkingLow, ""},
		{"gemini-3-flash-preview", llm.ThinkingDefault, ""},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+string(tt.thinking), func(t *testing.T) {
			t.Parallel()
			f := newFake(t, jsonReply(okBody))
			generate(t, f.modelWith(Config{Model: tt.model}), llm.Request{Messages: []steward.Message{userText("hi")}, Thinking: tt.thinking})
			var raw struct {
				GenerationConfig struct {
					ThinkingConfig json.RawMessage `json:"thinkingConfig"`
				} `json:"generationConfig"`
			}
			if err := json.Unmarshal([]byte(f.last().raw), &raw); err != nil {
				t.Fatal(err)
			}
			got := raw.GenerationConfig.ThinkingConfig
			if tt.want == "" {
				if got != nil {
					t.Fatalf("thinkingConfig = %s, want none", got)
				}
				return
			}
			if got == nil || !jsonEqual(t, got, []byte(tt.want)) {
				t.Fatalf("thinkingConfig = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestNoToolCallsKeepsToolsWithModeNone: a tool-free completion still declares the tools,
// with function calling mode NONE, so its prefix is the one of the calls before it.
func TestNoToolCallsKeepsToolsWithModeNone(t *testing.T) {
	t.Parallel()
	tools := []llm.ToolDecl{{Name: "create_task", Description: "Create a task.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	f := newFake(t, jsonReply(okBody), jsonReply(okBody))
	m := f.model()
	generate(t, m, llm.Request{System: "S", Messages: []steward.Message{userText("hi")}, Tools: tools})
	generate(t, m, llm.Request{System: "S", Messages: []steward.Message{userText("hi")}, Tools: tools, NoToolCalls: true})
	var before, final struct {
		Tools      json.RawMessage `json:"tools"`
		ToolConfig *struct {
			FunctionCallingConfig struct {
				Mode                 string   `json:"mode"`
				AllowedFunctionNames []string `json:"allowedFunctionNames"`
			} `json:"functionCallingConfig"`
		} `json:"toolConfig"`
	}
	reqs := f.requests()
	if err := json.Unmarshal([]byte(reqs[0].raw), &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(reqs[1].raw), &final); err != nil {
		t.Fatal(err)
	}
	if final.Tools == nil || string(final.Tools) != string(before.Tools) {
		t.Errorf("final tools = %s, want the same declarations as before: %s", final.Tools, before.Tools)
	}
	if tc := final.ToolConfig; tc == nil || tc.FunctionCallingConfig.Mode != "NONE" || tc.FunctionCallingConfig.AllowedFunctionNames != nil {
		t.Errorf("final toolConfig = %+v, want function calling mode NONE", tc)
	}

	if _, err := m.Generate(context.Background(), llm.Request{Messages: []steward.Message{userText("hi")}, Tools: tools,
		ForceTool: "create_task", NoToolCalls: true}, nil); err == nil || len(f.requests()) != 2 {
		t.Errorf("ForceTool with NoToolCalls: err %v after %d requests, want an error and no request", err, len(f.requests()))
	}
}

// TestUnsignedCallsInTheCurrentTurn: for a Gemini 3 model, the first function call of each
// model step of the current turn that carries no thought signature (its own model's signature
// was dropped) gets the documented validator-skipping one; older turns, other calls and older
// model families are sent as they are.
func TestUnsignedCallsInTheCurrentTurn(t *testing.T) {
	t.Parallel()
	call := func(id string) steward.Part {
		return steward.Part{ToolCall: &steward.ToolCall{ID: id, Name: "list_tasks", Args: json.RawMessage(`{}`)}}
	}
	result := func(id string) steward.Part {
		return steward.Part{ToolResult: &steward.ToolResult{CallID: id, Name: "list_tasks", Output: json.RawMessage(`{}`)}}
	}
	msgs := []steward.Message{
		userText("earlier turn"),
		{Role: steward.RoleModel, Parts: []steward.Part{call("a")}},
		{Role: steward.RoleUser, Parts: []steward.Part{result("a")}},
		{Role: steward.RoleModel, Parts: []steward.Part{{Text: "done"}}},
		userText("this turn"),
		{Role: steward.RoleModel, Parts: []steward.Part{{Text: "checking"}, call("b"), call("c")}},
		{Role: steward.RoleUser, Parts: []steward.Part{result("b"), result("c")}},
		{Role: steward.RoleModel, Parts: []steward.Part{call("d")}},
		{Role: steward.RoleUser, Parts: []steward.Part{result("d")}},
	}
	for _, tt := range []struct {
		model  string
		signed map[[2]int]bool // content, part → carries the skip signature
	}{
		{"gemini-3-flash-preview", map[[2]int]bool{{5, 1}: true, {7, 0}: true}},
		{"gemini-2.5-flash", nil},
	} {
		t.Run(tt.model, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, jsonReply(okBody))
			generate(t, f.modelWith(Config{Model: tt.model}), llm.Request{Messages: msgs})
			for i, c := range f.last().body.Contents {
				for j, p := range c.Parts {
					want := tt.signed[[2]int{i, j}]
					if got := string(p.ThoughtSignature); (got == skipSignature) != want || (!want && got != "") {
						t.Errorf("content %d part %d signature %q, want skip signature: %v", i, j, got, want)
					}
				}
			}
		})
	}
}
