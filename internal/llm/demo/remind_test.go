package demo

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// TestReminderPhrasings: "remind me at … to …", "remind me in N minutes to …", "every
// weekday at … tell me …" and "list my reminders" become the tools' calls; "remind me to …"
// stays a task.
func TestReminderPhrasings(t *testing.T) {
	t.Parallel()
	decls := []llm.ToolDecl{{Name: "create_task"}, {Name: "create_reminder"}, {Name: "create_automation"}, {Name: "list_reminders"}, {Name: "list_automations"}}
	for _, c := range []struct{ msg, tool, args string }{
		{"remind me at 17:00 to call the school", "create_reminder", `{"at":"17:00","text":"call the school"}`},
		{"Remind me in 2 minutes to stretch.", "create_reminder", `{"at":"in 2 minutes","text":"stretch"}`},
		{"remind me tomorrow 9:00 to go to the bank", "create_reminder", `{"at":"tomorrow 9:00","text":"go to the bank"}`},
		{"every weekday at 7:30 tell me my first meeting and the weather", "create_automation", `{"instruction":"tell me my first meeting and the weather","schedule":"every weekday at 7:30"}`},
		{"list my reminders", "list_reminders", `{}`},
		{"show my automations", "list_automations", `{}`},
		{"remind me to go to the shop", "create_task", `{"title":"go to the shop"}`},
	} {
		resp, err := New().Generate(context.Background(), llm.Request{Messages: []steward.Message{user(c.msg)}, Tools: decls}, nil)
		if err != nil {
			t.Fatal(err)
		}
		calls := resp.Message.Parts
		if len(calls) != 1 || calls[0].ToolCall == nil || calls[0].ToolCall.Name != c.tool || string(calls[0].ToolCall.Args) != c.args {
			t.Errorf("%q: %+v, want %s %s", c.msg, calls, c.tool, c.args)
		}
	}
	out := json.RawMessage(`{"reminder":{"text":"stretch","when":"Tue 8 Dec 2026 17:02 CET (16:02 UTC)"}}`)
	got := summarise([]steward.ToolResult{{CallID: "demo_1", Name: "create_reminder", Output: out}}, nil)
	if want := "Done — I will remind you Tue 8 Dec 2026 17:02 CET (16:02 UTC): “stretch”."; got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
}
