package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

func TestValidationRejectsBadArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool, args string
		field            string // ArgError.Field, if any
		want             []string
	}{
		{"bad json", "create_task", `{"title":`, "", []string{"not valid JSON"}},
		{"trailing data", "create_task", `{"title":"a"} x`, "", []string{"not valid JSON"}},
		{"not an object", "create_task", `["a"]`, "", []string{"must be of type object, not array"}},
		{"string instead of object", "calculate", `"1+1"`, "", []string{"must be of type object, not string"}},
		{"missing field", "create_task", `{}`, "", []string{`missing required argument(s) "title"`}},
		{"missing field among others", "create_task", `{"notes":"x"}`, "", []string{`"title"`}},
		{"wrong type", "create_task", `{"title":42}`, "", []string{"title: ", "must be of type string, not integer"}},
		{"wrong type number", "calculate", `{"expression":1.5}`, "", []string{"expression: ", "must be of type string, not number"}},
		{"null field", "notify", `{"message":null}`, "", []string{"message: ", "not null"}},
		{"unknown field", "create_task", `{"title":"a","priority":1}`, "", []string{`unknown argument(s) "priority"`, "allowed: title, due, notes"}},
		{"wrong case field", "create_task", `{"Title":"a"}`, "", []string{`"Title"`}},
		{"empty title", "create_task", `{"title":""}`, "title", []string{"title: must not be empty"}},
		{"blank title", "create_task", `{"title":"   "}`, "title", []string{"must not be empty"}},
		{"long title", "create_task", `{"title":"` + strings.Repeat("é", 201) + `"}`, "title", []string{"too long (201 characters, at most 200)"}},
		{"long notes", "create_task", `{"title":"a","notes":"` + strings.Repeat("x", 2001) + `"}`, "notes", []string{"too long"}},
		{"bad due", "create_task", `{"title":"a","due":"tomorrow"}`, "due", []string{`"tomorrow" is not a date`, "YYYY-MM-DD"}},
		{"bad uuid", "complete_task", `{"task_id":"42"}`, "task_id", []string{`"42" is not a valid id`}},
		{"bad fact uuid", "forget", `{"fact_id":"not-a-uuid"}`, "fact_id", []string{"not a valid id"}},
		{"bad timezone", "get_current_time", `{"timezone":"Mars/Olympus"}`, "timezone", []string{`unknown time zone "Mars/Olympus"`}},
		{"local timezone", "get_current_time", `{"timezone":"Local"}`, "timezone", []string{"not allowed"}},
		{"bad status", "list_tasks", `{"status":"pending"}`, "", []string{"status: must be one of [open done all], not pending"}},
		{"bad kind", "remember", `{"content":"x","kind":"rumour"}`, "", []string{"kind: must be one of [fact person project preference decision]"}},
		{"empty message", "notify", `{"message":" "}`, "message", []string{"must not be empty"}},
		{"long message", "notify", `{"message":"` + strings.Repeat("x", 2001) + `"}`, "message", []string{"too long"}},
		{"empty query", "search_memory", `{"query":""}`, "query", []string{"must not be empty"}},
		{"empty content", "remember", `{"content":""}`, "content", []string{"must not be empty"}},
		{"too large", "notify", `{"message":"` + strings.Repeat("x", tools.MaxArgsBytes) + `"}`, "", []string{"too large"}},
	}
	reg := toolstest.Registry()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, data := toolstest.Env()
			err := reg.Validate(tc.tool, json.RawMessage(tc.args))
			ae, ok := errors.AsType[*tools.ArgError](err)
			if !ok {
				t.Fatalf("Validate(%s, %s) = %v, want *ArgError", tc.tool, tc.args, err)
			}
			if ae.Field != tc.field {
				t.Errorf("Field = %q, want %q", ae.Field, tc.field)
			}
			msg := ae.Error()
			if !strings.HasPrefix(msg, "invalid arguments for "+tc.tool+": ") {
				t.Errorf("message %q lacks the tool prefix", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
			// Run rejects the same arguments the same way, without touching data.
			runErr := toolstest.RunArgErr(t, env, tc.tool, tc.args)
			if runErr.Error() != msg {
				t.Errorf("Run message %q != Validate message %q", runErr.Error(), msg)
			}
			if len(data.Tasks)+len(data.Facts)+len(data.Notifications) != 0 {
				t.Error("invalid arguments changed data")
			}
		})
	}
}

func TestValidationAcceptsGoodArguments(t *testing.T) {
	t.Parallel()
	tests := []struct{ tool, args string }{
		{"get_current_time", ``},
		{"get_current_time", `null`},
		{"get_current_time", `{}`},
		{"get_current_time", ` {"timezone":"Europe/Paris"} `},
		{"calculate", `{"expression":"1+1"}`},
		{"create_task", `{"title":"Buy milk"}`},
		{"create_task", `{"title":"Buy milk","due":"2025-03-02","notes":"2%"}`},
		{"create_task", `{"title":"Call","due":"2025-03-02T10:00:00+01:00"}`},
		{"complete_task", `{"task_id":"123e4567-e89b-12d3-a456-426614174000"}`},
		{"list_tasks", `{"status":"all"}`},
		{"remember", `{"content":"Likes tea","kind":"preference","subject":"Ann"}`},
		{"search_memory", `{"query":"tea"}`},
		{"forget", `{"fact_id":"123e4567-e89b-12d3-a456-426614174000"}`},
		{"notify", `{"message":"hi","title":"t"}`},
	}
	reg := toolstest.Registry()
	for _, tc := range tests {
		if err := reg.Validate(tc.tool, json.RawMessage(tc.args)); err != nil {
			t.Errorf("Validate(%s, %s) = %v", tc.tool, tc.args, err)
		}
	}
}

func TestUnknownTool(t *testing.T) {
	t.Parallel()
	reg := toolstest.Registry()
	env, _ := toolstest.Env()
	_, err := reg.Run(context.Background(), env, "delete_everything", json.RawMessage(`{}`))
	if !errors.Is(err, tools.ErrUnknownTool) {
		t.Fatalf("Run(unknown) = %v, want ErrUnknownTool", err)
	}
	if !strings.Contains(err.Error(), `"delete_everything"`) || !strings.Contains(err.Error(), "create_task") {
		t.Errorf("message %q should name the tool and list the available ones", err)
	}
	if err := reg.Validate("nope", nil); !errors.Is(err, tools.ErrUnknownTool) {
		t.Errorf("Validate(unknown) = %v, want ErrUnknownTool", err)
	}
}

// FuzzArgs checks that no argument bytes make a tool panic, and that anything other than
// success is an *ArgError for a read tool without data.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{`{}`, `{"title":"x"}`, `{"expression":"1+2"}`, `[`, `{"timezone":"UTC"}`, `{"a":{"b":[1,2,{"c":null}]}}`} {
		f.Add("calculate", s)
		f.Add("create_task", s)
	}
	reg := toolstest.Registry()
	f.Fuzz(func(t *testing.T, name, args string) {
		env, _ := toolstest.Env()
		_, _ = reg.Run(context.Background(), env, name, json.RawMessage(args))
		_ = reg.Validate(name, json.RawMessage(args))
	})
}
