package builtin_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/tools/toolstest"

	"github.com/google/uuid"
)

func TestGetCurrentTime(t *testing.T) {
	t.Parallel()
	env, _ := toolstest.Env()
	tests := []struct{ args, time, zone, weekday string }{
		{``, "2025-03-01T09:30:00Z", "UTC", "Saturday"},
		{`{"timezone":"Asia/Tokyo"}`, "2025-03-01T18:30:00+09:00", "Asia/Tokyo", "Saturday"},
		{`{"timezone":"America/Los_Angeles"}`, "2025-03-01T01:30:00-08:00", "America/Los_Angeles", "Saturday"},
		{`{"timezone":"Pacific/Pago_Pago"}`, "2025-02-28T22:30:00-11:00", "Pacific/Pago_Pago", "Friday"},
	}
	for _, tc := range tests {
		out := toolstest.Run(t, env, "get_current_time", tc.args)
		if out["time"] != tc.time || out["timezone"] != tc.zone || out["weekday"] != tc.weekday {
			t.Errorf("get_current_time(%s) = %v, want %s %s %s", tc.args, out, tc.time, tc.zone, tc.weekday)
		}
	}
}

func TestTasks(t *testing.T) {
	t.Parallel()
	env, data := toolstest.Env()
	out := toolstest.Run(t, env, "create_task", `{"title":"  Buy milk ","due":"2025-03-02","notes":" 2 litres "}`)
	task := out["task"].(map[string]any)
	if task["title"] != "Buy milk" || task["notes"] != "2 litres" || task["status"] != "open" || task["due"] != "2025-03-02T00:00:00Z" {
		t.Errorf("created task = %v", task)
	}
	toolstest.Run(t, env, "create_task", `{"title":"Call Ann","due":"2025-03-02T10:00:00+01:00"}`)
	if due := data.Tasks[1].Due; due == nil || !due.Equal(time.Date(2025, 3, 2, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("RFC 3339 due = %v", due)
	}

	id := task["id"].(string)
	out = toolstest.Run(t, env, "complete_task", `{"task_id":"`+strings.ToUpper(id)+`"}`)
	if done := out["task"].(map[string]any); done["status"] != "done" || done["completed_at"] == nil {
		t.Errorf("completed task = %v", done)
	}

	count := func(args string) int { return len(toolstest.Run(t, env, "list_tasks", args)["tasks"].([]any)) }
	if n := count(`{}`); n != 1 {
		t.Errorf("open tasks = %d, want 1", n)
	}
	if n := count(`{"status":"done"}`); n != 1 {
		t.Errorf("done tasks = %d, want 1", n)
	}
	if n := count(`{"status":"all"}`); n != 2 {
		t.Errorf("all tasks = %d, want 2", n)
	}

	missing := uuid.New().String()
	ae := toolstest.RunArgErr(t, env, "complete_task", `{"task_id":"`+missing+`"}`)
	if ae.Field != "task_id" || !strings.Contains(ae.Error(), "no task with id "+missing) {
		t.Errorf("unknown task: %v", ae)
	}
}

func TestEmptyListsAreArrays(t *testing.T) {
	t.Parallel()
	env, _ := toolstest.Env()
	if got := toolstest.Run(t, env, "list_tasks", ``)["tasks"]; got == nil {
		t.Error(`list_tasks on nothing gives "tasks": null, want []`)
	}
	if got := toolstest.Run(t, env, "search_memory", `{"query":"x"}`)["facts"]; got == nil {
		t.Error(`search_memory on nothing gives "facts": null, want []`)
	}
}

func TestMemory(t *testing.T) {
	t.Parallel()
	env, data := toolstest.Env()
	out := toolstest.Run(t, env, "remember", `{"content":"Ann likes green tea.","subject":"Ann","kind":"person"}`)
	fact := out["fact"].(map[string]any)
	if out["created"] != true || fact["kind"] != "person" || fact["subject"] != "Ann" || fact["content"] != "Ann likes green tea." {
		t.Errorf("remember = %v", out)
	}
	id := fact["id"].(string)
	if turn := data.Turns[uuid.MustParse(id)]; turn == nil || *turn != env.TurnID {
		t.Errorf("fact turn = %v, want %s", turn, env.TurnID)
	}

	out = toolstest.Run(t, env, "remember", `{"content":"  ann LIKES green   tea ","subject":"ann","kind":"person"}`)
	if out["created"] != false || out["fact"].(map[string]any)["id"] != id {
		t.Errorf("remembering the same fact again = %v, want the existing one", out)
	}
	if out := toolstest.Run(t, env, "remember", `{"content":"Ships on Friday"}`); out["fact"].(map[string]any)["kind"] != "fact" {
		t.Errorf("default kind: %v", out)
	}

	facts := toolstest.Run(t, env, "search_memory", `{"query":"tea"}`)["facts"].([]any)
	if len(facts) != 1 || facts[0].(map[string]any)["id"] != id {
		t.Errorf("search_memory(tea) = %v", facts)
	}

	out = toolstest.Run(t, env, "forget", `{"fact_id":"`+id+`"}`)
	if out["forgotten"] != true || out["fact"].(map[string]any)["id"] != id {
		t.Errorf("forget = %v", out)
	}
	ae := toolstest.RunArgErr(t, env, "forget", `{"fact_id":"`+id+`"}`)
	if !strings.Contains(ae.Error(), "no fact with id "+id) {
		t.Errorf("forgetting twice: %v", ae)
	}
}

func TestNotify(t *testing.T) {
	t.Parallel()
	env, data := toolstest.Env()
	out := toolstest.Run(t, env, "notify", `{"message":" Your build finished ","title":"CI"}`)
	n := out["notification"].(map[string]any)
	if n["message"] != "Your build finished" || n["title"] != "CI" || len(data.Notifications) != 1 {
		t.Errorf("notify = %v", out)
	}
}

func TestCalculateTool(t *testing.T) {
	t.Parallel()
	env, _ := toolstest.Env()
	out, err := toolstest.Registry().Run(context.Background(), env, "calculate", json.RawMessage(`{"expression":"(1+2)*3"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"expression":"(1+2)*3","result":9}`; string(out) != want {
		t.Errorf("output = %s, want %s", out, want)
	}
	ae := toolstest.RunArgErr(t, env, "calculate", `{"expression":"1/0"}`)
	if ae.Field != "expression" || !strings.Contains(ae.Error(), "at position 2: division by zero") {
		t.Errorf("ArgError = %+v (%q)", ae, ae.Error())
	}
}
