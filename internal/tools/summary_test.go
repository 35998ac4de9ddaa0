package tools_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/automationtools"
	"github.com/stewardhq/steward/internal/tools/builtin"
	"github.com/stewardhq/steward/internal/tools/codetools"
	"github.com/stewardhq/steward/internal/tools/doctools"
	"github.com/stewardhq/steward/internal/tools/ledgertools"
	"github.com/stewardhq/steward/internal/tools/mailtools"
	"github.com/stewardhq/steward/internal/tools/shelltools"
	"github.com/stewardhq/steward/internal/tools/skilltools"
	"github.com/stewardhq/steward/internal/tools/tradingtools"
	"github.com/stewardhq/steward/internal/tools/webtools"
)

// everyTool is every tool of every toolset: the built-ins, the ledger's, the web's, the
// documents', the skills' and trading's (their dependencies are not needed to word a call).
func everyTool() []tools.Tool {
	return slices.Concat(builtin.Tools(), ledgertools.Tools(), []tools.Tool{webtools.Fetch(nil), webtools.Search(nil)},
		doctools.Tools(nil, nil), mailtools.Tools(nil, nil), skilltools.Tools(nil), codetools.Tools(nil), shelltools.Tools(nil, false), tradingtools.Tools(nil, false), automationtools.Tools(nil))
}

// TestEveryToolHasSummary: a tool added without its one-line summaries fails here (and in
// internal/app, over the registry the app builds): each words a call and a result in its
// own words, not the generic fallback.
func TestEveryToolHasSummary(t *testing.T) {
	t.Parallel()
	r, err := tools.NewRegistry(everyTool()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range r.Names() {
		tool, _ := r.Get(name)
		if !tool.Summarized() {
			t.Errorf("%s has no summary: write its call and result wording with tools.Say next to its definition", name)
			continue
		}
		if got := r.SayCall(name, json.RawMessage(`{}`)); got == tools.GenericCall(name) || got == "" {
			t.Errorf("%s: call summary %q is the generic one: its Say does not read its arguments", name, got)
		}
		if got := r.SayResult(name, json.RawMessage(`{}`), json.RawMessage(`{}`), false); got == "" {
			t.Errorf("%s: empty result summary", name)
		}
	}
}

// TestSummaryWords: calls and results in a person's words; untrusted values cut short, on one
// line, their invisible characters shown; tools without a summary worded generically.
func TestSummaryWords(t *testing.T) {
	t.Parallel()
	r, err := tools.NewRegistry(everyTool()...)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("milk ", 40)
	for _, tc := range []struct {
		name, tool, args, out string
		isErr                 bool
		want                  string
	}{
		{"create", "create_task", `{"title":"buy milk"}`, "", false, "Create task “buy milk”"},
		{"create due", "create_task", `{"title":"buy milk","due":"2025-03-01"}`, "", false, "Create task “buy milk”, due 1 Mar 2025"},
		{"created", "create_task", `{"title":"buy milk"}`, `{"task":{"title":"buy milk"}}`, false, "Created task “buy milk”"},
		{"spend", "record_expense", `{"amount":1250,"currency":"EUR","merchant":"Luna","account":"Checking","date":"2025-03-01"}`, "", false,
			"Spend €12.50 at Luna on 1 Mar 2025 from Checking"},
		{"spend other currency", "record_expense", `{"amount":1250,"currency":"CHF","merchant":"Luna"}`, "", false, "Spend 12.50 CHF at Luna"},
		{"fetch", "web_fetch", `{"url":"https://example.com/changelog"}`, "", false, "Fetch example.com/changelog"},
		{"found", "list_tasks", `{}`, `{"tasks":[{},{},{}]}`, false, "Found 3 tasks"},
		{"found one", "list_tasks", `{}`, `{"tasks":[{}]}`, false, "Found 1 task"},
		{"found none", "list_tasks", `{}`, `{"tasks":[]}`, false, "Found no tasks"},
		{"bidi shown", "create_task", `{"title":"invoice\u202Efdp.exe"}`, "", false, "Create task “invoice⟨U+202E⟩fdp.exe”"},
		{"one line", "create_task", `{"title":"buy\nmilk"}`, "", false, "Create task “buy milk”"},
		{"long cut", "create_task", `{"title":"` + long + `"}`, "", false, "Create task “" + tools.Clip(strings.TrimSpace(long), 60) + "”"},
		{"failed", "create_task", `{"title":"x"}`, `"invalid arguments for create_task: title: too long"`, true, "Failed: invalid arguments for create_task: title: too long"},
		{"refused", "notify", `{"message":"hi"}`, `{"status":"not done","refused_by":"human","message":"not now"}`, true, "Not done: not now"},
		{"recorded", "record_expense", `{}`, `{"transaction":{"merchant":"Luna","amount_minor":-1250,"currency":"EUR"}}`, false, "Recorded €12.50 at Luna"},
		{"budget", "set_budget", `{}`, `{"budget":{"category":"Food","monthly_minor":30000,"currency":"GBP"}}`, false, "Budget “Food” set to £300.00 a month"},
		{"mcp", "mcp_github_create_issue", `{"title":"x"}`, "", false, "Call github.create_issue"},
		{"unknown", "nope", `{}`, "", false, "Call nope"},
		{"bad args", "create_task", `[1,2]`, "", false, "Call create_task"},
		{"no result words", "nope", `{}`, `{}`, false, "Done"},
		{"send", "send_mail", `{"to":["ada@example.com","bob@example.com","cy@example.com"],"subject":"Lunch","body":"x"}`, "", false,
			"Send mail to ada@example.com, bob@example.com and 1 other: “Lunch”"},
		{"reply", "send_mail", `{"to":["ada@example.com"],"reply_to_id":"INBOX:4","body":"x"}`, "", false, "Reply to ada@example.com"},
		{"sent", "send_mail", `{}`, `{"sent":{"subject":"Lunch","to":["ada@example.com"]}}`, false, "Sent “Lunch” to ada@example.com"},
		{"sent, not copied", "send_mail", `{}`, `{"sent":{"subject":"Lunch","to":["Ada <ada@example.com>"],"not_copied":"sent, but not copied to the Sent folder: x"}}`, false,
			"Sent “Lunch” to ada@example.com (“Ada”) (not copied to the Sent folder)"},
		{"searched", "search_mail", `{"query":"school"}`, `{"messages":[{},{}]}`, false, "Found 2 messages"},
		{"events", "list_events", `{}`, "", false, "List today's events"},
		{"move", "move_mail", `{"id":"INBOX:4","folder":"Archive"}`, "", false, "Move message INBOX:4 to “Archive”"},
	} {
		var got string
		if tc.out == "" {
			got = r.SayCall(tc.tool, json.RawMessage(tc.args))
		} else {
			got = r.SayResult(tc.tool, json.RawMessage(tc.args), json.RawMessage(tc.out), tc.isErr)
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	var none *tools.Registry
	if got := none.SayCall("mcp_files_read", nil); got != "Call files.read" {
		t.Errorf("nil registry: %q", got)
	}
	if got := r.SayCall("create_task", json.RawMessage(`{"title":"`+strings.Repeat("x", 300)+`"}`)); len([]rune(got)) > tools.MaxLine {
		t.Errorf("a summary is at most %d characters: %d", tools.MaxLine, len([]rune(got)))
	}
}
