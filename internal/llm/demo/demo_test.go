package demo

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

var allTools = []llm.ToolDecl{
	{Name: "create_task"}, {Name: "remember"}, {Name: "get_current_time"}, {Name: "list_tasks"}, {Name: "run_code"},
}

func user(s string) steward.Message {
	return steward.Message{Role: steward.RoleUser, Parts: []steward.Part{{Text: s}}}
}

func TestGenerateUserText(t *testing.T) {
	t.Parallel()
	earlier := steward.ToolCall{ID: "demo_1", Name: "list_tasks", Args: json.RawMessage(`{}`)}
	tests := []struct {
		name     string
		msgs     []steward.Message
		tools    []llm.ToolDecl
		wantCall *steward.ToolCall // nil: a text answer
		wantText string            // a substring of the text answer
	}{
		{"remind me", []steward.Message{user("remind me to buy milk")}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "create_task", Args: json.RawMessage(`{"title":"buy milk"}`)}, ""},
		{"add a task, mixed case and punctuation", []steward.Message{user("  Add a task: Call Mom!  ")}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "create_task", Args: json.RawMessage(`{"title":"Call Mom"}`)}, ""},
		{"add task quoted", []steward.Message{user(`please add task "file taxes".`)}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "create_task", Args: json.RawMessage(`{"title":"file taxes"}`)}, ""},
		{"remember", []steward.Message{user("REMEMBER THAT I like green tea")}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "remember", Args: json.RawMessage(`{"content":"I like green tea"}`)}, ""},
		{"time", []steward.Message{user("What time is it?")}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "get_current_time", Args: json.RawMessage(`{}`)}, ""},
		{"time variant", []steward.Message{user("what’s the time")}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "get_current_time", Args: json.RawMessage(`{}`)}, ""},
		{"time in a sentence", []steward.Message{user("hey, what time is it in here?")}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "get_current_time", Args: json.RawMessage(`{}`)}, ""},
		{"calculate an expression", []steward.Message{user("Calculate (2 + 3) * 4.")}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "run_code", Args: json.RawMessage(`{"code":"(2 + 3) * 4"}`)}, ""},
		{"compute an average", []steward.Message{user("compute the average of 3, 5 and 10")}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "run_code", Args: json.RawMessage(`{"code":"statistics.mean([3, 5, 10])"}`)}, ""},
		{"list", []steward.Message{user("List my tasks")}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "list_tasks", Args: json.RawMessage(`{}`)}, ""},
		{"what are my tasks", []steward.Message{user("what are my tasks?")}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "list_tasks", Args: json.RawMessage(`{}`)}, ""},
		{"show", []steward.Message{user("show my tasks")}, allTools,
			&steward.ToolCall{ID: "demo_1", Name: "list_tasks", Args: json.RawMessage(`{}`)}, ""},
		{"ids continue the conversation's", []steward.Message{
			user("list my tasks"),
			{Role: steward.RoleModel, Parts: []steward.Part{{ToolCall: &earlier}}},
			{Role: steward.RoleUser, Parts: []steward.Part{{ToolResult: &steward.ToolResult{CallID: "demo_1", Name: "list_tasks", Output: json.RawMessage(`[]`)}}}},
			{Role: steward.RoleModel, Parts: []steward.Part{{Text: "You have no tasks."}}},
			user("remind me to water plants"),
		}, allTools, &steward.ToolCall{ID: "demo_2", Name: "create_task", Args: json.RawMessage(`{"title":"water plants"}`)}, ""},
		{"recalled memory is not the owner's words", []steward.Message{{Role: steward.RoleUser, Parts: []steward.Part{
			{Text: "<data source=\"memory\">\n- conversation: Owner: what time is it Steward: It is noon.\n</data>", Context: true},
			{Text: "remind me to call the dentist"},
		}}}, allTools, &steward.ToolCall{ID: "demo_1", Name: "create_task", Args: json.RawMessage(`{"title":"call the dentist"}`)}, ""},
		{"a memory block alone is not a request", []steward.Message{{Role: steward.RoleUser, Parts: []steward.Part{
			{Text: "Owner: what time is it", Context: true}, {Text: "hello there"},
		}}}, allTools, nil, "offline demo model"},
		{"unknown text", []steward.Message{user("hello there")}, allTools, nil, "offline demo model"},
		{"empty title", []steward.Message{user("remind me to")}, allTools, nil, "remind me to …"},
		{"no messages", nil, allTools, nil, "offline demo model"},
		{"tools nil", []steward.Message{user("remind me to buy milk")}, nil, nil, "create_task tool"},
		{"tool not declared", []steward.Message{user("what time is it")}, []llm.ToolDecl{{Name: "create_task"}}, nil, "not available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := New().Generate(context.Background(), llm.Request{Messages: tt.msgs, Tools: tt.tools}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Model != Name || resp.Usage != (steward.Usage{}) || resp.Message.Role != steward.RoleModel {
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
	call := func(id, name, args string) steward.Part {
		return steward.Part{ToolCall: &steward.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}}
	}
	result := func(id, name, out string, isErr bool) steward.Part {
		return steward.Part{ToolResult: &steward.ToolResult{CallID: id, Name: name, Output: json.RawMessage(out), IsError: isErr}}
	}
	tests := []struct {
		name    string
		calls   []steward.Part
		results []steward.Part
		want    string
	}{
		{"task created",
			[]steward.Part{call("demo_1", "create_task", `{"title":"buy milk"}`)},
			[]steward.Part{result("demo_1", "create_task", `{"id":"7f1c","title":"buy milk","status":"open"}`, false)},
			"Done — I added the task “buy milk”."},
		{"task created, title only in the call",
			[]steward.Part{call("demo_1", "create_task", `{"title":"buy milk"}`)},
			[]steward.Part{result("demo_1", "create_task", `{"id":"7f1c"}`, false)},
			"Done — I added the task “buy milk”."},
		{"task denied",
			[]steward.Part{call("demo_1", "create_task", `{"title":"buy milk"}`)},
			[]steward.Part{result("demo_1", "create_task", `{"error":"denied by the owner: not today"}`, true)},
			"I did not add the task “buy milk”: “denied by the owner: not today”."},
		{"denied by the owner, the agent's refusal without a reason",
			[]steward.Part{call("demo_1", "create_task", `{"title":"buy milk"}`)},
			[]steward.Part{result("demo_1", "create_task", `{"message":"","refused_by":"the owner","status":"not done"}`, true)},
			"I did not add the task “buy milk”: you declined it."},
		{"denied by the owner with a reason",
			[]steward.Part{call("demo_1", "create_task", `{"title":"buy milk"}`)},
			[]steward.Part{result("demo_1", "create_task", `{"message":"not today","refused_by":"the owner","status":"not done"}`, true)},
			"I did not add the task “buy milk”: you declined it (“not today”)."},
		{"refused by a rule",
			[]steward.Part{call("demo_1", "create_task", `{"title":"buy milk"}`)},
			[]steward.Part{result("demo_1", "create_task", `{"message":"no tasks at night","refused_by":"refused by rule 3","status":"not done"}`, true)},
			"I did not add the task “buy milk”: “refused by rule 3: no tasks at night”."},
		{"error as a string",
			[]steward.Part{call("demo_1", "get_current_time", `{}`)},
			[]steward.Part{result("demo_1", "get_current_time", `"clock unavailable"`, true)},
			"I did not run get_current_time: “clock unavailable”."},
		{"nested error message",
			[]steward.Part{call("demo_1", "remember", `{"content":"I like tea"}`)},
			[]steward.Part{result("demo_1", "remember", `{"error":{"code":"killed","message":"the kill switch is engaged"}}`, true)},
			"I did not remember that I like tea: “the kill switch is engaged”."},
		{"remembered",
			[]steward.Part{call("demo_1", "remember", `{"content":"I like tea"}`)},
			[]steward.Part{result("demo_1", "remember", `{"id":3}`, false)},
			"Done — I will remember that I like tea."},
		{"tasks listed",
			[]steward.Part{call("demo_1", "list_tasks", `{}`)},
			[]steward.Part{result("demo_1", "list_tasks", `{"tasks":[{"title":"buy milk","status":"open"},{"title":"call mom"}]}`, false)},
			"Your tasks:\n- buy milk\n- call mom"},
		{"task list as an array",
			[]steward.Part{call("demo_1", "list_tasks", `{}`)},
			[]steward.Part{result("demo_1", "list_tasks", `["a","b"]`, false)},
			"Your tasks:\n- a\n- b"},
		{"no tasks",
			[]steward.Part{call("demo_1", "list_tasks", `{}`)},
			[]steward.Part{result("demo_1", "list_tasks", `{"tasks":[]}`, false)},
			"You have no tasks."},
		{"time",
			[]steward.Part{call("demo_1", "get_current_time", `{}`)},
			[]steward.Part{result("demo_1", "get_current_time", `{"time":"2026-03-01T09:30:00+01:00","timezone":"Europe/Paris"}`, false)},
			"It is 2026-03-01T09:30:00+01:00."},
		{"other tool",
			[]steward.Part{call("demo_1", "weather", `{}`)},
			[]steward.Part{result("demo_1", "weather", `{"temp":21,"sky":"clear","hourly":[1,2]}`, false)},
			"weather returned sky: clear, temp: 21."},
		{"batch, one line per result in order",
			[]steward.Part{call("demo_1", "create_task", `{"title":"a"}`), call("demo_2", "get_current_time", `{}`)},
			[]steward.Part{result("demo_1", "create_task", `{"error":"denied"}`, true), result("demo_2", "get_current_time", `{"now":"noon"}`, false)},
			"I did not add the task “a”: “denied”.\nIt is noon."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msgs := []steward.Message{
				user("do it"),
				{Role: steward.RoleModel, Parts: tt.calls},
				{Role: steward.RoleUser, Parts: tt.results},
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
			resp, err := New().Generate(context.Background(), llm.Request{Messages: []steward.Message{user(tt.msg)}, Tools: allTools},
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
	_, err := New().Generate(context.Background(), llm.Request{Messages: []steward.Message{user("hello")}},
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
		Messages: []steward.Message{user("remind me to buy milk")}, Tools: allTools, NoToolCalls: true}, nil)
	if err != nil || len(resp.ToolCalls()) != 0 || resp.Finish != llm.FinishStop || resp.Text() == "" {
		t.Fatalf("response = %+v, %v; want a text answer and no call", resp, err)
	}
}

// TestSpendQuestion: "how much did I spend on …" asks ledger_report by category and by
// merchant for the period named, and the answer reads the amount of what was named.
func TestSpendQuestion(t *testing.T) {
	now := time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC)
	m := Model{Now: func() time.Time { return now }}
	for _, tc := range []struct{ msg, from, to string }{
		{"How much did I spend on groceries?", "1000-01-01", "2026-04-10"},
		{"how much did I spend on groceries this month", "2026-04-01", "2026-04-10"},
		{"How much have I spent on Netflix last month?", "2026-03-01", "2026-03-31"},
		{"how much did i spend on eating out in march", "2026-03-01", "2026-03-31"},
		{"how much did I spend on rent in December", "2025-12-01", "2025-12-31"},
		{"how much did I spend on", "", ""},
	} {
		req := llm.Request{Messages: []steward.Message{user(tc.msg)}, Tools: []llm.ToolDecl{{Name: "ledger_report"}}}
		resp, err := m.Generate(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		var calls []steward.ToolCall
		for _, p := range resp.Message.Parts {
			if p.ToolCall != nil {
				calls = append(calls, *p.ToolCall)
			}
		}
		if tc.from == "" {
			if len(calls) != 0 {
				t.Errorf("%q: calls %v, want none (not a phrasing the demo knows)", tc.msg, calls)
			}
			continue
		}
		if len(calls) != 2 || calls[0].Name != "ledger_report" || calls[0].ID == calls[1].ID {
			t.Fatalf("%q: calls %+v", tc.msg, calls)
		}
		for i, by := range []string{"category", "merchant"} {
			var args map[string]string
			if err := json.Unmarshal(calls[i].Args, &args); err != nil || args["from"] != tc.from || args["to"] != tc.to || args["by"] != by {
				t.Errorf("%q: call %d args %s, want %s..%s by %s", tc.msg, i, calls[i].Args, tc.from, tc.to, by)
			}
		}
	}

	// The results: the category the owner named, else the merchant, else the top categories.
	report := func(by, lines string) string {
		return `{"from":"2026-03-01","to":"2026-03-31","by":"` + by + `","lines":[` + lines + `],"totals":[]}`
	}
	cats := report("category", `{"key":"Rent","currency":"EUR","count":1,"out_minor":95000,"out":"950.00 EUR"},{"key":"Groceries","currency":"EUR","count":14,"out_minor":74670,"out":"746.70 EUR"}`)
	merchants := report("merchant", `{"key":"Netflix.com","currency":"EUR","count":1,"out_minor":1299,"out":"12.99 EUR"}`)
	for _, tc := range []struct{ msg, want string }{
		{"how much did I spend on groceries in march", "You spent 746.70 EUR on Groceries (14 payments) between 2026-03-01 and 2026-03-31."},
		{"how much did I spend on netflix in march", "You spent 12.99 EUR on Netflix.com (1 payment) between 2026-03-01 and 2026-03-31."},
		{"how much did I spend on horses in march", "I found no spending on “horses” between 2026-03-01 and 2026-03-31. What you spent most on: Rent 950.00 EUR, Groceries 746.70 EUR."},
	} {
		msgs := []steward.Message{
			user(tc.msg),
			{Role: steward.RoleModel, Parts: []steward.Part{
				{ToolCall: &steward.ToolCall{ID: "demo_1", Name: "ledger_report"}},
				{ToolCall: &steward.ToolCall{ID: "demo_2", Name: "ledger_report"}}}},
			{Role: steward.RoleUser, Parts: []steward.Part{
				{ToolResult: &steward.ToolResult{CallID: "demo_1", Name: "ledger_report", Output: json.RawMessage(cats)}},
				{ToolResult: &steward.ToolResult{CallID: "demo_2", Name: "ledger_report", Output: json.RawMessage(merchants)}}}},
		}
		resp, err := m.Generate(context.Background(), llm.Request{Messages: msgs}, nil)
		if err != nil || resp.Text() != tc.want {
			t.Errorf("%q: answer %q, %v; want %q", tc.msg, resp.Text(), err, tc.want)
		}
	}
}

// TestMailPhrasing: the mail and calendar phrasings become their calls; a "send" without an
// address is not a send.
func TestMailPhrasing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ msg, tool, args string }{
		{"Any new mail?", "search_mail", `{"unread":true}`},
		{"what’s on my calendar today", "list_events", `{"from":"today"}`},
		{"What's on my calendar tomorrow?", "list_events", `{"from":"tomorrow"}`},
		{"send running late to ada@example.com", "send_mail", `{"body":"running late","subject":"running late","to":["ada@example.com"]}`},
		{"Send an email to bob@example.com saying the keys are under the mat.", "send_mail",
			`{"body":"the keys are under the mat","subject":"the keys are under the mat","to":["bob@example.com"]}`},
		{"send the report to Bob", "", ""},
	} {
		in, ok := parse(clean(tc.msg), time.Now())
		if tc.tool == "" {
			if ok {
				t.Errorf("%q: parsed as %s, want not understood", tc.msg, in.tool)
			}
			continue
		}
		if !ok || in.tool != tc.tool || string(in.args[0]) != tc.args {
			t.Errorf("%q: %v %s %s, want %s %s", tc.msg, ok, in.tool, in.args, tc.tool, tc.args)
		}
	}
}
