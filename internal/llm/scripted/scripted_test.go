package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

func userText(s string) steward.Message {
	return steward.Message{Role: steward.RoleUser, Parts: []steward.Part{{Text: s}}}
}

func TestModelReplaysScript(t *testing.T) {
	t.Parallel()
	var seen llm.Request
	m := New(
		Reply(Calls(Call("c1", "create_task", `{"title":"milk"}`), Call("c2", "list_tasks", ""))),
		func(req llm.Request) (llm.Response, error) {
			seen = req
			return Text("Added."), nil
		},
	)
	ctx := context.Background()
	req := llm.Request{System: "sys", Messages: []steward.Message{userText("add milk")}, Tools: []llm.ToolDecl{{Name: "create_task"}}}

	first, err := m.Generate(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := first.ToolCalls()
	if first.Finish != llm.FinishToolCalls || len(calls) != 2 || calls[0].ID != "c1" || calls[1].Name != "list_tasks" {
		t.Fatalf("first response = %+v, want two calls", first)
	}
	if string(calls[1].Args) != "{}" {
		t.Errorf("empty args = %s, want {}", calls[1].Args)
	}

	results := steward.Message{Role: steward.RoleUser, Parts: []steward.Part{
		{ToolResult: &steward.ToolResult{CallID: "c1", Name: "create_task", Output: json.RawMessage(`{"id":1}`)}},
		{ToolResult: &steward.ToolResult{CallID: "c2", Name: "list_tasks", Output: json.RawMessage(`[]`)}},
	}}
	req.Messages = append(req.Messages, first.Message, results)
	second, err := m.Generate(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Text() != "Added." || second.Finish != llm.FinishStop || second.Model != Name {
		t.Errorf("second response = %+v, want the text answer", second)
	}
	if len(seen.Messages) != 3 || seen.Messages[2].Parts[1].ToolResult.CallID != "c2" {
		t.Errorf("step saw %+v, want the tool results", seen.Messages)
	}

	reqs := m.Requests()
	if len(reqs) != 2 || len(reqs[0].Messages) != 1 || len(reqs[1].Messages) != 3 || reqs[0].System != "sys" {
		t.Errorf("requests = %+v, want both requests as sent", reqs)
	}
	if m.Remaining() != 0 {
		t.Errorf("Remaining() = %d, want 0", m.Remaining())
	}
}

func TestModelExhausted(t *testing.T) {
	t.Parallel()
	m := New(Reply(Text("only")))
	ctx := context.Background()
	if _, err := m.Generate(ctx, llm.Request{}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := m.Generate(ctx, llm.Request{Messages: []steward.Message{userText("again")}}, nil)
	if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "call 2") {
		t.Errorf("err = %v, want ErrExhausted naming call 2", err)
	}
	if n := len(m.Requests()); n != 2 {
		t.Errorf("recorded %d requests, want 2 (the failed call too)", n)
	}
}

func TestModelFailStep(t *testing.T) {
	t.Parallel()
	boom := errors.New("provider down")
	m := New(Fail(boom), Reply(Text("recovered")))
	if _, err := m.Generate(context.Background(), llm.Request{}, nil); !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
	resp, err := m.Generate(context.Background(), llm.Request{}, nil)
	if err != nil || resp.Text() != "recovered" {
		t.Errorf("after failure: %+v, %v", resp, err)
	}
}

func TestModelCancelledContext(t *testing.T) {
	t.Parallel()
	m := New(Reply(Text("x")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Generate(ctx, llm.Request{}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if m.Remaining() != 1 {
		t.Errorf("a cancelled call used a step")
	}
}

func TestModelRecordsCopies(t *testing.T) {
	t.Parallel()
	m := New(Reply(Text("a")), func(req llm.Request) (llm.Response, error) {
		req.Messages[0].Parts[0].ToolCall.Name = "changed by step"
		return Text("b"), nil
	})
	call := Call("c1", "create_task", `{"title":"milk"}`)
	req := llm.Request{
		Messages: []steward.Message{{Role: steward.RoleModel, Parts: []steward.Part{{ToolCall: &call, ProviderMeta: []byte{1}}}}},
		Tools:    []llm.ToolDecl{{Name: "create_task", Parameters: json.RawMessage(`{}`)}},
	}
	for range 2 {
		if _, err := m.Generate(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The caller changes its request after the calls...
	call.Name = "changed by caller"
	call.Args[2] = 'X'
	req.Messages[0].Parts[0].ProviderMeta[0] = 9
	req.Tools[0].Parameters[0] = '['
	// ...and a test changes what Requests returned.
	got := m.Requests()
	got[0].Messages[0].Parts[0].ToolCall.Name = "changed by test"

	for i, r := range m.Requests() {
		p := r.Messages[0].Parts[0]
		if p.ToolCall.Name != "create_task" || string(p.ToolCall.Args) != `{"title":"milk"}` ||
			p.ProviderMeta[0] != 1 || string(r.Tools[0].Parameters) != `{}` {
			t.Errorf("request %d changed after it was recorded: %+v %s", i, p.ToolCall, r.Tools[0].Parameters)
		}
	}
}

func TestModelStreamsWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		resp llm.Response
		want []string
	}{
		{"sentence", Text("Done — I added it."), []string{"Done ", "— ", "I ", "added ", "it."}},
		{"one word", Text("ok"), []string{"ok"}},
		{"calls only", Calls(Call("c1", "list_tasks", "")), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var deltas []string
			resp, err := New(Reply(tt.resp)).Generate(context.Background(), llm.Request{},
				func(s string) error { deltas = append(deltas, s); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(deltas, tt.want) {
				t.Errorf("deltas = %q, want %q", deltas, tt.want)
			}
			if strings.Join(deltas, "") != resp.Text() {
				t.Errorf("deltas %q do not add up to %q", deltas, resp.Text())
			}
		})
	}

	stop := errors.New("stop")
	_, err := New(Reply(Text("a b c"))).Generate(context.Background(), llm.Request{},
		func(string) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("err = %v, want the delta error", err)
	}
}

func TestModelFinishDefaults(t *testing.T) {
	t.Parallel()
	call := Call("c1", "list_tasks", "")
	tests := []struct {
		name string
		resp llm.Response
		want llm.Finish
	}{
		{"text", llm.Response{Message: steward.Message{Role: steward.RoleModel, Parts: []steward.Part{{Text: "hi"}}}}, llm.FinishStop},
		{"calls", llm.Response{Message: steward.Message{Role: steward.RoleModel, Parts: []steward.Part{{ToolCall: &call}}}}, llm.FinishToolCalls},
		{"explicit", llm.Response{Finish: llm.FinishBlocked, FinishDetail: "SAFETY"}, llm.FinishBlocked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := New(Reply(tt.resp)).Generate(context.Background(), llm.Request{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Finish != tt.want {
				t.Errorf("Finish = %s, want %s", resp.Finish, tt.want)
			}
		})
	}
}

func TestModelConcurrentUse(t *testing.T) {
	t.Parallel()
	const n = 50
	steps := make([]Step, n)
	for i := range steps {
		steps[i] = Reply(Text("x"))
	}
	m := New(steps...)
	var wg sync.WaitGroup
	errs := make(chan error, n+1)
	for range n + 1 {
		wg.Go(func() {
			_, err := m.Generate(context.Background(), llm.Request{Messages: []steward.Message{userText("hi")}}, func(string) error { return nil })
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	exhausted := 0
	for err := range errs {
		switch {
		case errors.Is(err, ErrExhausted):
			exhausted++
		case err != nil:
			t.Errorf("Generate: %v", err)
		}
	}
	if exhausted != 1 || len(m.Requests()) != n+1 || m.Remaining() != 0 {
		t.Errorf("exhausted %d, requests %d, remaining %d; want 1, %d, 0", exhausted, len(m.Requests()), m.Remaining(), n+1)
	}
}
