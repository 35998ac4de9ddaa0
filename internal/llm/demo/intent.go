package demo

import (
	"encoding/json"
	"strings"
	"time"
)

// helpText is the reply to anything the demo does not understand.
const helpText = "I am the offline demo model (no GEMINI_API_KEY is set), so I only understand a few phrasings: " +
	"“remind me at 17:00 to …”, “remind me in 20 minutes to …”, “every weekday at 7:30 tell me …”, “list my reminders”, “remind me to …” (a task), “add a task …”, “remember that …”, “what time is it”, “list my tasks”, " +
	"“how much did I spend on … [this month | last month | this year | in March]”, “any new mail”, " +
	"“what's on my calendar today”, “send … to someone@example.com”, " +
	"“use the meeting notes skill on this: …”, “find a skill for …”, " +
	"“calculate 12*(3+4)”, “compute the average of 3, 5 and 10”, “compute my average monthly spending on groceries” " +
	"and, with trading on, “show my portfolio”, “quote AAPL” and “buy 5 shares of AAPL”. " +
	"Set GEMINI_API_KEY to talk to Gemini."

// intent is a recognised request: the tool to call and its arguments, called once per
// element of args (the spending question asks by category and by merchant at once).
type intent struct {
	tool string
	args []json.RawMessage
}

// argPrefixes map a phrase that starts a request to the tool it calls and the argument the
// rest of the message (after a space or a colon) fills.
var argPrefixes = []struct {
	prefix, tool, arg string
}{
	{"remind me to", "create_task", "title"},
	{"add a task", "create_task", "title"},
	{"add task", "create_task", "title"},
	{"remember that", "remember", "content"},
}

// questions map whole messages (lower case, without end punctuation) to argument-free tools.
var questions = map[string]string{
	"what time is it":          "get_current_time",
	"what time is it now":      "get_current_time",
	"what's the time":          "get_current_time",
	"whats the time":           "get_current_time",
	"what is the time":         "get_current_time",
	"what's the time now":      "get_current_time",
	"what is the current time": "get_current_time",
	"what's the current time":  "get_current_time",
	"current time":             "get_current_time",
	"tell me the time":         "get_current_time",
	"time":                     "get_current_time",
	"list my tasks":            "list_tasks",
	"list tasks":               "list_tasks",
	"what are my tasks":        "list_tasks",
	"show my tasks":            "list_tasks",
	"show me my tasks":         "list_tasks",
}

// parse recognises one of the demo's phrasings, case-insensitively; now dates a spending
// question's period.
func parse(msg string, now time.Time) (intent, bool) {
	s := clean(msg)
	if q, ok := parseSpend(s); ok {
		from, to := q.dates(now)
		var args []json.RawMessage
		for _, by := range []string{"category", "merchant"} {
			a, _ := json.Marshal(map[string]string{"from": from, "to": to, "by": by}) // a string map always marshals
			args = append(args, a)
		}
		return intent{tool: "ledger_report", args: args}, true
	}
	if in, ok := parseReminder(s); ok {
		return in, true
	}
	if in, ok := parseMail(s); ok {
		return in, true
	}
	if in, ok := parseTrading(s); ok {
		return in, true
	}
	if args, ok := parseCompute(s); ok {
		return intent{tool: "run_code", args: []json.RawMessage{args}}, true
	}
	for _, ap := range argPrefixes {
		if !hasPrefixFold(s, ap.prefix) {
			continue
		}
		rest := s[len(ap.prefix):]
		if rest != "" && rest[0] != ' ' && rest[0] != ':' {
			continue
		}
		value := strings.Trim(rest, `:"'“”‘’ `)
		if value == "" {
			return intent{}, false
		}
		args, _ := json.Marshal(map[string]string{ap.arg: value}) // a string map always marshals
		return intent{tool: ap.tool, args: []json.RawMessage{args}}, true
	}
	key := strings.ToLower(strings.ReplaceAll(s, "’", "'"))
	tool, ok := questions[key]
	if !ok && strings.Contains(key, "what time is it") {
		tool, ok = "get_current_time", true
	}
	if !ok {
		return intent{}, false
	}
	return intent{tool: tool, args: []json.RawMessage{json.RawMessage(`{}`)}}, true
}

// clean trims a message of spaces, end punctuation and a leading "please".
func clean(msg string) string {
	s := strings.TrimSpace(msg)
	s = strings.TrimRight(s, ".!? ")
	if p := "please "; hasPrefixFold(s, p) {
		s = strings.TrimSpace(s[len(p):])
	}
	return s
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
