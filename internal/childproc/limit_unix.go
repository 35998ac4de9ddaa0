//go:build unix

package childproc

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// LimitSelf bounds this (child) process: its data segment to memory bytes more than it
// already uses (the runtime and the package variables initialised before this package: the
// larger the binary, the more), its CPU to cpu seconds (then SIGXCPU, and SIGKILL a second
// later), and file writes to nothing.
func LimitSelf(memory, cpu int64) error {
	limit := uint64(DataSegment() + memory)
	for _, l := range []struct {
		res      int
		cur, max uint64
	}{
		{syscall.RLIMIT_DATA, limit, limit},
		{syscall.RLIMIT_CPU, uint64(cpu), uint64(cpu) + 1},
		{syscall.RLIMIT_FSIZE, 0, 0},
	} {
		if err := syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: l.cur, Max: l.max}); err != nil {
			return err
		}
	}
	return nil
}

// KilledForCPU reports whether a child was stopped for its CPU time (SIGXCPU, or the SIGKILL
// that follows it at the hard limit).
func KilledForCPU(ps *os.ProcessState) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGXCPU || ws.Signal() == syscall.SIGKILL)
}

// unknownDataSegment is what dataSegment assumes where /proc does not say: more than a Go
// program of Steward's size uses at start.
const unknownDataSegment = 256 << 20

// DataSegment is this process's data segment now, in bytes: what RLIMIT_DATA counts.
func DataSegment() int64 {
	if n := procStatus("VmData"); n > 0 {
		return n
	}
	return unknownDataSegment
}

// PeakRSS is this process's peak resident set in bytes (0 when unknown). Not getrusage's
// ru_maxrss of the child as its parent sees it: Linux starts that at the parent's resident
// set when the child is forked.
func PeakRSS() int64 { return procStatus("VmHWM") }

// RSS is this process's resident set now, in bytes (0 when unknown).
func RSS() int64 { return procStatus("VmRSS") }

// procStatus is a field of /proc/self/status given in kB, in bytes (0 when not there).
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
