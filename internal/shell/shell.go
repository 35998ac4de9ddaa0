// Package shell runs an owner's command line under bubblewrap (docs/ARCHITECTURE.md §17):
// every namespace unshared (no network) and no user namespace within, the system's /usr
// read-only and nothing else of the host (no /etc, no home, no Steward config, keys or
// database socket), the owner's own workspace directory the only writable place besides a
// small private /tmp and /dev/shm, a new session, a memory cgroup around the whole sandbox
// where the machine has one, rlimits on CPU time, address space, processes, open files and
// file size, a quota on the workspace, a wall-clock timeout that kills the whole sandbox, and
// the output capped. Linux with bwrap only; `steward serve` only, off unless STEWARD_SHELL=on.
package shell

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/childproc"
	"github.com/stewardhq/steward/internal/steward"
)

// The limits of one command.
const (
	// Timeout is the wall-clock time a command may take by default (Sandbox.Timeout).
	Timeout   = steward.CommandTimeout
	MaxOutput = steward.CommandMaxOutput
	CPU       = 20      // seconds
	Memory    = 1 << 30 // address space of each process, bytes
	Processes = 64
	FileSize  = 100 << 20 // bytes, per file
	OpenFiles = 256
	// DefaultMemory bounds the whole sandbox's memory, its /tmp and /dev/shm included, where a
	// memory cgroup is available (Sandbox.Memory, STEWARD_SHELL_MEMORY).
	DefaultMemory = 512 << 20
	// DefaultTmp is the size of the sandbox's /tmp and of its /dev/shm, each (Sandbox.Tmp,
	// STEWARD_SHELL_TMP).
	DefaultTmp = 64 << 20
	// DefaultDisk is what a workspace may hold before its commands may write no more
	// (Sandbox.Disk, STEWARD_SHELL_DISK).
	DefaultDisk = 1 << 30
	// nobody is the user a command runs as when Steward runs as root: root is exempt from
	// RLIMIT_NPROC, so a fork bomb would not be bounded.
	nobody = 65534
)

// Sandbox runs commands in per-owner workspaces under Root.
type Sandbox struct {
	// Root holds one workspace directory per owner, named by a hash of the owner's id.
	Root string
	// Bwrap is the bubblewrap binary; empty: "bwrap" on PATH.
	Bwrap string
	// Timeout is a command's wall-clock limit; zero: Timeout.
	Timeout time.Duration
	// Memory bounds all of a command's processes and its /tmp and /dev/shm together, in
	// bytes, when a memory cgroup is available; zero: DefaultMemory.
	Memory int64
	// Tmp is the size of /tmp and of /dev/shm, each, in bytes; zero: DefaultTmp.
	Tmp int64
	// Disk is what a workspace may hold, in bytes, before its commands may only read and
	// delete; zero: DefaultDisk.
	Disk int64
	// Cgroup is where the commands' memory cgroups are made: "" or "auto" beside Steward's
	// own, "off" none, else that cgroup directory (STEWARD_SHELL_CGROUP).
	Cgroup string
}

// Result is what a command did (the leaf's, so the toolset needs no sandbox).
type Result = steward.CommandResult

// Bounds are the limits a sandbox applies on this machine, for `steward doctor`.
type Bounds struct {
	Memory, Tmp, Disk int64
	// Cgroup is the parent of the commands' memory cgroups; empty: none, for the reason in
	// NoCgroup, and only each process's address space bounds memory.
	Cgroup   string
	NoCgroup string
}

// Bounds says which bounds apply here.
func (s *Sandbox) Bounds() Bounds {
	b := Bounds{Memory: s.memory(), Tmp: cmp.Or(s.Tmp, DefaultTmp), Disk: cmp.Or(s.Disk, DefaultDisk)}
	cg, err := findCgroups(s.Cgroup)
	if err != nil {
		b.NoCgroup = err.Error()
	} else {
		b.Cgroup = cg.dir
	}
	return b
}

func (s *Sandbox) memory() int64 { return cmp.Or(s.Memory, DefaultMemory) }

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

// Check says whether commands can run here: it runs one in a workspace of its own, under
// every bound a command gets, and removes the workspace.
func (s *Sandbox) Check(ctx context.Context) error {
	if _, err := s.bwrap(); err != nil {
		return err
	}
	check := uuid.Nil
	res, err := s.Run(ctx, check, "echo sandbox works")
	if dir, werr := s.dir(check); werr == nil {
		os.RemoveAll(dir)
	}
	switch {
	case err != nil:
		return err
	case res.Output != "sandbox works\n":
		return fmt.Errorf("bubblewrap cannot make a sandbox here (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Output))
	}
	return nil
}

// args are bubblewrap's arguments for a sandbox whose /work is workspace; full: the workspace
// holds its quota, so no file may grow.
func (s *Sandbox) args(workspace string, full bool) []string {
	tmp := strconv.FormatInt(cmp.Or(s.Tmp, DefaultTmp), 10)
	fsize := FileSize
	if full {
		fsize = 0
	}
	return []string{"--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
		"--proc", "/proc", "--dev", "/dev", "--size", tmp, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
		"--size", tmp, "--tmpfs", "/tmp",
		"--bind", workspace, "/work", "--remount-ro", "/", "--chdir", "/work",
		"--setenv", "HOME", "/work", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8",
		"--", "/usr/bin/prlimit",
		"--cpu=" + strconv.Itoa(CPU), "--as=" + strconv.Itoa(Memory), "--nproc=" + strconv.Itoa(Processes),
		"--fsize=" + strconv.Itoa(fsize), "--nofile=" + strconv.Itoa(OpenFiles), "--"}
}

// dir is the owner's workspace directory: named by a hash of the owner's id, which the
// sandbox's mount table shows.
func (s *Sandbox) dir(owner uuid.UUID) (string, error) {
	if s.Root == "" {
		return "", errors.New("the sandbox has no workspace root")
	}
	sum := sha256.Sum256([]byte("steward workspace\x00" + owner.String()))
	return filepath.Join(s.Root, hex.EncodeToString(sum[:16])), nil
}

// Workspace is the owner's workspace directory, made when missing. Under root it belongs to
// nobody, and the root and its parents must let nobody pass.
func (s *Sandbox) Workspace(owner uuid.UUID) (string, error) {
	dir, err := s.dir(owner)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(s.Root, 0o711); err != nil {
		return "", fmt.Errorf("make the workspace root: %w", err)
	}
	// A workspace made before the hashed names keeps its files.
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		_ = os.Rename(filepath.Join(s.Root, owner.String()), dir)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("make the workspace: %w", err)
	}
	if os.Geteuid() != 0 {
		return dir, nil
	}
	if err := os.Chown(dir, nobody, nobody); err != nil {
		return "", fmt.Errorf("give the workspace to nobody: %w", err)
	}
	return dir, passable(s.Root)
}

// passable makes dir passable by nobody (who runs the commands when Steward is root) and
// says which of its parents is not.
func passable(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o001 == 0 {
		if err := os.Chmod(dir, fi.Mode().Perm()|0o011); err != nil {
			return fmt.Errorf("let nobody pass the workspace root: %w", err)
		}
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("commands run as nobody, who cannot pass %s: let others pass it (chmod o+x) or set STEWARD_SHELL_ROOT elsewhere", d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// usage is what dir holds, in bytes, counted up to limit+1.
func usage(dir string, limit int64) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
		}
		if n > limit {
			return fs.SkipAll
		}
		return nil
	})
	return n
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
	disk := cmp.Or(s.Disk, DefaultDisk)
	full := usage(ws, disk) > disk
	timeout := cmp.Or(s.Timeout, Timeout)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cg, cgErr := findCgroups(s.Cgroup)
	if cgErr != nil && s.Cgroup != "" && s.Cgroup != "auto" && s.Cgroup != "off" {
		return Result{}, fmt.Errorf("bound the sandbox's memory: %w", cgErr)
	}
	p, err := s.start(rctx, bw, cg, append(s.args(ws, full), "/bin/sh", "-c", command))
	if err != nil {
		return Result{}, err
	}
	runErr := p.cmd.Wait()
	res := Result{Output: p.out.Buf.String(), Truncated: p.out.Over, ExitCode: -1}
	if p.cmd.ProcessState != nil {
		res.ExitCode = p.cmd.ProcessState.ExitCode()
	}
	if p.cg != nil {
		res.PeakMemory = p.cg.peak()
		if p.cg.oomKilled() {
			res.Output += fmt.Sprintf("\n[stopped: the sandbox reached its %d MB of memory (STEWARD_SHELL_MEMORY)]", s.memory()>>20)
		}
		p.cg.remove()
	}
	s.explain(&res, full, disk)
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case rctx.Err() != nil:
		res.TimedOut = true
		res.Output += fmt.Sprintf("\n[stopped: the command ran longer than %v]", timeout)
		return res, nil
	case runErr != nil && p.cmd.ProcessState == nil:
		return res, fmt.Errorf("start the sandbox: %w", runErr)
	}
	return res, nil
}

// explain names the limit behind a full /tmp or a full workspace.
func (s *Sandbox) explain(res *Result, full bool, disk int64) {
	if strings.Contains(res.Output, "No space left on device") {
		res.Output += fmt.Sprintf("\n[/tmp and /dev/shm hold at most %d MB each (STEWARD_SHELL_TMP)]", cmp.Or(s.Tmp, DefaultTmp)>>20)
	}
	if full {
		res.Output += fmt.Sprintf("\n[the workspace holds more than its %d MB: files can be read and deleted, not written (STEWARD_SHELL_DISK)]", disk>>20)
	}
}

// process is a started sandbox.
type process struct {
	cmd *exec.Cmd
	out *childproc.CappedBuffer
	cg  *cgroup
}

// start starts bwrap with args: as nobody under root, in a process group of its own, and, with
// cgs, in a memory cgroup of its own before it runs — /bin/sh waits for Steward to move it,
// then becomes bwrap.
func (s *Sandbox) start(ctx context.Context, bw string, cgs *cgroups, args []string) (*process, error) {
	p := &process{out: &childproc.CappedBuffer{Max: MaxOutput}}
	var gate *os.File
	if cgs != nil {
		cg, err := cgs.start(s.memory())
		if err != nil {
			return nil, err
		}
		p.cg = cg
		r, w, err := os.Pipe()
		if err != nil {
			cg.remove()
			return nil, err
		}
		defer r.Close()
		gate = w
		defer gate.Close()
		p.cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `read -r _ <&3; exec 3<&- "$@"`, "sandbox", bw}, args...)...)
		p.cmd.ExtraFiles = []*os.File{r}
	} else {
		p.cmd = exec.CommandContext(ctx, bw, args...)
	}
	cmd := p.cmd
	// bwrap itself gets no environment: its sandbox's pid 1 is bwrap, whose
	// /proc/1/environ the command can read.
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/" // not Steward's: the shell exports it as PWD
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: nobody, Gid: nobody}
	}
	// The timeout kills bwrap's whole process group; its pid namespace dies with its init.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		if p.cg != nil {
			p.cg.remove()
		}
		return nil, fmt.Errorf("start the sandbox: %w", err)
	}
	if p.cg != nil {
		if err := p.cg.add(cmd.Process.Pid); err != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			p.cg.remove()
			return nil, fmt.Errorf("move the sandbox into its memory cgroup: %w", err)
		}
		_, _ = gate.Write([]byte("\n"))
	}
	return p, nil
}
