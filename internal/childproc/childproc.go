// Package childproc is what a sandboxed child process needs: this executable to start again
// (Executable), the kernel limits a child puts on itself (LimitSelf: RLIMIT_DATA, RLIMIT_CPU,
// RLIMIT_FSIZE), how it was stopped (KilledForCPU), its peak resident set (PeakRSS), a
// capped buffer for its output, and Slots that bound the children at once, fairly among
// owners. The document readers (internal/doctext) and run_code (internal/script) run their
// untrusted work in such children (docs/ARCHITECTURE.md §3, §17).
package childproc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
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

// The refusals of Slots.Acquire: no slot freed in time, or the owner holds its share.
var (
	ErrBusy  = errors.New("no slot is free")
	ErrShare = errors.New("the owner holds its share of the slots")
)

// Slots bounds the children running at once in this process: Total in all, PerOwner for one
// owner, so that one owner cannot take them all (docs/ARCHITECTURE.md §17).
type Slots struct {
	Total, PerOwner int

	mu    sync.Mutex
	n     int
	held  map[uuid.UUID]int
	freed chan struct{} // closed, and replaced, when a slot frees
}

// NewSlots returns Slots for total children at once, half of them for one owner (at least one).
func NewSlots(total int) *Slots {
	return &Slots{Total: total, PerOwner: max(1, total/2), held: map[uuid.UUID]int{}, freed: make(chan struct{})}
}

// Acquire takes a slot for owner and returns its release. An owner holding its share is
// refused at once (ErrShare); otherwise it waits up to wait for a free slot (then ErrBusy).
func (s *Slots) Acquire(ctx context.Context, owner uuid.UUID, wait time.Duration) (func(), error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if s.held[owner] >= s.PerOwner {
			s.mu.Unlock()
			return nil, ErrShare
		}
		if s.n < s.Total {
			s.n++
			s.held[owner]++
			s.mu.Unlock()
			return sync.OnceFunc(func() { s.release(owner) }), nil
		}
		freed := s.freed
		s.mu.Unlock()
		select {
		case <-freed:
		case <-timer.C:
			return nil, ErrBusy
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *Slots) release(owner uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n--
	if s.held[owner]--; s.held[owner] == 0 {
		delete(s.held, owner)
	}
	close(s.freed)
	s.freed = make(chan struct{})
}
