// Package childproc is what a sandboxed child process needs: this executable to start again
// (Executable), the kernel limits a child puts on itself (LimitSelf: RLIMIT_DATA, RLIMIT_CPU,
// RLIMIT_FSIZE), how it was stopped (KilledForCPU), its peak resident set (PeakRSS), and a
// capped buffer for its output. The document readers (internal/doctext) and run_code
// (internal/script) run their untrusted work in such children (docs/ARCHITECTURE.md §3, §17).
package childproc

import (
	"bytes"
	"os"
	"sync"
)

// Executable is this program, to start again as a child: /proc/self/exe on Linux (still
// there when the file was replaced by an upgrade), else os.Executable; found once.
var Executable = sync.OnceValue(func() string {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe"
	}
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return exe
})

// CappedBuffer keeps the first Max bytes and notes that more came (Over); the child is not
// blocked on a full pipe.
type CappedBuffer struct {
	Buf  bytes.Buffer
	Max  int
	Over bool
}

func (c *CappedBuffer) Write(p []byte) (int, error) {
	if room := c.Max - c.Buf.Len(); len(p) > room {
		c.Over = true
		c.Buf.Write(p[:max(0, room)])
		return len(p), nil
	}
	return c.Buf.Write(p)
}

// OutOfMemory reports whether a child's standard error says it ran out of memory: the
// runtime's refusal ("out of memory", or "cannot allocate memory" when the kernel refused a
// mapping past RLIMIT_DATA), the segmentation fault of such a mapping, or — in a
// race-detector build — the detector's allocator's refusal.
func OutOfMemory(stderr []byte) bool {
	for _, words := range []string{"out of memory", "cannot allocate memory", "SIGSEGV", "ThreadSanitizer failed to allocate"} {
		if bytes.Contains(stderr, []byte(words)) {
			return true
		}
	}
	return false
}

// FirstLine is the first line of a child's standard error.
func FirstLine(b []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	return string(line)
}
