package httpapi_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
)

// TestRunCommandWaitsForTheOwner: with STEWARD_SHELL=on, run_command is a write: the turn
// waits (even with a standing allow rule for it), its pending call carries the exact command line, and
// once approved the command runs in the owner's workspace and its output reaches the model.
func TestRunCommandWaitsForTheOwner(t *testing.T) {
	t.Parallel()
	root, err := os.MkdirTemp("", "steward-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	command := `echo "$((6*7))" > answer.txt && cat answer.txt && python3 -c 'print("py ok")'`
	e := newEnvConfigured(t, nil, map[string]string{"STEWARD_SHELL": "on", "STEWARD_SHELL_ROOT": root},
		scripted.Reply(scripted.Calls(scripted.Call("w1", "run_command", jsonOf(t, map[string]string{"command": command})))),
		text("Ran it."))
	// A standing allow rule for it would never lift the question: it is refused in words.
	if resp := e.do(request{method: "POST", path: "/v1/rules", key: e.key, body: `{"tool":"run_command","effect":"allow"}`}); resp.status != http.StatusUnprocessableEntity ||
		!strings.Contains(string(resp.body), "would never apply") {
		t.Fatalf("rule: %d %s; want 422, the rule would never apply", resp.status, resp.body)
	}
	v := e.chat("run the answer script")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 || !strings.Contains(string(v.Pending[0].Args), "python3 -c") {
		t.Fatalf("turn %+v; want it waiting on the exact command", v)
	}
	if resp := e.confirm(v.TurnID, approveAll(v)); resp.status != http.StatusOK {
		t.Fatalf("confirm: %d %s", resp.status, resp.body)
	}
	msgs := e.model.Requests()[1].Messages
	res := msgs[len(msgs)-1].Parts[0].ToolResult
	if res == nil || res.IsError || !strings.Contains(string(res.Output), `42`) || !strings.Contains(string(res.Output), "py ok") {
		t.Fatalf("the model got %+v", res)
	}
}

// TestRunCommandRulesWhenTheOperatorAllows: with STEWARD_SHELL_RULES=on, a standing allow
// rule lets run_command run without asking — journaled as an external write that ran once.
func TestRunCommandRulesWhenTheOperatorAllows(t *testing.T) {
	t.Parallel()
	root, err := os.MkdirTemp("", "steward-ws-") // readable by nobody, whom commands run as under root
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEnvConfigured(t, nil, map[string]string{"STEWARD_SHELL": "on", "STEWARD_SHELL_RULES": "on", "STEWARD_SHELL_ROOT": root},
		scripted.Reply(scripted.Calls(scripted.Call("w1", "run_command", `{"command":"echo ruled"}`))),
		text("Ran it."))
	if resp := e.do(request{method: "POST", path: "/v1/rules", key: e.key, body: `{"tool":"run_command","effect":"allow"}`}); resp.status != http.StatusCreated {
		t.Fatalf("rule: %d %s", resp.status, resp.body)
	}
	if v := e.chat("say ruled"); v.Status != steward.StatusCompleted {
		t.Fatalf("turn %s %q, want completed under the operator's rule", v.Status, v.Error)
	}
	msgs := e.model.Requests()[1].Messages
	if res := msgs[len(msgs)-1].Parts[0].ToolResult; res == nil || res.IsError || !strings.Contains(string(res.Output), "ruled") {
		t.Fatalf("the model got %+v", res)
	}
}

// TestRunCommandAsksInAutoMode: auto mode runs writes without asking, but not run_command:
// the turn waits for the owner's yes.
func TestRunCommandAsksInAutoMode(t *testing.T) {
	t.Parallel()
	root := filepath.Join(os.TempDir(), "steward-ws-"+uuid.NewString()) // fresh: Steward makes it
	t.Cleanup(func() { os.RemoveAll(root) })
	e := newEnvConfigured(t, nil, map[string]string{"STEWARD_SHELL": "on", "STEWARD_SHELL_ROOT": root, "STEWARD_ALLOW_AUTO_MODE": "on"},
		scripted.Reply(scripted.Calls(scripted.Call("w1", "run_command", `{"command":"echo auto > ran.txt"}`))),
		text("Ran it."))
	if resp := e.do(request{method: "POST", path: "/v1/control/mode", key: e.key, body: `{"mode":"auto"}`}); resp.status != http.StatusOK {
		t.Fatalf("mode auto: %d %s", resp.status, resp.body)
	}
	if v := e.chat("note auto"); v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
		t.Fatalf("turn %s %+v; want it waiting for the owner in auto mode", v.Status, v.Pending)
	}
}
