package demo

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/llm"
)

var allTools = []llm.ToolDecl{
	{Name: "create_task"}, {Name: "remember"}, {Name: "get_current_time"}, {Name: "list_tasks"},
}

func user(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Text: s}}}
}

func TestGenerateUserText(t *testing.T) {
	t.Parallel()
	earlier := llm.ToolCall{ID: "demo_1", Name: "list_tasks", Args: json.RawMessage(`{}`)}
	tests := []struct {
		name     string
		msgs     []llm.Message
		tools    []llm.ToolDecl
		wantCall *llm.ToolCall // nil: a text answer
		wantText string        // a substring of the text answer
	}{
		{"remind me", []llm.Message{user("remind me to buy milk")}, allTools,
			&llm.ToolCall{ID: "demo_1", Name: "create_task", Args: json.RawMessage(`{"title":"buy milk"}`)}, ""},
		{"add a task, mixed case and punctuation", []llm.Message{user("  Add a task: Call Mom!  ")}, allTools,
			&llm.ToolCall{ID: "demo_1", Name: "create_task", Args: json.RawMessage(`{"title":"Call Mom"}`)}, ""},
		{"add task quoted", []llm.Message{user(`please add task "file taxes".`)}, allTools,
			&llm.ToolCall{ID: "demo_1", Name: "create_task", Args: json.RawMessage(`{"title":"file taxes"}`)}, ""},
		{"remember", []llm.Message{user("REMEMBER THAT I like green tea")}, allTools,
			&llm.ToolCall{ID: "demo_1", Name: "remember", Args: json.RawMessage(`{"content":"I like green tea"}`)}, ""},
		{"time", []llm.Message{user("What time is it?")}, allTools,
			&llm.ToolCall{ID: "demo_1", Name: "get_current_time", Args: json.RawMessage(`{}`)}, ""},
		{"time variant", []llm.Message{user("what’s the time")}, allTools,
			&llm.ToolCall{ID: "demo_1", Name: "get_current_time", Args: json.RawMessage(`{}`)}, ""},
		{"time in a sentence", []llm.Message{user("hey, what time is it in here?")}, allTools,
			&llm.ToolCall{ID: "demo_1", Name: "get_current_time", Args: json.RawMessage(`{}`)}, ""},
		{"list", []llm.Message{user("List my tasks")}, allTools,
			&llm.ToolCall{ID: "demo_1", Name: "list_tasks", Args: json.RawMessage(`{}`)}, ""},
		{"what are my tasks", []llm.Message{user("what are my tasks?")}, allTools,
			&llm.ToolCall{ID: "demo_1", Name: "list_tasks", Args: json.RawMessage(`{}`)}, ""},
		{"show", []llm.Message{user("show my tasks")}, allTools,
			&llm.ToolCall{ID: "demo_1", Name: "list_tasks", Args: json.RawMessage(`{}`)}, ""},
		{"ids continue the conversation's", []llm.Message{
			user("list my tasks"),
			{Role: llm.RoleModel, Parts: []llm.Part{{ToolCall: &earlier}}},
			{Role: llm.RoleUser, Parts: []llm.Part{{ToolResult: &llm.ToolResult{CallID: "demo_1", Name: "list_tasks", Output: json.RawMessage(`[]`)}}}},
			{Role: llm.RoleModel, Parts: []llm.Part{{Text: "You have no tasks."}}},
			user("remind me to water plants"),
		}, allTools, &llm.ToolCall{ID: "demo_2", Name: "create_task", Args: json.RawMessage(`{"title":"water plants"}`)}, ""},
		{"recalled memory is not the owner's words", []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			{Text: "<data source=\"memory\">\n- conversation: Owner: what time is it Steward: It is noon.\n</data>", Context: true},
			{Text: "remind me to call the dentist"},
		}}}, allTools, &llm.ToolCall{ID: "demo_1", Name: "create_task", Args: json.RawMessage(`{"title":"call the dentist"}`)}, ""},
		{"a memory block alone is not a request", []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			{Text: "Owner: what time is it", Context: true}, {Text: "hello there"},
		}}}, allTools, nil, "offline demo model"},
		{"unknown text", []llm.Message{user("hello there")}, allTools, nil, "offline demo model"},
		{"empty title", []llm.Message{user("remind me to")}, allTools, nil, "remind me to …"},
		{"no messages", nil, allTools, nil, "offline demo model"},
		{"tools nil", []llm.Message{user("remind me to buy milk")}, nil, nil, "create_task tool"},
		{"tool not declared", []llm.Message{user("what time is it")}, []llm.ToolDecl{{Name: "create_task"}}, nil, "not available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := New().Generate(context.Background(), llm.Request{Messages: tt.msgs, Tools: tt.tools}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Model != Name || resp.Usage != (llm.Usage{}) || resp.Message.Role != llm.RoleModel {
				t.Errorf("response = %+v, want model %q, zero usage, role model", resp, Name)
			}
			calls := resp.ToolCalls()
			if tt.wantCall == nil {
				if len(calls) != 0 || resp.Finish != llm.FinishStop || !strings.Contains(resp.Text(), tt.wantText) {
					t.Errorf("got %+v (%s), want text containing %q", resp.Message, resp.Finish, tt.wantText)
				}
				return
			}
			if len(calls) != 1 || resp.Finish != llm.FinishToolCalls {
				t.Fatalf("got %+v (%s), want one call", resp.Message, resp.Finish)
			}
			c, w := calls[0], tt.wantCall
			if c.ID != w.ID || c.Name != w.Name || string(c.Args) != string(w.Args) || c.MintedID {
				t.Errorf("call = %s %s %s, want %s %s %s", c.ID, c.Name, c.Args, w.ID, w.Name, w.Args)
			}
		})
	}
}

func TestGenerateToolResults(t *testing.T) {
	t.Parallel()
	call := func(id, name, args string) llm.Part {
		return llm.Part{ToolCall: &llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}}
	}
	result := func(id, name, out string, isErr bool) llm.Part {
		return llm.Part{ToolResult: &llm.ToolResult{CallID: id, Name: name, Output: json.RawMessage(out), IsError: isErr}}
	}
	tests := []struct {
		name    string
		calls   []llm.Part
		results []llm.Part
		want    string
	}{
		{"task created",
			[]llm.Part{call("demo_1", "create_task", `{"title":"buy milk"}`)},
			[]llm.Part{result("demo_1", "create_task", `{"id":"7f1c","title":"buy milk","status":"open"}`, false)},
			"Done — I added the task “buy milk”."},
		{"task created, title only in the call",
			[]llm.Part{call("demo_1", "create_task", `{"title":"buy milk"}`)},
			[]llm.Part{result("demo_1", "create_task", `{"id":"7f1c"}`, false)},
			"Done — I added the task “buy milk”."},
		{"task denied",
			[]llm.Part{call("demo_1", "create_task", `{"title":"buy milk"}`)},
			[]llm.Part{result("demo_1", "create_task", `{"error":"denied by the owner: not today"}`, true)},
			"I did not add the task “buy milk”: “denied by the owner: not today”."},
		{"error as a string",
			[]llm.Part{call("demo_1", "get_current_time", `{}`)},
			[]llm.Part{result("demo_1", "get_current_time", `"clock unavailable"`, true)},
			"I did not run get_current_time: “clock unavailable”."},
		{"nested error message",
			[]llm.Part{call("demo_1", "remember", `{"content":"I like tea"}`)},
			[]llm.Part{result("demo_1", "remember", `{"error":{"code":"killed","message":"the kill switch is engaged"}}`, true)},
			"I did not remember that I like tea: “the kill switch is engaged”."},
		{"remembered",
			[]llm.Part{call("demo_1", "remember", `{"content":"I like tea"}`)},
			[]llm.Part{result("demo_1", "remember", `{"id":3}`, false)},
			"Done — I will remember that I like tea."},
		{"tasks listed",
			[]llm.Part{call("demo_1", "list_tasks", `{}`)},
			[]llm.Part{result("demo_1", "list_tasks", `{"tasks":[{"title":"buy milk","status":"open"},{"title":"call mom"}]}`, false)},
			"Your tasks:\n- buy milk\n- call mom"},
		{"task list as an array",
			[]llm.Part{call("demo_1", "list_tasks", `{}`)},
			[]llm.Part{result("demo_1", "list_tasks", `["a","b"]`, false)},
			"Your tasks:\n- a\n- b"},
		{"no tasks",
			[]llm.Part{call("demo_1", "list_tasks", `{}`)},
			[]llm.Part{result("demo_1", "list_tasks", `{"tasks":[]}`, false)},
			"You have no tasks."},
		{"time",
			[]llm.Part{call("demo_1", "get_current_time", `{}`)},
			[]llm.Part{result("demo_1", "get_current_time", `{"time":"2026-03-01T09:30:00+01:00","timezone":"Europe/Paris"}`, false)},
			"It is 2026-03-01T09:30:00+01:00."},
		{"other tool",
			[]llm.Part{call("demo_1", "weather", `{}`)},
			[]llm.Part{result("demo_1", "weather", `{"temp":21,"sky":"clear","hourly":[1,2]}`, false)},
			"weather returned sky: clear, temp: 21."},
		{"batch, one line per result in order",
			[]llm.Part{call("demo_1", "create_task", `{"title":"a"}`), call("demo_2", "get_current_time", `{}`)},
			[]llm.Part{result("demo_1", "create_task", `{"error":"denied"}`, true), result("demo_2", "get_current_time", `{"now":"noon"}`, false)},
			"I did not add the task “a”: “denied”.\nIt is noon."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msgs := []llm.Message{
				user("do it"),
				{Role: llm.RoleModel, Parts: tt.calls},
				{Role: llm.RoleUser, Parts: tt.results},
			}
			for _, tools := range [][]llm.ToolDecl{allTools, nil} {
				resp, err := New().Generate(context.Background(), llm.Request{Messages: msgs, Tools: tools}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Text() != tt.want || resp.Finish != llm.FinishStop || len(resp.ToolCalls()) != 0 {
					t.Errorf("tools %v: got %q (%s), want %q", tools != nil, resp.Text(), resp.Finish, tt.want)
				}
			}
		})
	}
}

func TestGenerateStreams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		msg       string
		wantDelta bool
	}{
		{"text answer", "hello", true},
		{"tool call", "list my tasks", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var deltas []string
			resp, err := New().Generate(context.Background(), llm.Request{Messages: []llm.Message{user(tt.msg)}, Tools: allTools},
				func(s string) error { deltas = append(deltas, s); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(deltas, ""); got != resp.Text() {
				t.Errorf("deltas add up to %q, want %q", got, resp.Text())
			}
			if (len(deltas) > 1) != tt.wantDelta {
				t.Errorf("got %d deltas, want word by word: %v", len(deltas), tt.wantDelta)
			}
		})
	}

	stop := errors.New("stop")
	_, err := New().Generate(context.Background(), llm.Request{Messages: []llm.Message{user("hello")}},
		func(string) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("err = %v, want the delta error", err)
	}
}

func TestName(t *testing.T) {
	t.Parallel()
	var m llm.Model = New()
	if !strings.Contains(m.Name(), "offline") || !strings.Contains(m.Name(), "GEMINI_API_KEY") {
		t.Errorf("Name() = %q, want it to say it is offline for lack of GEMINI_API_KEY", m.Name())
	}
}

// TestNoToolCallsAnswersInText: with tool calls forbidden (the final completion after the
// iteration cap) the demo answers in text even when the tool is declared.
func TestNoToolCallsAnswersInText(t *testing.T) {
	t.Parallel()
	resp, err := New().Generate(context.Background(), llm.Request{
		Messages: []llm.Message{user("remind me to buy milk")}, Tools: allTools, NoToolCalls: true}, nil)
	if err != nil || len(resp.ToolCalls()) != 0 || resp.Finish != llm.FinishStop || resp.Text() == "" {
		t.Fatalf("response = %+v, %v; want a text answer and no call", resp, err)
	}
}
