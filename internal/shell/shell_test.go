package shell_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/shell"
)

// sandbox is a Sandbox under a test directory; bubblewrap is a dependency of the tests (.ci/run
// installs it).
func sandbox(t *testing.T) *shell.Sandbox {
	t.Helper()
	// Under /tmp, not t.TempDir: run as root, commands run as nobody, who must reach it.
	root, err := os.MkdirTemp("", "steward-shell-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &shell.Sandbox{Root: root, Timeout: 3 * time.Second}
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("the sandbox is not available: %v", err)
	}
	return s
}

// TestRunCommandWorks: a command runs in the owner's workspace, writes a file there that the
// next command reads, and python3 runs where installed.
func TestRunCommandWorks(t *testing.T) {
	t.Parallel()
	s, owner := sandbox(t), uuid.New()
	res, err := s.Run(context.Background(), owner, "pwd; echo 42 > answer.txt; python3 -c 'print(6*7)'")
	if err != nil || res.ExitCode != 0 || res.Output != "/work\n42\n" {
		t.Fatalf("got %+v %v", res, err)
	}
	if res, _ := s.Run(context.Background(), owner, "cat answer.txt"); res.Output != "42\n" {
		t.Fatalf("the workspace did not keep the file: %+v", res)
	}
}

// TestRunCommandAttacks: each attack is refused or killed within its limit.
func TestRunCommandAttacks(t *testing.T) {
	s := sandbox(t)
	alice, bob := uuid.New(), uuid.New()
	bobWS, _ := s.Workspace(bob)
	if err := os.WriteFile(filepath.Join(bobWS, "secret.txt"), []byte("bob's secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STEWARD_TEST_SECRET", "hunter2") // in Steward's environment; never the command's
	cases := []struct {
		name, command string
		ok            func(shell.Result) bool
	}{
		{"read /etc/shadow", "cat /etc/shadow", func(r shell.Result) bool { return r.ExitCode != 0 && strings.Contains(r.Output, "No such file") }},
		{"Steward's environment", "env; cat /proc/1/environ", func(r shell.Result) bool {
			return !strings.Contains(r.Output, "hunter2") && !strings.Contains(r.Output, "DATABASE_URL")
		}},
		{"the database socket", "ls /var/run/postgresql /tmp/.s.PGSQL.5432 2>&1; ls /tmp", func(r shell.Result) bool {
			return !strings.Contains(r.Output, "PGSQL") || strings.Contains(r.Output, "No such file")
		}},
		{"another owner's workspace", "cat ../" + bob.String() + "/secret.txt; find / -xdev -name secret.txt 2>/dev/null | wc -l", func(r shell.Result) bool {
			return !strings.Contains(r.Output, "bob's secret") && strings.HasSuffix(r.Output, "0\n")
		}},
		{"write outside the workspace", "echo x > /usr/pwned; echo x > /pwned; echo x > /proc/pwned", func(r shell.Result) bool {
			return strings.Count(r.Output, "Read-only file system") == 2 && strings.Contains(r.Output, "/proc/pwned")
		}},
		{"open a socket", "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), 2)'", func(r shell.Result) bool { return r.ExitCode != 0 && strings.Contains(r.Output, "unreachable") }},
		{"fork bomb", "f() { f | f & }; f; sleep 1; echo survived", func(r shell.Result) bool { return strings.Contains(r.Output, "Cannot fork") }},
		{"sleep 1000", "sleep 1000 & sleep 1000", func(r shell.Result) bool { return r.TimedOut }},
		{"a 1 GB file", "head -c 1073741824 /dev/zero > big; ls -l big", func(r shell.Result) bool { return r.ExitCode != 0 || !strings.Contains(r.Output, "1073741824") }},
		{"1 MB of output", "head -c 1048576 /dev/zero | tr '\\0' x", func(r shell.Result) bool { return r.Truncated && len(r.Output) <= shell.MaxOutput }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			res, err := s.Run(context.Background(), alice, c.command)
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if !c.ok(res) {
				t.Errorf("%s: exit %d timed out %v:\n%s", c.name, res.ExitCode, res.TimedOut, res.Output)
			}
			if took > s.Timeout+10*time.Second {
				t.Errorf("took %v", took)
			}
			out := res.Output
			if len(out) > 160 {
				out = out[:160] + "…"
			}
			t.Logf("%s: exit %d, timed out %v, %v: %q", c.name, res.ExitCode, res.TimedOut, took.Round(time.Millisecond), out)
		})
	}
	// Nothing outlives its sandbox: within a few seconds no process names these workspaces.
	var left []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if left, _ = exec.Command("pgrep", "-a", "-f", s.Root).Output(); len(left) == 0 {
			return
		}
	}
	t.Errorf("processes outlived their sandbox:\n%s", left)
}
