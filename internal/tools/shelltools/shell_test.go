package shelltools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/shell"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/shelltools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// sandbox is the real bubblewrap sandbox under a test directory (bubblewrap is a dependency
// of the tests, as internal/shell's).
func sandbox(t *testing.T) *shell.Sandbox {
	t.Helper()
	// Under /tmp, not t.TempDir: run as root, commands run as nobody, who must reach it.
	root, err := os.MkdirTemp("", "steward-shelltools-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &shell.Sandbox{Root: root, Timeout: 5 * time.Second}
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("the sandbox is not available: %v", err)
	}
	return s
}

func registry(t *testing.T, r shelltools.Runner, rules bool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(shelltools.Tools(r, rules)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func run(t *testing.T, reg *tools.Registry, owner uuid.UUID, command string) (shell.Result, json.RawMessage, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"command": command})
	out, err := reg.Run(context.Background(), tools.Env{OwnerID: owner}, "run_command", args)
	var res shell.Result
	if err == nil {
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("output %s: %v", out, err)
		}
	}
	return res, out, err
}

// TestRunCommandIsWhatItDeclares: run_command is a write whose effect leaves Postgres and
// whose output is whatever the command printed (untrusted). By default only the owner's yes
// runs it — no standing rule, no auto mode; with STEWARD_SHELL_RULES=on a standing rule may.
func TestRunCommandIsWhatItDeclares(t *testing.T) {
	for rules, want := range map[bool]string{
		false: "write external only-owner-yes untrusted",
		true:  "write external rules-may-allow untrusted",
	} {
		tool, ok := registry(t, nil, rules).Get("run_command")
		if !ok {
			t.Fatal("no run_command")
		}
		if got := toolstest.Policy(tool); got != want {
			t.Errorf("rules %v: run_command declares %q; want %q", rules, got, want)
		}
		if tool.AlwaysOffered() != rules {
			t.Errorf("rules %v: an \"always\" rule offered = %v", rules, tool.AlwaysOffered())
		}
		if tool.Kind != steward.KindWrite {
			t.Errorf("run_command is a %s: a read would run unasked", tool.Kind)
		}
	}
}

// TestRunCommandRunsInTheOwnersWorkspace: a command runs in the owner's workspace, which
// keeps its files for the owner's next command and shows none of them to another owner; a
// failing command is a result with its exit code, worded for the owner.
func TestRunCommandRunsInTheOwnersWorkspace(t *testing.T) {
	t.Parallel()
	reg := registry(t, sandbox(t), false)
	alice, bob := uuid.New(), uuid.New()
	res, _, err := run(t, reg, alice, "echo 'groceries: 12.50' > notes.txt; pwd")
	if err != nil || res.ExitCode != 0 || res.Output != "/work\n" {
		t.Fatalf("first command = %+v, %v; want it run in /work", res, err)
	}
	if res, _, err = run(t, reg, alice, "cat notes.txt"); err != nil || res.Output != "groceries: 12.50\n" {
		t.Errorf("alice's next command = %+v, %v; want her file", res, err)
	}
	if res, _, err = run(t, reg, bob, "cat notes.txt"); err != nil || res.ExitCode == 0 || strings.Contains(res.Output, "groceries") {
		t.Errorf("bob's command = %+v, %v; want alice's file out of his reach", res, err)
	}
	res, out, err := run(t, reg, alice, "echo failing >&2; exit 3")
	if err != nil || res.ExitCode != 3 || !strings.Contains(res.Output, "failing") {
		t.Errorf("a failing command = %+v, %v; want exit 3 with its output", res, err)
	}
	if got := reg.SayResult("run_command", nil, out, false); got != "It failed (exit 3)" {
		t.Errorf("its result reads %q", got)
	}
}

// TestRunCommandRefusesBadArguments: an empty, NUL-bearing or over-long command line is an
// *ArgError the model can correct, and no sandbox runs it; without a sandbox the tool says
// so.
func TestRunCommandRefusesBadArguments(t *testing.T) {
	reg := registry(t, nil, false) // no sandbox: nothing may reach it
	for _, c := range []struct{ args, field, says string }{
		{`{"command":"   "}`, "command", "must not be empty"},
		{`{"command":"ls\u0000rm"}`, "", "NUL"}, // refused before decoding (tools.CheckStorable)
		{`{"command":"` + strings.Repeat("x", 8<<10+1) + `"}`, "command", "too long"},
		{`{"command":"ls","cwd":"/"}`, "", "cwd"},
		{`{}`, "", "command"},
	} {
		_, err := reg.Run(context.Background(), tools.Env{OwnerID: uuid.New()}, "run_command", json.RawMessage(c.args))
		ae, ok := errors.AsType[*tools.ArgError](err)
		if !ok {
			t.Errorf("run_command(%.60s) = %v; want an *ArgError", c.args, err)
			continue
		}
		if ae.Field != c.field || !strings.Contains(ae.Error(), c.says) {
			t.Errorf("run_command(%.60s) = %q (field %q); want field %q and %q", c.args, ae, ae.Field, c.field, c.says)
		}
	}
	if _, err := reg.Run(context.Background(), tools.Env{OwnerID: uuid.New()}, "run_command", json.RawMessage(`{"command":"ls"}`)); err == nil ||
		!strings.Contains(err.Error(), "no sandbox") {
		t.Errorf("run_command without a sandbox = %v; want an error saying so", err)
	}
}
