package tools

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/steward"
)

// A tool's one-line summaries are what a person reads of its calls (docs/ARCHITECTURE.md §1,
// the web app's chips, approval cards and stories): a call ("Create task “buy milk”", "Spend
// €12.50 at Luna") and its result ("Found 3 tasks"). Each tool writes its own next to its
// definition (Say); a tool without one — an owner's MCP tool — is worded generically
// ("Call server.tool"). Summaries are plain text: values from a call or a result are cut
// short, on one line, and their invisible characters shown (steward.Visible); whoever
// renders one escapes it like any text.

// summary is a tool's pair of wordings over raw JSON; ok false means the JSON could not be
// read and the generic wording applies.
type summary struct {
	call   func(args json.RawMessage) (string, bool)
	result func(args, output json.RawMessage) (string, bool)
}

// Say returns t with its one-line summaries: call words a call from its arguments
// (decoded as A, without validation: an invalid call is worded too), result words what came
// back from the arguments and the output (decoded as O: best a struct of the few fields the
// words need, so that nothing else in the output can make it unreadable). Quote, Clip, Money,
// Count, Day and Site word values.
func Say[A, O any](t Tool, call func(A) string, result func(A, O) string) Tool {
	args := func(raw json.RawMessage) (A, bool) {
		var a A
		if len(raw) == 0 {
			raw = json.RawMessage(`{}`)
		}
		return a, json.Unmarshal(raw, &a) == nil
	}
	t.summary = &summary{
		call: func(raw json.RawMessage) (string, bool) {
			a, ok := args(raw)
			if !ok {
				return "", false
			}
			return call(a), true
		},
		result: func(raw, out json.RawMessage) (string, bool) {
			a, ok := args(raw)
			var o O
			if !ok || json.Unmarshal(out, &o) != nil {
				return "", false
			}
			return result(a, o), true
		},
	}
	return t
}

// Summarized reports whether the tool words its calls itself (Say).
func (t Tool) Summarized() bool { return t.summary != nil }

// MCPPrefix starts the model's name of an owner's MCP tool: mcp_<server>_<tool>, the server's
// name without an underscore (internal/mcpclient).
const MCPPrefix = "mcp_"

// GenericCall words a call of a tool that has no summary: "Call server.tool" for an MCP tool,
// else "Call name".
func GenericCall(name string) string {
	if rest, ok := strings.CutPrefix(name, MCPPrefix); ok {
		if server, tool, ok := strings.Cut(rest, "_"); ok && server != "" && tool != "" {
			return line("Call " + server + "." + tool)
		}
	}
	return line("Call " + name)
}

// SayCall is the one-line summary of a call of name with args: the tool's own, or the generic
// one for a tool the registry does not hold (r may be nil) or arguments it cannot read.
func (r *Registry) SayCall(name string, args json.RawMessage) string {
	if t, ok := r.get(name); ok && t.summary != nil {
		if s, ok := t.summary.call(args); ok && strings.TrimSpace(s) != "" {
			return line(s)
		}
	}
	return GenericCall(name)
}

// SayResult is the one-line summary of a call's result: for an error, "Failed: " and what
// it said (a refused write: "Not done"); else the tool's own wording, or "Done".
func (r *Registry) SayResult(name string, args, output json.RawMessage, isError bool) string {
	if isError {
		return line(failure(output))
	}
	if t, ok := r.get(name); ok && t.summary != nil {
		if s, ok := t.summary.result(args, output); ok && strings.TrimSpace(s) != "" {
			return line(s)
		}
	}
	return "Done"
}

// get is Get on a registry that may be nil.
func (r *Registry) get(name string) (Tool, bool) {
	if r == nil {
		return Tool{}, false
	}
	return r.Get(name)
}

// failure words an error result: a JSON string (the loop's error results), or a refusal
// ({"status":"not done","message":...}), or anything else as "Failed".
func failure(output json.RawMessage) string {
	var msg string
	if json.Unmarshal(output, &msg) == nil && msg != "" {
		return "Failed: " + Clip(msg, 80)
	}
	var refused struct {
		Status  string `json:"status"`
		By      string `json:"refused_by"`
		Message string `json:"message"`
	}
	if json.Unmarshal(output, &refused) == nil && refused.Status == "not done" {
		s := "Not done"
		if refused.Message != "" {
			s += ": " + Clip(refused.Message, 80)
		}
		return s
	}
	return "Failed"
}

// maxLine bounds a whole summary, in characters (before invisible characters are shown).
const maxLine = 140

// line makes s one line: line breaks and tabs become spaces, it is cut at maxLine
// characters and its invisible characters are shown.
func line(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return steward.Visible(Clip(s, maxLine))
}

// Clip cuts s to at most n characters, ending it with "…" when cut.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}

// Quote is a value from a call or a result inside quotation marks, cut at 60 characters.
func Quote(s string) string {
	return "“" + Clip(strings.TrimSpace(s), 60) + "”"
}

// symbols are the currency signs a summary writes before an amount; other currencies follow
// it ("12.50 CHF").
var symbols = map[string]string{"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "INR": "₹"}

// Money is an amount in minor units as a person reads it: "€12.50", "-£3.00", "12.50 CHF".
func Money(minor int64, currency string) string {
	s := steward.FormatMoney(minor, currency)
	sym, ok := symbols[currency]
	if !ok {
		return s
	}
	num := strings.TrimSuffix(s, " "+currency)
	if n, neg := strings.CutPrefix(num, "-"); neg {
		return "-" + sym + n
	}
	return sym + num
}

// Count words n things: "1 task", "3 tasks", "no tasks" (plural: the word with an s unless
// given).
func Count(n int, one string, many ...string) string {
	word := one + "s"
	if len(many) > 0 {
		word = many[0]
	}
	switch n {
	case 0:
		return "no " + word
	case 1:
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + word
}

// Site is a URL as a summary shows it: without its scheme and a trailing slash
// ("example.com/changelog"), cut at 60 characters.
func Site(u string) string {
	u = strings.TrimSpace(u)
	for _, p := range []string{"https://", "http://"} {
		if strings.HasPrefix(strings.ToLower(u), p) {
			u = u[len(p):]
			break
		}
	}
	return Clip(strings.TrimSuffix(u, "/"), 60)
}

// Day is a date argument as a person reads it: "2025-03-01" becomes "1 Mar 2025", an RFC 3339
// time "1 Mar 2025 09:00 +0100" (its own zone); anything else is cut at 30 characters.
func Day(s string) string {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.Format("2 Jan 2006")
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.Format("2 Jan 2006 15:04 MST")
	}
	return Clip(s, 30)
}

// Span words a range of days: "from 1 Mar 2025 to 31 Mar 2025", "from 1 Mar 2025", "" for none.
func Span(from, to string) string {
	var s string
	if strings.TrimSpace(from) != "" {
		s += " from " + Day(from)
	}
	if strings.TrimSpace(to) != "" {
		s += " to " + Day(to)
	}
	return s
}
