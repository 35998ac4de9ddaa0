package gemini

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/retry"
	"github.com/stewardhq/steward/internal/steward"
)

// sig is a thought signature with bytes that are not valid UTF-8, so any re-encoding shows.
var sig = []byte{0x00, 0xff, 0xfe, 0x80, 's', 'i', 'g', 0x01}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func userText(s string) steward.Message {
	return steward.Message{Role: steward.RoleUser, Parts: []steward.Part{{Text: s}}}
}

func generate(t *testing.T, m *Model, req llm.Request) llm.Response {
	t.Helper()
	resp, err := m.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return resp
}

// results answers every call with a result, in call order.
func results(calls []steward.ToolCall, outputs ...string) steward.Message {
	msg := steward.Message{Role: steward.RoleUser}
	for i, c := range calls {
		msg.Parts = append(msg.Parts, steward.Part{ToolResult: &steward.ToolResult{
			CallID: c.ID, Name: c.Name, MintedID: c.MintedID, Output: json.RawMessage(outputs[i]),
		}})
	}
	return msg
}

func TestGenerateRequest(t *testing.T) {
	t.Parallel()
	tools := []llm.ToolDecl{{
		Name:        "create_task",
		Description: "Create a task.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`),
	}}
	tests := []struct {
		name  string
		tools []llm.ToolDecl
	}{
		{"with tools", tools},
		{"nil tools", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, jsonReply(`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}]}`))
			resp := generate(t, f.model(), llm.Request{
				System:          "You are Steward.",
				Messages:        []steward.Message{userText("hello")},
				Tools:           tt.tools,
				MaxOutputTokens: 256,
			})
			if resp.Text() != "hi" || resp.Finish != llm.FinishStop || resp.Model != testModel {
				t.Errorf("response = %+v, want text hi, finish stop, model %s", resp, testModel)
			}

			got := f.last()
			if want := "/v1beta/models/" + testModel + ":generateContent"; got.path != want {
				t.Errorf("path = %q, want %q", got.path, want)
			}
			if got.apiKey != testAPIKey {
				t.Errorf("api key header = %q, want %q", got.apiKey, testAPIKey)
			}
			if si := got.body.SystemInstruction; si == nil || len(si.Parts) != 1 || si.Parts[0].Text != "You are Steward." {
				t.Errorf("systemInstruction = %+v", si)
			}
			if got.body.GenerationConfig.MaxOutputTokens != 256 {
				t.Errorf("maxOutputTokens = %d, want 256", got.body.GenerationConfig.MaxOutputTokens)
			}
			if c := got.body.Contents; len(c) != 1 || c[0].Role != "user" || c[0].Parts[0].Text != "hello" {
				t.Errorf("contents = %+v", c)
			}

			var raw map[string]any
			if err := json.Unmarshal([]byte(got.raw), &raw); err != nil {
				t.Fatal(err)
			}
			if tt.tools == nil {
				if _, ok := raw["tools"]; ok {
					t.Errorf("request has tools with Request.Tools nil: %s", got.raw)
				}
				return
			}
			if len(got.body.Tools) != 1 || len(got.body.Tools[0].FunctionDeclarations) != 1 {
				t.Fatalf("tools = %+v, want one declaration", got.body.Tools)
			}
			decl := got.body.Tools[0].FunctionDeclarations[0]
			if decl.Name != "create_task" || decl.Description != "Create a task." {
				t.Errorf("declaration = %+v", decl)
			}
			if !jsonEqual(t, decl.ParametersJsonSchema, tools[0].Parameters) {
				t.Errorf("parametersJsonSchema = %s, want %s", decl.ParametersJsonSchema, tools[0].Parameters)
			}
		})
	}
}

func TestGenerateParallelCalls(t *testing.T) {
	t.Parallel()
	f := newFake(t, jsonReply(`{
		"candidates": [{
			"content": {"role": "model", "parts": [
				{"functionCall": {"id": "c1", "name": "create_task", "args": {"title": "milk"}}},
				{"functionCall": {"id": "c2", "name": "list_tasks", "args": {}}},
				{"functionCall": {"id": "c3", "name": "remember", "args": {"content": "likes tea"}}}
			]},
			"finishReason": "STOP"
		}],
		"usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 30, "thoughtsTokenCount": 7, "cachedContentTokenCount": 100},
		"modelVersion": "gemini-test-001"
	}`))
	resp := generate(t, f.model(), llm.Request{Messages: []steward.Message{userText("do things")}})

	if resp.Finish != llm.FinishToolCalls || resp.FinishDetail != "STOP" {
		t.Errorf("finish = %s (%s), want tool_calls (STOP)", resp.Finish, resp.FinishDetail)
	}
	want := []steward.ToolCall{
		{ID: "c1", Name: "create_task", Args: json.RawMessage(`{"title":"milk"}`)},
		{ID: "c2", Name: "list_tasks", Args: json.RawMessage(`{}`)},
		{ID: "c3", Name: "remember", Args: json.RawMessage(`{"content":"likes tea"}`)},
	}
	calls := resp.ToolCalls()
	if len(calls) != len(want) {
		t.Fatalf("calls = %+v, want %d", calls, len(want))
	}
	for i, c := range calls {
		if c.ID != want[i].ID || c.Name != want[i].Name || c.MintedID || !jsonEqual(t, c.Args, want[i].Args) {
			t.Errorf("call %d = %+v, want %+v", i, c, want[i])
		}
	}
	if wantUsage := (steward.Usage{InputTokens: 120, OutputTokens: 37, CachedTokens: 100}); resp.Usage != wantUsage {
		t.Errorf("usage = %+v, want %+v", resp.Usage, wantUsage)
	}
	if resp.Model != "gemini-test-001" {
		t.Errorf("model = %q, want the model version", resp.Model)
	}
}

func TestMintedIDNeverSentBack(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		jsonReply(`{"candidates":[{"content":{"role":"model","parts":[
			{"functionCall":{"name":"get_current_time","args":{}}},
			{"functionCall":{"id":"real-1","name":"list_tasks"}}
		]},"finishReason":"STOP"}]}`),
		jsonReply(`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`),
	)
	m := f.model()
	history := []steward.Message{userText("time and tasks?")}
	resp := generate(t, m, llm.Request{Messages: history})

	calls := resp.ToolCalls()
	if len(calls) != 2 {
		t.Fatalf("calls = %+v, want 2", calls)
	}
	minted := calls[0]
	if !minted.MintedID || !strings.HasPrefix(minted.ID, "call_") || len(minted.ID) < len("call_")+16 {
		t.Errorf("call without id = %+v, want a minted call_ id", minted)
	}
	if calls[1].MintedID || calls[1].ID != "real-1" {
		t.Errorf("call with id = %+v, want real-1 not minted", calls[1])
	}

	history = append(history, resp.Message, results(calls, `{"time":"12:00"}`, `{"tasks":[]}`))
	generate(t, m, llm.Request{Messages: history})

	got := f.last()
	if strings.Contains(got.raw, minted.ID) {
		t.Errorf("minted id %s sent to Gemini: %s", minted.ID, got.raw)
	}
	model, user := got.body.Contents[1], got.body.Contents[2]
	if fc := model.Parts[0].FunctionCall; fc == nil || fc.ID != nil || fc.Name != "get_current_time" {
		t.Errorf("minted call sent as %+v, want no id", fc)
	}
	if fc := model.Parts[1].FunctionCall; fc == nil || fc.ID == nil || *fc.ID != "real-1" {
		t.Errorf("real call sent as %+v, want id real-1", fc)
	}
	if fr := user.Parts[0].FunctionResponse; fr == nil || fr.ID != nil || fr.Name != "get_current_time" {
		t.Errorf("minted response sent as %+v, want no id", fr)
	}
	if fr := user.Parts[1].FunctionResponse; fr == nil || fr.ID == nil || *fr.ID != "real-1" {
		t.Errorf("real response sent as %+v, want id real-1", fr)
	}
}

func TestThoughtSignatureRoundTrip(t *testing.T) {
	t.Parallel()
	sig2 := []byte{0xde, 0xad, 0xbe, 0xef}
	tests := []struct {
		name  string
		store func(t *testing.T, m steward.Message) steward.Message
	}{
		{"in memory", func(t *testing.T, m steward.Message) steward.Message { return m }},
		{"through jsonb", jsonbRoundTrip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t,
				jsonReply(fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[
					{"text":"thinking about it","thought":true},
					{"text":"Let me check.","thoughtSignature":%q},
					{"functionCall":{"id":"c1","name":"list_tasks","args":{}},"thoughtSignature":%q}
				]},"finishReason":"STOP"}]}`, b64(sig2), b64(sig))),
				jsonReply(`{"candidates":[{"content":{"role":"model","parts":[{"text":"done"}]},"finishReason":"STOP"}]}`),
			)
			m := f.model()
			history := []steward.Message{userText("tasks?")}
			resp := generate(t, m, llm.Request{Messages: history})
			parts := resp.Message.Parts
			if len(parts) != 3 || !parts[0].Thought || parts[0].ProviderMeta != nil ||
				!bytes.Equal(parts[1].ProviderMeta, sig2) || !bytes.Equal(parts[2].ProviderMeta, sig) {
				t.Fatalf("parts = %+v, want thought, signed text, signed call", parts)
			}

			stored := tt.store(t, resp.Message)
			history = append(history, stored, results(resp.ToolCalls(), `{"tasks":[]}`))
			generate(t, m, llm.Request{Messages: history})

			sent := f.last().body.Contents[1]
			if sent.Role != "model" || len(sent.Parts) != 3 {
				t.Fatalf("model content sent = %+v", sent)
			}
			if p := sent.Parts[0]; !p.Thought || p.Text != "thinking about it" || p.ThoughtSignature != nil {
				t.Errorf("thought part sent = %+v", p)
			}
			if p := sent.Parts[1]; p.Text != "Let me check." || !bytes.Equal(p.ThoughtSignature, sig2) {
				t.Errorf("text part sent = %+v, want signature %x", p, sig2)
			}
			if p := sent.Parts[2]; p.FunctionCall == nil || !bytes.Equal(p.ThoughtSignature, sig) {
				t.Errorf("call part sent = %+v, want signature %x", p, sig)
			}
		})
	}
}

// jsonbRoundTrip stores a message the way a suspended turn is stored: marshalled, decoded into
// generic JSON (as jsonb does), encoded again and read back.
func jsonbRoundTrip(t *testing.T, m steward.Message) steward.Message {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	if b, err = json.Marshal(generic); err != nil {
		t.Fatal(err)
	}
	var out steward.Message
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestToolResultsBatchIsOneContent(t *testing.T) {
	t.Parallel()
	f := newFake(t, jsonReply(`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`))
	calls := []steward.ToolCall{
		{ID: "c1", Name: "create_task", Args: json.RawMessage(`{"title":"milk"}`)},
		{ID: "call_minted", Name: "get_current_time", Args: json.RawMessage(`{}`), MintedID: true},
		{ID: "c3", Name: "remember", Args: json.RawMessage(`{"content":"x"}`)},
	}
	model := steward.Message{Role: steward.RoleModel}
	for i := range calls {
		model.Parts = append(model.Parts, steward.Part{ToolCall: &calls[i]})
	}
	batch := results(calls, `{"id":7,"title":"milk"}`, `{"time":"12:00"}`, `"denied by owner"`)
	batch.Parts[2].ToolResult.IsError = true

	generate(t, f.model(), llm.Request{Messages: []steward.Message{userText("go"), model, batch}})

	contents := f.last().body.Contents
	if len(contents) != 3 {
		t.Fatalf("contents = %+v, want user, model, one user content of results", contents)
	}
	res := contents[2]
	if res.Role != "user" || len(res.Parts) != 3 {
		t.Fatalf("results content = %+v, want one user content with 3 responses", res)
	}
	want := []struct {
		id       string
		name     string
		response string
	}{
		{"c1", "create_task", `{"output":{"id":7,"title":"milk"}}`},
		{"", "get_current_time", `{"output":{"time":"12:00"}}`},
		{"c3", "remember", `{"error":"denied by owner"}`},
	}
	for i, w := range want {
		fr := res.Parts[i].FunctionResponse
		if fr == nil {
			t.Fatalf("part %d = %+v, want a function response", i, res.Parts[i])
		}
		gotID := ""
		if fr.ID != nil {
			gotID = *fr.ID
		}
		resp, _ := json.Marshal(fr.Response)
		if gotID != w.id || fr.Name != w.name || !jsonEqual(t, resp, json.RawMessage(w.response)) {
			t.Errorf("response %d = id %q %s %s, want id %q %s %s", i, gotID, fr.Name, resp, w.id, w.name, w.response)
		}
	}
}

func TestGenerateFinish(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		finish llm.Finish
		detail string
		text   string
	}{
		{
			name:   "stop",
			body:   `{"candidates":[{"content":{"role":"model","parts":[{"text":"hello"}]},"finishReason":"STOP"}]}`,
			finish: llm.FinishStop, detail: "STOP", text: "hello",
		},
		{
			name:   "max tokens",
			body:   `{"candidates":[{"content":{"role":"model","parts":[{"text":"a long ans"}]},"finishReason":"MAX_TOKENS"}]}`,
			finish: llm.FinishMaxTokens, detail: "MAX_TOKENS", text: "a long ans",
		},
		{
			name:   "answer blocked for safety",
			body:   `{"candidates":[{"finishReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH","blocked":true}]}]}`,
			finish: llm.FinishBlocked, detail: "SAFETY",
		},
		{
			name:   "recitation",
			body:   `{"candidates":[{"content":{"role":"model","parts":[{"text":"partial"}]},"finishReason":"RECITATION"}]}`,
			finish: llm.FinishBlocked, detail: "RECITATION", text: "partial",
		},
		{
			name:   "prompt blocked",
			body:   `{"promptFeedback":{"blockReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_HARASSMENT","probability":"HIGH"}]},"usageMetadata":{"promptTokenCount":9}}`,
			finish: llm.FinishBlocked, detail: "SAFETY",
		},
		{
			name:   "prompt blocked, prohibited content",
			body:   `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"}}`,
			finish: llm.FinishBlocked, detail: "PROHIBITED_CONTENT",
		},
		{
			name:   "malformed function call",
			body:   `{"candidates":[{"finishReason":"MALFORMED_FUNCTION_CALL"}]}`,
			finish: llm.FinishRefused, detail: "MALFORMED_FUNCTION_CALL",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, jsonReply(tt.body))
			resp := generate(t, f.model(), llm.Request{Messages: []steward.Message{userText("hi")}})
			if resp.Finish != tt.finish || resp.FinishDetail != tt.detail || resp.Text() != tt.text {
				t.Errorf("got finish %s (%s) text %q, want %s (%s) text %q",
					resp.Finish, resp.FinishDetail, resp.Text(), tt.finish, tt.detail, tt.text)
			}
		})
	}
}

func TestGenerateAPIError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		stream bool
	}{
		{"500", 500, false},
		{"400", 400, false},
		{"500 streaming", 500, true},
		{"400 streaming", 400, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := fmt.Sprintf(`{"error":{"code":%d,"message":"boom","status":"X"}}`, tt.status)
			// The error answers every attempt: a 500 is retried (see TestUnavailableFailsWithinBound).
			f := newFake(t)
			f.forever = &reply{status: tt.status, body: body}
			var onDelta llm.DeltaFunc
			if tt.stream {
				onDelta = func(string) error { t.Error("delta on an error response"); return nil }
			}
			_, err := f.modelWith(Config{Retry: retry.Policy{Backoff: time.Millisecond}}).Generate(context.Background(), llm.Request{Messages: []steward.Message{userText("hi")}}, onDelta)
			var apiErr genai.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != tt.status {
				t.Fatalf("err = %v, want a wrapped genai.APIError with code %d", err, tt.status)
			}
		})
	}
}

func TestNewRequiresAPIKey(t *testing.T) {
	t.Parallel()
	if _, err := New(context.Background(), Config{BaseURL: "http://127.0.0.1:1"}); err == nil {
		t.Fatal("New without an API key succeeded")
	}
	m, err := New(context.Background(), Config{APIKey: "k", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != DefaultModel {
		t.Errorf("Name() = %q, want %q", m.Name(), DefaultModel)
	}
}

// jsonEqual reports whether two JSON documents hold the same value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("decode %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// TestForceTool: a forced tool call is sent as function calling mode ANY restricted to it.
func TestForceTool(t *testing.T) {
	t.Parallel()
	f := newFake(t, jsonReply(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"record_facts","args":{"facts":[]}}}]},"finishReason":"STOP"}]}`))
	resp := generate(t, f.model(), llm.Request{
		Messages:  []steward.Message{userText("I live in Berlin")},
		Tools:     []llm.ToolDecl{{Name: "record_facts", Description: "Record facts.", Parameters: json.RawMessage(`{"type":"object"}`)}},
		ForceTool: "record_facts",
	})
	if calls := resp.ToolCalls(); len(calls) != 1 || calls[0].Name != "record_facts" {
		t.Fatalf("calls = %+v", calls)
	}
	var raw struct {
		ToolConfig struct {
			FunctionCallingConfig struct {
				Mode                 string   `json:"mode"`
				AllowedFunctionNames []string `json:"allowedFunctionNames"`
			} `json:"functionCallingConfig"`
		} `json:"toolConfig"`
	}
	if err := json.Unmarshal([]byte(f.last().raw), &raw); err != nil {
		t.Fatal(err)
	}
	fc := raw.ToolConfig.FunctionCallingConfig
	if fc.Mode != "ANY" || len(fc.AllowedFunctionNames) != 1 || fc.AllowedFunctionNames[0] != "record_facts" {
		t.Fatalf("toolConfig = %+v, want mode ANY for record_facts", fc)
	}
}

// TestContextPartsAreSentAsText: a context part (the memory block) reaches Gemini as plain
// text, in its place before the owner's words; only Message.Text leaves it out.
func TestContextPartsAreSentAsText(t *testing.T) {
	t.Parallel()
	f := newFake(t, jsonReply(`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`))
	block := "<data source=\"memory\">\nOwner: what time is it\n</data>"
	generate(t, f.model(), llm.Request{Messages: []steward.Message{{Role: steward.RoleUser, Parts: []steward.Part{
		{Text: block, Context: true}, {Text: "remind me to call the dentist"},
	}}}})
	c := f.last().body.Contents
	if len(c) != 1 || len(c[0].Parts) != 2 || c[0].Parts[0].Text != block || c[0].Parts[0].Thought ||
		c[0].Parts[1].Text != "remind me to call the dentist" {
		t.Errorf("contents = %+v, want the block then the message, both as text", c)
	}
}

// TestSchemasSharedAcrossRequests: concurrent requests declaring the same tools (whose
// encoded declarations are cached and shared) each send the declared schema; under -race a
// request that mutated a shared entry would fail.
func TestSchemasSharedAcrossRequests(t *testing.T) {
	t.Parallel()
	const n = 8
	params := json.RawMessage(`{"type":"object","properties":{"when":{"type":"string","description":"shared across requests"}},"required":["when"]}`)
	ok := jsonReply(`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`)
	replies := make([]reply, n)
	for i := range replies {
		replies[i] = ok
	}
	f := newFake(t, replies...)
	m := f.model()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := m.Generate(context.Background(), llm.Request{Messages: []steward.Message{userText("hi")},
				Tools: []llm.ToolDecl{{Name: "remind", Description: "Remind.", Parameters: params}}}, nil)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.received) != n {
		t.Fatalf("%d requests, want %d", len(f.received), n)
	}
	for _, r := range f.received {
		if d := r.body.Tools; len(d) != 1 || len(d[0].FunctionDeclarations) != 1 || !jsonEqual(t, d[0].FunctionDeclarations[0].ParametersJsonSchema, params) {
			t.Errorf("declared tools = %+v, want the schema %s", d, params)
		}
	}
}

// TestToolParametersNotJSON: a tool whose parameters are not JSON is an error naming the tool,
// and nothing is sent (the declarations are encoded by the adapter, not by the SDK, which
// would not report it).
func TestToolParametersNotJSON(t *testing.T) {
	t.Parallel()
	f := newFake(t, jsonReply(`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}]}`))
	_, err := f.model().Generate(context.Background(), llm.Request{
		Messages: []steward.Message{userText("hi")},
		Tools:    []llm.ToolDecl{{Name: "broken", Description: "Broken.", Parameters: json.RawMessage(`{"type":`)}},
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "tool broken parameters") {
		t.Fatalf("err = %v, want one naming the tool's parameters", err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

// TestToolSetsKeptApart: requests with different tools, and a tool changed in place after a
// request (the cache keeps its own copy), each declare exactly their own tools.
func TestToolSetsKeptApart(t *testing.T) {
	t.Parallel()
	ok := jsonReply(`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`)
	f := newFake(t, ok, ok, ok, ok)
	m := f.model()
	a := []llm.ToolDecl{{Name: "alpha", Description: "A.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	b := []llm.ToolDecl{{Name: "beta", Description: "B.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	for i, tools := range [][]llm.ToolDecl{a, b, a, a} {
		if i == 3 {
			a[0].Parameters[2] = 'T' // same length, other bytes: {"Type":"object"}
		}
		generate(t, m, llm.Request{Messages: []steward.Message{userText("hi")}, Tools: tools})
		d := f.last().body.Tools
		if len(d) != 1 || len(d[0].FunctionDeclarations) != 1 || d[0].FunctionDeclarations[0].Name != tools[0].Name ||
			!jsonEqual(t, d[0].FunctionDeclarations[0].ParametersJsonSchema, tools[0].Parameters) {
			t.Errorf("request %d declared %+v, want only %s with %s", i, d, tools[0].Name, tools[0].Parameters)
		}
	}
}
