package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
)

// A memory cgroup per command bounds the sandbox as a whole (docs/CODE.md#run_command): every
// process in it and the /tmp and /dev/shm it fills, since the kernel charges tmpfs pages to
// the cgroup of the process that wrote them. Steward makes one under a parent cgroup — found
// from its own (cgroup v2 where it may delegate the memory controller, else the cgroup v1
// memory hierarchy) or named by STEWARD_SHELL_CGROUP — and moves the command's first process
// into it before that process runs anything.

// cgroupFS is where the cgroup file systems are mounted.
const cgroupFS = "/sys/fs/cgroup"

// cgroups is the parent of the commands' cgroups.
type cgroups struct {
	dir string
	v2  bool
}

// findCgroups finds the parent cgroup the setting names: "off" none, "" or "auto" one under
// Steward's own cgroup, else the directory given. Without one it says why.
func findCgroups(setting string) (*cgroups, error) {
	switch setting {
	case "off":
		return nil, errors.New("STEWARD_SHELL_CGROUP=off")
	case "", "auto":
		return autoCgroups()
	}
	if isFile(filepath.Join(setting, "cgroup.controllers")) {
		return delegate(setting, setting)
	}
	if isFile(filepath.Join(setting, "memory.limit_in_bytes")) {
		return &cgroups{dir: setting}, nil
	}
	return nil, fmt.Errorf("STEWARD_SHELL_CGROUP=%s is not a cgroup v2 directory nor one of the cgroup v1 memory controller", setting)
}

// autoCgroups is a steward-sandbox cgroup beside Steward's own: under cgroup v2, a sibling
// of Steward's cgroup when its parent lets Steward enable the memory controller; under cgroup
// v1, a child of Steward's memory cgroup.
func autoCgroups() (*cgroups, error) {
	if isFile(filepath.Join(cgroupFS, "cgroup.controllers")) {
		own, err := ownCgroup("")
		if err != nil {
			return nil, err
		}
		parent := filepath.Join(cgroupFS, path.Dir(own))
		return delegate(parent, filepath.Join(parent, "steward-sandbox"))
	}
	if !isFile(filepath.Join(cgroupFS, "memory", "memory.limit_in_bytes")) {
		return nil, errors.New("no memory cgroup is mounted")
	}
	own, err := ownCgroup("memory")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cgroupFS, "memory", own, "steward-sandbox")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make a memory cgroup (v1): %w", err)
	}
	return &cgroups{dir: dir}, nil
}

// delegate makes dir (a cgroup v2 directory under parent) one whose children may bound
// memory: the controller enabled in parent's and dir's subtree.
func delegate(parent, dir string) (*cgroups, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make a cgroup (v2): %w", err)
	}
	for _, d := range []string{parent, dir} {
		if err := enableMemory(d); err != nil {
			return nil, fmt.Errorf("the cgroup %s cannot delegate memory (%w): set STEWARD_SHELL_CGROUP to a cgroup delegated to Steward", d, err)
		}
	}
	return &cgroups{dir: dir, v2: true}, nil
}

func enableMemory(dir string) error {
	on, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil || bytes.Contains(on, []byte("memory")) {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory"), 0)
}

// ownCgroup is this process's cgroup path in the hierarchy of controller ("" for v2).
func ownCgroup(controller string) (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if controller == "" && parts[0] == "0" || controller != "" && strings.Contains(","+parts[1]+",", ","+controller+",") {
			return parts[2], nil
		}
	}
	return "", fmt.Errorf("this process is in no %q cgroup", controller)
}

// cgroup is one command's.
type cgroup struct {
	dir string
	v2  bool
}

// start makes a command's cgroup with its memory limit (and no swap, where swap is counted).
func (c *cgroups) start(limit int64) (*cgroup, error) {
	g := &cgroup{dir: filepath.Join(c.dir, "run-"+uuid.NewString()), v2: c.v2}
	if err := os.Mkdir(g.dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the command's cgroup: %w", err)
	}
	name, swap := "memory.limit_in_bytes", "memory.memsw.limit_in_bytes"
	if c.v2 {
		name, swap = "memory.max", "memory.swap.max"
	}
	if err := g.write(name, strconv.FormatInt(limit, 10)); err != nil {
		g.remove()
		return nil, fmt.Errorf("bound the command's memory: %w", err)
	}
	if c.v2 {
		_ = g.write(swap, "0") // absent without swap accounting
	} else {
		_ = g.write(swap, strconv.FormatInt(limit, 10))
	}
	return g, nil
}

func (g *cgroup) write(name, value string) error {
	return os.WriteFile(filepath.Join(g.dir, name), []byte(value), 0)
}

// add moves process pid (and so everything it starts) into the cgroup.
func (g *cgroup) add(pid int) error {
	return g.write("cgroup.procs", strconv.Itoa(pid))
}

// peak is the most memory the cgroup held, in bytes (0 when the kernel does not say).
func (g *cgroup) peak() int64 {
	name := "memory.max_usage_in_bytes"
	if g.v2 {
		name = "memory.peak"
	}
	b, _ := os.ReadFile(filepath.Join(g.dir, name))
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// oomKilled says whether the kernel killed a process of the cgroup for its memory limit.
func (g *cgroup) oomKilled() bool {
	name := "memory.oom_control"
	if g.v2 {
		name = "memory.events"
	}
	b, _ := os.ReadFile(filepath.Join(g.dir, name))
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
			return true
		}
	}
	return false
}

// remove kills whatever is left in the cgroup and removes it.
func (g *cgroup) remove() {
	for range 50 {
		if err := syscall.Rmdir(g.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		if g.v2 {
			_ = g.write("cgroup.kill", "1")
		} else {
			b, _ := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
			for f := range strings.FieldsSeq(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
