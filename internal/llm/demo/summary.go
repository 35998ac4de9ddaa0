package demo

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
)

// summarise answers a batch of tool results in plain text, one line per result, using the
// arguments of the calls they answer (found in msgs) where the output does not repeat them.
func summarise(results []steward.ToolResult, msgs []steward.Message) string {
	if answer, ok := spendAnswer(results, msgs); ok {
		return answer
	}
	lines := make([]string, 0, len(results))
	for _, r := range results {
		out := decode(r.Output)
		args, _ := decode(findArgs(msgs, r.CallID)).(map[string]any)
		lines = append(lines, summariseOne(r, out, args))
	}
	return strings.Join(lines, "\n")
}

func summariseOne(r steward.ToolResult, out any, args map[string]any) string {
	// value reads an argument the output echoes, else the call's own.
	value := func(key string) string {
		if v := stringField(out, key); v != "" {
			return v
		}
		return stringField(args, key)
	}
	if r.IsError {
		return fmt.Sprintf("I did not %s: %s.", action(r.Name, value), why(out))
	}
	if answer, ok := tradingAnswer(r.Name, out); ok {
		return answer
	}
	if answer, ok := reminderAnswer(r.Name, out, value); ok {
		return answer
	}
	switch r.Name {
	case "create_task":
		return fmt.Sprintf("Done — I added the task “%s”.", value("title"))
	case "remember":
		return fmt.Sprintf("Done — I will remember that %s.", value("content"))
	case "list_tasks":
		return taskList(out)
	case "search_mail":
		return mailList(out, args)
	case "notify":
		return fmt.Sprintf("Sent the notification “%s”.", value("title"))
	case "list_events":
		return eventList(out, args)
	case "send_mail":
		if sent, ok := field(out, "sent").(map[string]any); ok {
			to, _ := sent["to"].([]any)
			return fmt.Sprintf("Sent “%s” to %s.", stringField(sent, "subject"), joinAny(to))
		}
	case "run_code":
		return computeAnswer(out)
	case "get_current_time":
		for _, key := range []string{"time", "now", "current_time", "datetime", "local_time"} {
			if v := stringField(out, key); v != "" {
				return fmt.Sprintf("It is %s.", v)
			}
		}
		if s, ok := out.(string); ok {
			return fmt.Sprintf("It is %s.", s)
		}
	}
	return fmt.Sprintf("%s returned %s.", r.Name, render(out))
}

// action names what a call would have done, for a result saying it was not done.
func action(tool string, value func(string) string) string {
	switch {
	case tool == "create_task" && value("title") != "":
		return fmt.Sprintf("add the task “%s”", value("title"))
	case tool == "remember" && value("content") != "":
		return fmt.Sprintf("remember that %s", value("content"))
	case tool == "create_reminder" && value("text") != "":
		return fmt.Sprintf("set the reminder “%s”", value("text"))
	case tool == "create_automation" && value("instruction") != "":
		return fmt.Sprintf("create the automation “%s”", value("instruction"))
	case tool == "send_mail" && value("subject") != "":
		return fmt.Sprintf("send “%s”", value("subject"))
	case tool == "place_order" && value("symbol") != "":
		return fmt.Sprintf("place the order to %s %s", value("side"), value("symbol"))
	default:
		return "run " + tool
	}
}

// why says why a call was not done: the owner declined it (with their reason, if any),
// something else refused it (who, and why), or the tool's error message, quoted.
func why(out any) string {
	by, reason := stringField(out, "refused_by"), stringField(out, "message")
	switch {
	case by == "the owner" && reason == "":
		return "you declined it"
	case by == "the owner":
		return fmt.Sprintf("you declined it (“%s”)", reason)
	case by != "" && reason != "":
		return fmt.Sprintf("“%s: %s”", by, reason)
	case by != "":
		return fmt.Sprintf("“%s”", by)
	}
	return fmt.Sprintf("“%s”", errorMessage(out))
}

// errorMessage finds the message of an error output: a string, or an object's "error",
// "message" or "reason" (looked up inside a nested object too), else the output rendered.
func errorMessage(out any) string {
	if s, ok := out.(string); ok {
		return s
	}
	for _, key := range []string{"error", "message", "reason"} {
		if v := stringField(out, key); v != "" {
			return v
		}
		if obj, ok := field(out, key).(map[string]any); ok {
			return errorMessage(obj)
		}
	}
	return render(out)
}

// taskList renders list_tasks output: a list of tasks, or an object holding one.
func taskList(out any) string {
	items, ok := out.([]any)
	if !ok {
		items, ok = field(out, "tasks").([]any)
	}
	if !ok {
		return "list_tasks returned " + render(out) + "."
	}
	if len(items) == 0 {
		return "You have no tasks."
	}
	var b strings.Builder
	b.WriteString("Your tasks:")
	for _, it := range items {
		title := stringField(it, "title")
		if s, ok := it.(string); ok {
			title = s
		}
		if title == "" {
			title = render(it)
		}
		b.WriteString("\n- " + title)
	}
	return b.String()
}

// joinAny joins a JSON list's strings with commas.
func joinAny(list []any) string {
	parts := make([]string, 0, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// render shows a JSON value briefly: an object as its scalar fields in key order, a list by
// its length, a scalar as itself.
func render(v any) string {
	switch v := v.(type) {
	case nil:
		return "nothing"
	case string:
		return v
	case []any:
		return fmt.Sprintf("%d items", len(v))
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var fields []string
		for _, k := range keys {
			switch fv := v[k].(type) {
			case map[string]any, []any:
			default:
				fields = append(fields, fmt.Sprintf("%s: %v", k, fv))
			}
		}
		if len(fields) == 0 {
			return "no details"
		}
		return strings.Join(fields, ", ")
	default:
		return fmt.Sprint(v)
	}
}

func field(v any, key string) any {
	obj, _ := v.(map[string]any)
	return obj[key]
}

func stringField(v any, key string) string {
	s, _ := field(v, key).(string)
	return s
}

// decode parses JSON leniently: invalid or empty JSON is nil.
func decode(raw json.RawMessage) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	// Tool results reach the model inside a data block: <data source="…">\n…\n</data>.
	if s, ok := v.(string); ok && strings.HasPrefix(s, "<data ") && strings.HasSuffix(s, "\n</data>") {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			return decode(json.RawMessage(s[i+1 : len(s)-len("\n</data>")]))
		}
	}
	return v
}

// findArgs returns the arguments of the call with id callID.
func findArgs(msgs []steward.Message, callID string) json.RawMessage {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.ToolCall != nil && p.ToolCall.ID == callID {
				return p.ToolCall.Args
			}
		}
	}
	return nil
}
