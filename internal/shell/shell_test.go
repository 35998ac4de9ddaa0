package shell_test

import (
	"context"
	"fmt"
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

// TestRunCommandMemoryIsBounded: /tmp, /dev/shm and /dev are small or read-only, and writing
// 1 GB to each is refused with an error naming the limit; the sandbox as a whole is bounded by
// a memory cgroup, which stops a command filling a larger /tmp before it passes its memory.
func TestRunCommandMemoryIsBounded(t *testing.T) {
	t.Parallel()
	s := sandbox(t)
	res, err := s.Run(context.Background(), uuid.New(), "df -k /tmp /dev/shm | tail -n 2 | tr -s ' ' | cut -d' ' -f2,6; "+
		"head -c 1073741824 /dev/zero > /tmp/big; head -c 1073741824 /dev/zero > /dev/shm/big; echo x > /dev/big; du -sk /tmp/big /dev/shm/big")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d /tmp\n%d /dev/shm\n", shell.DefaultTmp>>10, shell.DefaultTmp>>10)
	if !strings.HasPrefix(res.Output, want) || strings.Count(res.Output, "No space left on device") != 2 ||
		!strings.Contains(res.Output, "/dev/big: Read-only file system") || !strings.Contains(res.Output, "STEWARD_SHELL_TMP") {
		t.Errorf("got:\n%s\nwant it to start %q, two writes refused for space naming STEWARD_SHELL_TMP, /dev read-only", res.Output, want)
	}

	// /tmp larger than the sandbox's memory: the cgroup stops the command at its memory.
	big := *s
	big.Tmp, big.Memory = 1<<30, 128<<20
	if b := big.Bounds(); b.Cgroup == "" {
		t.Fatalf("no memory cgroup on this machine: %+v", b)
	}
	// 1 GB in files of 100 MB, each within the file size limit.
	res, err = big.Run(context.Background(), uuid.New(), "for i in 0 1 2 3 4 5 6 7 8 9; do head -c 104857600 /dev/zero > /tmp/big$i || break; done; echo wrote $?")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "128 MB of memory (STEWARD_SHELL_MEMORY)") {
		t.Errorf("got exit %d:\n%s\nwant it stopped naming STEWARD_SHELL_MEMORY", res.ExitCode, res.Output)
	}
	if res.PeakMemory <= 0 || res.PeakMemory > big.Memory {
		t.Errorf("the sandbox's peak memory was %d bytes; its bound is %d", res.PeakMemory, big.Memory)
	}
	t.Logf("1 GB into a 1 GB /tmp under 128 MB: exit %d, peak %d MB: %q", res.ExitCode, res.PeakMemory>>20, res.Output)
}

// TestRunCommandSeesNoOwner: the sandbox's mount table does not name the owner, and it cannot
// make a user namespace of its own.
func TestRunCommandSeesNoOwner(t *testing.T) {
	t.Parallel()
	s, owner := sandbox(t), uuid.New()
	res, err := s.Run(context.Background(), owner, "cat /proc/self/mountinfo; unshare -U true && echo nested user namespace")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Output, owner.String()) || !strings.Contains(res.Output, " /work ") {
		t.Errorf("the mount table names the owner %s (or has no /work):\n%s", owner, res.Output)
	}
	if strings.Contains(res.Output, "nested user namespace") {
		t.Errorf("a user namespace was made inside the sandbox:\n%s", res.Output)
	}
}

// TestRunCommandFreshRootAsRoot: run as root (as these tests are) with a workspace root that
// does not exist yet, the first command works: the root is made reachable by nobody.
func TestRunCommandFreshRootAsRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatal("this test must run as root, as Steward does in a container")
	}
	root := filepath.Join(os.TempDir(), "steward-fresh-"+uuid.NewString())
	t.Cleanup(func() { os.RemoveAll(root) })
	s := &shell.Sandbox{Root: root}
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("check: %v", err)
	}
	res, err := s.Run(context.Background(), uuid.New(), "echo hello > f && cat f && id -u")
	if err != nil || res.ExitCode != 0 || res.Output != "hello\n65534\n" {
		t.Fatalf("got %+v %v", res, err)
	}
}

// TestCheckRunsACommand: the check doctor runs fails when a command cannot run in a
// workspace, here because nobody cannot reach the workspace root.
func TestCheckRunsACommand(t *testing.T) {
	t.Parallel()
	parent := t.TempDir() // 0700, root's: nobody cannot pass it
	s := &shell.Sandbox{Root: filepath.Join(parent, "workspaces")}
	err := s.Check(context.Background())
	if top := filepath.Dir(parent); err == nil || !strings.Contains(err.Error(), "nobody, who cannot pass "+top) {
		t.Fatalf("check: %v; want it to fail naming %s", err, top)
	}
}

// TestRunCommandDiskQuota: once a workspace holds more than its quota, commands may read and
// delete its files but write none, and are told why; deleting brings the writes back.
func TestRunCommandDiskQuota(t *testing.T) {
	t.Parallel()
	s, owner := sandbox(t), uuid.New()
	s.Disk = 1 << 20
	steps := []struct{ command, want string }{
		{"head -c 2097152 /dev/zero > big && echo wrote", "wrote\n"},
		{"echo more > small", "files can be read and deleted, not written (STEWARD_SHELL_DISK"},
		{"wc -c < small; rm -f big small; ls", "0\n"},
		{"echo more > small && cat small", "more\n"},
	}
	for _, st := range steps {
		res, err := s.Run(context.Background(), owner, st.command)
		if err != nil || !strings.Contains(res.Output, st.want) {
			t.Fatalf("%s: got %+v %v; want %q", st.command, res, err, st.want)
		}
	}
	if res, _ := s.Run(context.Background(), owner, "ls"); strings.Contains(res.Output, "STEWARD_SHELL_DISK") {
		t.Fatalf("the quota still holds after the files were deleted: %q", res.Output)
	}
}

// TestRunCommandKeepsAnOldWorkspace: a workspace made when workspaces were named by the
// owner's id keeps its files under the hashed name.
func TestRunCommandKeepsAnOldWorkspace(t *testing.T) {
	t.Parallel()
	s, owner := sandbox(t), uuid.New()
	old := filepath.Join(s.Root, owner.String())
	if err := os.Mkdir(old, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "notes.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), owner, "cat notes.txt")
	if err != nil || res.Output != "kept\n" {
		t.Fatalf("got %+v %v", res, err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("the old directory is still there: %v", err)
	}
}
