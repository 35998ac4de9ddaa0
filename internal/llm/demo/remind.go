package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

var (
	// "remind me at 17:00 to call the school", "remind me in 20 minutes to stretch",
	// "remind me tomorrow at 9 to …"
	remindRE = regexp.MustCompile(`(?i)^remind me (?:at |on )?(.+?) to (.+)$`)
	// "every weekday at 7:30 tell me my first meeting"
	everyRE = regexp.MustCompile(`(?i)^(every .+? at \d{1,2}(?:[:.]\d{2})?(?: ?[ap]\.?m\.?)?),? (.+)$`)
)

// reminderLists are the whole messages that list reminders or automations.
var reminderLists = map[string]string{
	"list my reminders":       "list_reminders",
	"show my reminders":       "list_reminders",
	"what are my reminders":   "list_reminders",
	"list my automations":     "list_automations",
	"show my automations":     "list_automations",
	"what are my automations": "list_automations",
}

// parseReminder recognises a reminder at a time, an automation on a schedule, or a list of
// either (docs/AUTOMATIONS.md).
func parseReminder(s string) (intent, bool) {
	if tool, ok := reminderLists[strings.ToLower(s)]; ok {
		return intent{tool: tool, args: []json.RawMessage{json.RawMessage(`{}`)}}, true
	}
	if g := remindRE.FindStringSubmatch(s); g != nil && !strings.HasPrefix(strings.ToLower(g[1]), "to ") {
		a, _ := json.Marshal(map[string]string{"text": strings.TrimSpace(g[2]), "at": strings.TrimSpace(g[1])})
		return intent{tool: "create_reminder", args: []json.RawMessage{a}}, true
	}
	if g := everyRE.FindStringSubmatch(s); g != nil {
		a, _ := json.Marshal(map[string]string{"schedule": g[1], "instruction": strings.TrimSpace(g[2])})
		return intent{tool: "create_automation", args: []json.RawMessage{a}}, true
	}
	return intent{}, false
}

// reminderAnswer words the result of a reminders or automations tool.
func reminderAnswer(name string, out any, value func(string) string) (string, bool) {
	switch name {
	case "create_reminder":
		r, _ := field(out, "reminder").(map[string]any)
		return fmt.Sprintf("Done — I will remind you %s: “%s”.", stringField(r, "when"), stringField(r, "text")), true
	case "create_automation":
		a, _ := field(out, "automation").(map[string]any)
		next, _ := a["next_text"].([]any)
		s := fmt.Sprintf("Done — “%s” runs %s.", value("instruction"), value("schedule"))
		if len(next) > 0 {
			s += fmt.Sprintf(" Next: %v.", next[0])
		}
		return s, true
	case "list_reminders":
		items, _ := field(out, "reminders").([]any)
		if len(items) == 0 {
			return "You have no pending reminders.", true
		}
		var b strings.Builder
		b.WriteString("Your reminders:")
		for _, it := range items {
			b.WriteString(fmt.Sprintf("\n- %s: %s", stringField(it, "when"), stringField(it, "text")))
		}
		return b.String(), true
	case "list_automations":
		items, _ := field(out, "automations").([]any)
		if len(items) == 0 {
			return "You have no automations.", true
		}
		var b strings.Builder
		b.WriteString("Your automations:")
		for _, it := range items {
			when := stringField(it, "words")
			if when == "" {
				when = stringField(it, "cron")
			}
			b.WriteString(fmt.Sprintf("\n- %s (%s, %s)", stringField(it, "instruction"), when, stringField(it, "status")))
		}
		return b.String(), true
	}
	return "", false
}
