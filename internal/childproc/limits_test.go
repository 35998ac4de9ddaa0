//go:build unix

package childproc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/childproc"
)

// childEnv makes the test binary a child that limits itself with LimitSelf and then does what
// the variable names (see child).
const childEnv = "CHILDPROC_TEST_CHILD"

func TestMain(m *testing.M) {
	if what := os.Getenv(childEnv); what != "" {
		os.Exit(child(what))
	}
	os.Exit(m.Run())
}

// child is the child's side: limited to 64 MB more than it uses and 1 s of CPU, it
// allocates past the memory (memory), spins past the CPU (cpu), writes a file (file) or does
// a small honest piece of work and reports its peak resident set (fits).
func child(what string) int {
	if err := childproc.LimitSelf(64<<20, 1); err != nil {
		fmt.Fprintln(os.Stderr, "limit:", err)
		return 4
	}
	switch what {
	case "memory":
		var keep [][]byte
		for range 64 { // up to 1 GB, 16 MB at a time, each page touched
			b := make([]byte, 16<<20)
			for i := range b {
				if i%4096 == 0 {
					b[i] = 1
				}
			}
			keep = append(keep, b)
		}
		fmt.Println("allocated", len(keep)*16, "MB")
		return 0
	case "cpu":
		for range runtime.GOMAXPROCS(0) - 1 {
			go spin()
		}
		spin()
	case "file":
		f, err := os.Create(filepath.Join(os.Args[len(os.Args)-1], "out"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "create:", err)
			return 5
		}
		_, err = f.Write([]byte("a byte too many"))
		fmt.Fprintln(os.Stderr, "write:", err)
		if err == nil {
			return 0
		}
		return 6
	case "fits":
		b := make([]byte, 8<<20)
		for i := range b {
			b[i] = byte(i)
		}
		fmt.Println(childproc.PeakRSS())
		return 0
	}
	return 2
}

func spin() {
	for n := 0; ; n++ {
		_ = n * n
	}
}

// runChild runs the test binary as a child doing what; the context bounds a broken limit so
// the test fails instead of hanging.
func runChild(t *testing.T, what string, args ...string) (*exec.Cmd, string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, childproc.Executable(), args...)
	cmd.Env = []string{childEnv + "=" + what, "GOTRACEBACK=none", "GORACE=atexit_sleep_ms=0"}
	out := &childproc.CappedBuffer{Max: 4096}
	stderr := &childproc.CappedBuffer{Max: 4096}
	cmd.Stdout, cmd.Stderr = out, stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the %s child ran a minute: its limit was not enforced", what)
	}
	return cmd, out.Buf.String(), stderr.Buf.String(), err
}

// TestLimitSelfBoundsMemory: a child that allocates past what LimitSelf allows it is stopped
// by the kernel's refusal, and its standard error is what OutOfMemory recognises — not an
// ordinary failure and not a CPU kill.
func TestLimitSelfBoundsMemory(t *testing.T) {
	t.Parallel()
	cmd, out, stderr, err := runChild(t, "memory")
	if err == nil {
		t.Fatalf("a child limited to 64 MB allocated 1 GB: %s", out)
	}
	if !childproc.OutOfMemory([]byte(stderr)) {
		t.Errorf("the child's standard error is not recognised as out of memory (%v): %q", cmd.ProcessState, childproc.FirstLine([]byte(stderr)))
	}
	if childproc.KilledForCPU(cmd.ProcessState) {
		t.Errorf("a child out of memory reads as killed for its CPU (%v)", cmd.ProcessState)
	}
}

// TestLimitSelfBoundsCPU: a child that spins past its second of CPU is stopped by the kernel
// (SIGXCPU, or SIGKILL at the hard limit a second later), and KilledForCPU says so.
func TestLimitSelfBoundsCPU(t *testing.T) {
	t.Parallel()
	cmd, _, stderr, err := runChild(t, "cpu")
	if err == nil {
		t.Fatal("a spinning child limited to 1 s of CPU exited normally")
	}
	if !childproc.KilledForCPU(cmd.ProcessState) {
		t.Errorf("the child ended %v (%q); want killed for its CPU time", cmd.ProcessState, childproc.FirstLine([]byte(stderr)))
	}
}

// TestLimitSelfForbidsFiles: a limited child cannot write a byte to a file; the write fails
// with an error (the runtime ignores SIGXFSZ) and nothing reaches the disk.
func TestLimitSelfForbidsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd, _, stderr, err := runChild(t, "file", dir)
	if err == nil {
		t.Fatalf("a limited child wrote to a file: %q", stderr)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 6 || !strings.Contains(stderr, "file too large") {
		t.Errorf("the child ended %v with %q; want its write refused as file too large", cmd.ProcessState, stderr)
	}
	if info, err := os.Stat(filepath.Join(dir, "out")); err != nil || info.Size() != 0 {
		t.Errorf("the file the child made: %v, %v; want it empty", info, err)
	}
}

// TestLimitSelfLeavesRoomToWork: the limits stop only what exceeds them — a child using 8 MB
// under a 64 MB limit finishes, and reports a peak resident set that counts what it used.
func TestLimitSelfLeavesRoomToWork(t *testing.T) {
	t.Parallel()
	cmd, out, stderr, err := runChild(t, "fits")
	if err != nil {
		t.Fatalf("a child within its limits failed (%v): %q", cmd.ProcessState, stderr)
	}
	if childproc.KilledForCPU(cmd.ProcessState) || childproc.OutOfMemory([]byte(stderr)) {
		t.Errorf("a child that finished reads as stopped: %v, %q", cmd.ProcessState, stderr)
	}
	var peak int64
	if _, err := fmt.Sscan(out, &peak); err != nil {
		t.Fatalf("the child's answer %q: %v", out, err)
	}
	if peak < 8<<20 {
		t.Errorf("peak resident set %d bytes; want at least the 8 MB the child touched", peak)
	}
}

// TestCappedBuffer: a child's output past the cap is dropped, not blocked on: every write
// succeeds, the first Max bytes are kept and Over says more came.
func TestCappedBuffer(t *testing.T) {
	c := &childproc.CappedBuffer{Max: 5}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Errorf("Write(%q) = %d, %v; want %d, nil", s, n, err, len(s))
		}
	}
	if got := c.Buf.String(); got != "abcde" || !c.Over {
		t.Errorf("buffer %q, over %v; want \"abcde\", true", got, c.Over)
	}
	exact := &childproc.CappedBuffer{Max: 3}
	_, _ = exact.Write([]byte("abc"))
	if exact.Over {
		t.Error("exactly Max bytes reads as over")
	}
}

// TestFirstLine: a child's error is reported by its first line, blank lines around it
// dropped.
func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"\n\nfatal error: runtime: out of memory\n\ngoroutine 1\n": "fatal error: runtime: out of memory",
		"one line":   "one line",
		"":           "",
		"  \n\t\n  ": "",
	} {
		if got := childproc.FirstLine([]byte(in)); got != want {
			t.Errorf("FirstLine(%q) = %q; want %q", in, got, want)
		}
	}
}
