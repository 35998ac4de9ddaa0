package gemini

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

func TestStreamTextDeltasAndUsage(t *testing.T) {
	t.Parallel()
	f := newFake(t, sseReply(
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"weighing it","thought":true}]}}],"usageMetadata":{"promptTokenCount":200}}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}],"usageMetadata":{"promptTokenCount":200}}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"lo, "}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"world."}]},"finishReason":"STOP"}],`+
			`"usageMetadata":{"promptTokenCount":200,"candidatesTokenCount":12,"thoughtsTokenCount":30,"cachedContentTokenCount":150},"modelVersion":"gemini-test-002"}`,
	))
	var deltas []string
	resp, err := f.model().Generate(context.Background(), llm.Request{Messages: []steward.Message{userText("hi")}},
		func(s string) error { deltas = append(deltas, s); return nil })
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}

	got := f.last()
	if want := "/v1beta/models/" + testModel + ":streamGenerateContent"; got.path != want || got.query != "alt=sse" {
		t.Errorf("request %s?%s, want %s?alt=sse", got.path, got.query, want)
	}
	if want := []string{"Hel", "lo, ", "world."}; !slices.Equal(deltas, want) {
		t.Errorf("deltas = %q, want %q", deltas, want)
	}
	parts := resp.Message.Parts
	if len(parts) != 2 || !parts[0].Thought || parts[0].Text != "weighing it" || parts[1].Text != "Hello, world." {
		t.Errorf("parts = %+v, want one thought and one merged text part", parts)
	}
	if resp.Finish != llm.FinishStop || resp.Model != "gemini-test-002" {
		t.Errorf("finish %s model %s, want stop gemini-test-002", resp.Finish, resp.Model)
	}
	if want := (steward.Usage{InputTokens: 200, OutputTokens: 42, CachedTokens: 150}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
}

// TestStreamSignatures checks that signatures arriving on their own empty part, on the last
// text chunk and on a function call stay with their part, and go back on the same part.
func TestStreamSignatures(t *testing.T) {
	t.Parallel()
	sigThought, sigText, sigTail := []byte{1, 0xff}, []byte{2, 0xfe}, []byte{3, 0x80}
	chunk := func(part string) string {
		return fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[%s]}}]}`, part)
	}
	f := newFake(t,
		sseReply(
			chunk(`{"text":"plan","thought":true}`),
			chunk(`{"text":"ning","thought":true}`),
			chunk(fmt.Sprintf(`{"text":"","thoughtSignature":%q}`, b64(sigThought))),
			chunk(`{"text":"Checking "}`),
			chunk(fmt.Sprintf(`{"text":"now.","thoughtSignature":%q}`, b64(sigText))),
			chunk(fmt.Sprintf(`{"functionCall":{"name":"list_tasks","args":{}},"thoughtSignature":%q}`, b64(sig))),
			chunk(`{"functionCall":{"id":"c2","name":"get_current_time","args":{}}}`),
			`{"candidates":[{"content":{"role":"model","parts":[`+fmt.Sprintf(`{"text":"","thoughtSignature":%q}`, b64(sigTail))+
				`]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5}}`,
		),
		jsonReply(`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`),
	)
	m := f.model()
	history := []steward.Message{userText("tasks and time?")}
	var deltas []string
	resp, err := m.Generate(context.Background(), llm.Request{Messages: history},
		func(s string) error { deltas = append(deltas, s); return nil })
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if want := []string{"Checking ", "now."}; !slices.Equal(deltas, want) {
		t.Errorf("deltas = %q, want %q", deltas, want)
	}
	if resp.Finish != llm.FinishToolCalls {
		t.Errorf("finish = %s, want tool_calls", resp.Finish)
	}

	type wantPart struct {
		text    string
		thought bool
		call    string
		sig     []byte
	}
	want := []wantPart{
		{text: "planning", thought: true, sig: sigThought},
		{text: "Checking now.", sig: sigText},
		{call: "list_tasks", sig: sig},
		{call: "get_current_time"},
		{sig: sigTail},
	}
	parts := resp.Message.Parts
	if len(parts) != len(want) {
		t.Fatalf("parts = %+v, want %d parts", parts, len(want))
	}
	for i, w := range want {
		p := parts[i]
		call := ""
		if p.ToolCall != nil {
			call = p.ToolCall.Name
		}
		if p.Text != w.text || p.Thought != w.thought || call != w.call || !bytes.Equal(p.ProviderMeta, w.sig) {
			t.Errorf("part %d = %+v, want %+v", i, p, w)
		}
	}

	history = append(history, jsonbRoundTrip(t, resp.Message),
		results(resp.ToolCalls(), `{"tasks":[]}`, `{"time":"12:00"}`))
	generate(t, m, llm.Request{Messages: history})
	sent := f.last().body.Contents[1].Parts
	if len(sent) != len(want) {
		t.Fatalf("model parts sent = %+v, want %d", sent, len(want))
	}
	for i, w := range want {
		p := sent[i]
		call := ""
		if p.FunctionCall != nil {
			call = p.FunctionCall.Name
		}
		if p.Text != w.text || p.Thought != w.thought || call != w.call || !bytes.Equal(p.ThoughtSignature, w.sig) {
			t.Errorf("part %d sent = %+v, want %+v", i, p, w)
		}
	}
	if fc := sent[2].FunctionCall; fc.ID != nil {
		t.Errorf("minted id sent back: %q", *fc.ID)
	}
}

func TestStreamBlocked(t *testing.T) {
	t.Parallel()
	f := newFake(t, sseReply(`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4}}`))
	resp, err := f.model().Generate(context.Background(), llm.Request{Messages: []steward.Message{userText("hi")}},
		func(string) error { return nil })
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Finish != llm.FinishBlocked || resp.FinishDetail != "SAFETY" || resp.Usage.InputTokens != 4 {
		t.Errorf("response = %+v, want blocked (SAFETY) with usage", resp)
	}
}

func TestStreamDeltaErrorStops(t *testing.T) {
	t.Parallel()
	f := newFake(t, sseReply(
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"one"}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"two"}]},"finishReason":"STOP"}]}`,
	))
	stop := errors.New("client went away")
	calls := 0
	_, err := f.model().Generate(context.Background(), llm.Request{Messages: []steward.Message{userText("hi")}},
		func(string) error { calls++; return stop })
	if !errors.Is(err, stop) {
		t.Errorf("err = %v, want it to wrap the delta error", err)
	}
	if calls != 1 {
		t.Errorf("onDelta called %d times after it failed, want 1", calls)
	}
}
