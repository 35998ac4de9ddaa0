package agent_test

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestUnstorableArgumentsAreAToolError: a model (or a page steering it) that puts a NUL
// (\u0000), an unpaired surrogate escape or bytes that are not UTF-8 in a tool call's
// arguments gets a tool error it can read and correct; the turn goes on and completes, the
// call it made in the same batch with good arguments runs, the conversation can be read and
// continued, and nothing is logged as an error (it is the model's mistake, not Steward's).
func TestUnstorableArgumentsAreAToolError(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ args, want string }{
		"NUL in a write's argument": {`{"title":"milk\u0000"}`, "argument title contains a NUL byte"},
		"NUL in a read's argument":  {`{"key":"\u0000a"}`, "argument key contains a NUL byte"},
		"NUL in an argument's name": {`{"title":"milk","x\u0000":1}`, "NUL byte"},
		"lone surrogate":            {`{"title":"milk\ud800"}`, "argument title"},
		"bytes that are not UTF-8":  {"{\"title\":\"milk\xff\xfe\"}", "argument title is not valid UTF-8"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tool := "create_task"
			if strings.Contains(tc.args, `"key"`) {
				tool = "lookup"
			}
			var told []steward.ToolResult
			m := scripted.New(
				scripted.Reply(scripted.Calls(scripted.Call("bad", tool, tc.args), scripted.Call("good", "lookup", `{"key":"a"}`))),
				func(req llm.Request) (llm.Response, error) {
					told = resultsOf(req)
					return scripted.Text("I could not do that: my arguments were broken."), nil
				},
			)
			h := newHarness(t, m)
			logs := &testdb.Buffer{}
			ctx := zerolog.New(logs).WithContext(h.ctx)
			v, err := h.runner.Start(ctx, agent.Input{OwnerID: h.owner, Message: "add milk"}, nil)
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			if v.Status != steward.StatusCompleted || v.Answer != "I could not do that: my arguments were broken." {
				t.Fatalf("turn = %s (%q), want completed with the model's answer", v.Status, v.Error)
			}
			if len(told) != 2 || !told[0].IsError || !strings.Contains(outputString(told[0]), tc.want) {
				t.Fatalf("the model was told %+v, want an error result saying %q", told, tc.want)
			}
			if told[1].IsError || !strings.Contains(outputString(told[1]), "v-a") {
				t.Fatalf("the good call's result = %s", told[1].Output)
			}
			if n := len(h.tasks()); n != 0 {
				t.Fatalf("%d tasks created from broken arguments", n)
			}
			if got := logs.String(); strings.Contains(got, `"level":"error"`) {
				t.Fatalf("an error was logged for the model's mistake: %s", got)
			}
			// The conversation holds the turn: the next one starts from it.
			h.runner.Model = scripted.New(scripted.Reply(scripted.Text("ok")))
			v2, err := h.runner.Start(h.ctx, agent.Input{OwnerID: h.owner, ConversationID: &v.ConversationID, Message: "fine"}, nil)
			if err != nil || v2.Status != steward.StatusCompleted {
				t.Fatalf("next turn: %+v, %v", v2, err)
			}
		})
	}
}
