package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/retry"
	"github.com/stewardhq/steward/internal/steward"
)

// TestCountTokens: CountTokens posts the conversation to models/{model}:countTokens as the very
// contents generateContent would carry, and returns totalTokens.
func TestCountTokens(t *testing.T) {
	f := newFake(t)
	m := f.modelWith(Config{Model: "gemini-3.8-flash"})
	msgs := []steward.Message{
		{Role: steward.RoleUser, Parts: []steward.Part{{Text: "what is open?"}}},
		{Role: steward.RoleModel, Parts: []steward.Part{{ToolCall: &steward.ToolCall{ID: "m1", MintedID: true, Name: "list_tasks", Args: json.RawMessage(`{"status":"open"}`)}}}},
		{Role: steward.RoleUser, Parts: []steward.Part{{ToolResult: &steward.ToolResult{CallID: "m1", MintedID: true, Name: "list_tasks", Output: json.RawMessage(`[{"title":"water the plants"}]`)}}}},
	}
	n, err := m.CountTokens(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	got := f.last()
	if got.path != "/v1beta/models/gemini-3.8-flash:countTokens" || got.apiKey != testAPIKey {
		t.Fatalf("request to %s with key %q", got.path, got.apiKey)
	}
	if n != fakeCount([]byte(got.raw)) {
		t.Errorf("CountTokens = %d, the fake answered %d", n, fakeCount([]byte(got.raw)))
	}

	// The same contents as a generateContent request of the same conversation.
	f.replies = []reply{jsonReply(`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`)}
	if _, err := m.Generate(context.Background(), llm.Request{Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	var counted, generated struct {
		Contents json.RawMessage `json:"contents"`
	}
	json.Unmarshal([]byte(got.raw), &counted)
	json.Unmarshal([]byte(f.last().raw), &generated)
	if len(counted.Contents) == 0 || string(counted.Contents) != string(generated.Contents) {
		t.Errorf("countTokens contents\n%s\ngenerateContent contents\n%s", counted.Contents, generated.Contents)
	}
	if !strings.Contains(string(counted.Contents), base64.StdEncoding.EncodeToString([]byte(skipSignature))) {
		t.Errorf("the current turn's call carries no signature, as Generate sends it: %s", counted.Contents)
	}
}

// TestCountTokensErrors: an API error is an error (a 503 retried, then Unavailable), never a
// count; bad arguments fail before any request.
func TestCountTokensErrors(t *testing.T) {
	f := newFake(t, reply{status: http.StatusBadRequest, body: `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`})
	m := f.modelWith(Config{Retry: retry.Policy{Attempts: 2, Backoff: time.Millisecond}})
	msgs := []steward.Message{{Role: steward.RoleUser, Parts: []steward.Part{{Text: "hi"}}}}
	if n, err := m.CountTokens(context.Background(), msgs); err == nil || n != 0 || llm.IsUnavailable(err) {
		t.Errorf("400: %d, %v", n, err)
	}
	unavailable := reply{status: http.StatusServiceUnavailable, body: `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`}
	f.replies = []reply{unavailable, unavailable}
	if n, err := m.CountTokens(context.Background(), msgs); err == nil || n != 0 || !llm.IsUnavailable(err) {
		t.Errorf("503: %d, %v", n, err)
	}
	if len(f.requests()) != 3 {
		t.Errorf("%d requests, want 1 + 2 attempts", len(f.requests()))
	}
	bad := []steward.Message{{Role: steward.RoleModel, Parts: []steward.Part{{ToolCall: &steward.ToolCall{ID: "x", Name: "t", Args: json.RawMessage(`{`)}}}}}
	if _, err := m.CountTokens(context.Background(), bad); err == nil || len(f.requests()) != 3 {
		t.Errorf("bad args: %v after %d requests", err, len(f.requests()))
	}
}
