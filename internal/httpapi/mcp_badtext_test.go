package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMCPUnstorableArgumentsAreAToolError: an MCP client whose tools/call arguments hold a
// NUL (\u0000), an unpaired surrogate escape or bytes that are not UTF-8 — in a read or in a
// write it proposes — gets a tool error naming the argument; nothing is stored, no turn is
// made, and nothing is logged as an error (it is the client's mistake, not Steward's).
func TestMCPUnstorableArgumentsAreAToolError(t *testing.T) {
	e := newEnv(t, nil)
	for _, c := range []struct{ tool, args, want string }{
		{"search_memory", `{"query":"tea\u0000"}`, "argument query contains a NUL byte"},
		{"create_task", `{"title":"milk\u0000"}`, "argument title contains a NUL byte"},
		{"create_task", `{"title":"milk","x\u0000":1}`, "NUL byte"},
		{"create_task", `{"title":"milk\ud800"}`, "argument title"},
		{"create_task", "{\"title\":\"milk\xff\"}", "argument title"},
		{"steward_chat", `{"message":"hi\u0000"}`, "message contains a NUL"},
	} {
		res, text := e.callTool(c.tool, json.RawMessage(c.args))
		if !res.IsError || !strings.Contains(text, c.want) {
			t.Errorf("%s %q = %q (isError %v), want a tool error saying %q", c.tool, c.args, text, res.IsError, c.want)
		}
	}
	if turns, _ := e.counts(); turns != 0 {
		t.Errorf("broken arguments made %d turns", turns)
	}
	for _, l := range e.logs.lines(t) {
		if l["level"] == "error" {
			t.Errorf("an error was logged for the client's mistake: %v", l)
		}
	}
}
