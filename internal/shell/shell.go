// Package shell runs an owner's command line under bubblewrap (docs/ARCHITECTURE.md §17):
// every namespace unshared (no network), the system's /usr read-only and nothing else of the
// host (no /etc, no home, no Steward config, keys or database socket), the owner's own
// workspace directory the only writable place besides a private /tmp, a new session, rlimits
// on CPU time, address space, processes, open files and file size, a wall-clock timeout that
// kills the whole sandbox, and the output capped. Linux with bwrap only; `steward serve`
// only, off unless STEWARD_SHELL=on.
package shell

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/childproc"
)

// The limits of one command.
const (
	// Timeout is the wall-clock time a command may take by default (Sandbox.Timeout).
	Timeout   = 30 * time.Second
	MaxOutput = 64 << 10
	CPU       = 20      // seconds
	Memory    = 1 << 30 // address space, bytes
	Processes = 64
	FileSize  = 100 << 20 // bytes, per file
	OpenFiles = 256
	// nobody is the user a command runs as when Steward runs as root: root is exempt from
	// RLIMIT_NPROC, so a fork bomb would not be bounded.
	nobody = 65534
)

// Sandbox runs commands in per-owner workspaces under Root.
type Sandbox struct {
	// Root holds one workspace directory per owner (Root/<owner id>).
	Root string
	// Bwrap is the bubblewrap binary; empty: "bwrap" on PATH.
	Bwrap string
	// Timeout is a command's wall-clock limit; zero: Timeout.
	Timeout time.Duration
}

// Result is what a command did.
type Result struct {
	ExitCode  int    `json:"exit_code"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated,omitempty"`
	TimedOut  bool   `json:"timed_out,omitempty"`
}

func (s *Sandbox) bwrap() (string, error) {
	name := s.Bwrap
	if name == "" {
		name = "bwrap"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", errors.New("bubblewrap (bwrap) is not installed: install the Debian package bubblewrap")
	}
	return path, nil
}

// Check says whether commands can run here: bwrap is installed and can make its namespaces.
func (s *Sandbox) Check(ctx context.Context) error {
	bw, err := s.bwrap()
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, bw, append(args(os.TempDir()), "/bin/true")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("bubblewrap cannot make a sandbox here (%v): %s", err, childproc.FirstLine(out))
	}
	return nil
}

// args are bubblewrap's arguments for a sandbox whose /work is workspace.
func args(workspace string) []string {
	return []string{"--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--bind", workspace, "/work", "--remount-ro", "/", "--chdir", "/work",
		"--setenv", "HOME", "/work", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8",
		"--", "/usr/bin/prlimit",
		"--cpu=" + strconv.Itoa(CPU), "--as=" + strconv.Itoa(Memory), "--nproc=" + strconv.Itoa(Processes),
		"--fsize=" + strconv.Itoa(FileSize), "--nofile=" + strconv.Itoa(OpenFiles), "--"}
}

// Workspace is the owner's workspace directory, made when missing.
func (s *Sandbox) Workspace(owner uuid.UUID) (string, error) {
	dir := filepath.Join(s.Root, owner.String())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("make the workspace: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, nobody, nobody); err != nil {
			return "", fmt.Errorf("give the workspace to nobody: %w", err)
		}
	}
	return dir, nil
}

// Run runs command with /bin/sh -c in the owner's sandbox, within the limits above.
func (s *Sandbox) Run(ctx context.Context, owner uuid.UUID, command string) (Result, error) {
	bw, err := s.bwrap()
	if err != nil {
		return Result{}, err
	}
	ws, err := s.Workspace(owner)
	if err != nil {
		return Result{}, err
	}
	timeout := cmp.Or(s.Timeout, Timeout)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, bw, append(args(ws), "/bin/sh", "-c", command)...)
	// bwrap itself gets no environment: its sandbox's pid 1 is bwrap, whose
	// /proc/1/environ the command can read.
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: nobody, Gid: nobody}
	}
	// The timeout kills bwrap's whole process group; its pid namespace dies with its init.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out := &childproc.CappedBuffer{Max: MaxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	res := Result{Output: out.Buf.String(), Truncated: out.Over, ExitCode: -1}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case rctx.Err() != nil:
		res.TimedOut = true
		res.Output += fmt.Sprintf("\n[stopped: the command ran longer than %v]", timeout)
		return res, nil
	case runErr != nil && cmd.ProcessState == nil:
		return res, fmt.Errorf("start the sandbox: %w", runErr)
	}
	return res, nil
}
