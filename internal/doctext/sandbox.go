package doctext

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/childproc"
	"github.com/stewardhq/steward/internal/steward"
)

// The sandbox: Go cannot stop a goroutine, and the PDF library can loop or allocate without
// bound inside one call on a hostile file (an object stream that extends itself, a
// predictor's column count of a billion), so every reading runs in a child process — this
// same executable, started again with childEnv set — that the kernel bounds: its data
// segment (RLIMIT_DATA: the heap), its CPU seconds (RLIMIT_CPU), no file writes
// (RLIMIT_FSIZE), one OS thread for Go code (GOMAXPROCS=1), and a wall-clock deadline after
// which it is killed. The child gets the document on stdin and none of the parent's
// environment (no secrets), and answers with its text on stdout. A few readings run at once
// per process (Readers), so uploads cannot take every core from the other requests.
const (
	// Timeout is how long the reading of a small document may take before it is killed and
	// refused; a larger one gets TimeoutPerMB more for each MB, up to MaxTimeout. Steward's
	// readers are linear in what they read, so a document that needs more is hostile or
	// broken.
	Timeout      = 1500 * time.Millisecond
	TimeoutPerMB = time.Second
	MaxTimeout   = 20 * time.Second
	// BusyWait is how long Extract waits for a free slot before it answers busy.
	BusyWait = 5 * time.Second
	// ChildMemory is the memory a reading may use beyond what its process starts with and
	// twice its document's size.
	ChildMemory = 64 << 20

	childEnv = "STEWARD_DOCUMENT_READER"
	// maxAnswer bounds what the parent reads of a child's answer: the text cap plus the
	// encoding's overhead; maxStderr what it keeps of the child's standard error (the first
	// line says why the runtime gave up).
	maxAnswer = MaxTextBytes + 1<<20
	maxStderr = 4 << 10
)

// TimeoutFor is the deadline of reading a document of n bytes (Timeout, plus TimeoutPerMB
// for each MB, at most MaxTimeout).
func TimeoutFor(n int) time.Duration {
	return raceSlowdown * min(MaxTimeout, Timeout+time.Duration(n>>20)*TimeoutPerMB)
}

// Readers bounds the readings at once, in all and per owner: a reading waits up to its wait
// for a slot, then is refused as busy (rate_limited, with Retry-After). One Readers serves a
// whole process (ProcessReaders), so uploads and fetched pages together cannot take every
// core from the other requests; and no owner holds more than its share of the slots, so a
// large document one owner uploads (a reading may take up to MaxTimeout) leaves a slot for
// another owner's.
type Readers struct {
	wait time.Duration

	mu              sync.Mutex
	slots, perOwner int
	total           int
	held            map[string]int
	// freed is closed (and replaced) each time a slot is given back: the waiters look again.
	freed chan struct{}
}

// NewReaders is a bound of n readings at once, at most perOwner of them for one owner (0s:
// the defaults, Resize), each waiting up to wait for a slot.
func NewReaders(n, perOwner int, wait time.Duration) *Readers {
	r := &Readers{wait: wait, held: map[string]int{}, freed: make(chan struct{})}
	r.Resize(n, perOwner)
	return r
}

// DefaultReaders is the readings at once of a process not configured otherwise: half the
// CPUs, at least two (a reading child runs at a lower priority than the server, childNice).
func DefaultReaders() int { return max(2, runtime.NumCPU()/2) }

// ProcessReaders is the process's bound (DefaultReaders, half of them per owner, waiting
// BusyWait); internal/app resizes it to the configuration.
var ProcessReaders = NewReaders(0, 0, BusyWait)

// Resize sets the bound to n readings at once (0: DefaultReaders), at most perOwner of them
// for one owner (0: half of n, at least one; never more than n); readings under way keep
// their slots (STEWARD_DOCUMENT_READERS, STEWARD_DOCUMENT_READERS_PER_OWNER).
func (r *Readers) Resize(n, perOwner int) {
	if n <= 0 {
		n = DefaultReaders()
	}
	if perOwner <= 0 {
		perOwner = max(1, n/2)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.slots, r.perOwner = n, min(n, perOwner)
	r.wake()
}

// Slots is how many documents r reads at once, in all and for one owner.
func (r *Readers) Slots() (n, perOwner int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.slots, r.perOwner
}

// wake tells the waiters that a slot may be free (r.mu held).
func (r *Readers) wake() {
	close(r.freed)
	r.freed = make(chan struct{})
}

// grab takes a slot for owner if one is free to it, else returns the channel to wait on.
func (r *Readers) grab(owner string) (ok bool, freed <-chan struct{}, own bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.total < r.slots && r.held[owner] < r.perOwner {
		r.total++
		r.held[owner]++
		return true, nil, false
	}
	return false, r.freed, r.held[owner] >= r.perOwner
}

// give gives owner's slot back.
func (r *Readers) give(owner string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total--
	if r.held[owner]--; r.held[owner] <= 0 {
		delete(r.held, owner)
	}
	r.wake()
}

// take waits for a slot for owner (up to r's wait); release gives it back.
func (r *Readers) take(ctx context.Context, owner string) (release func(), err error) {
	wait := time.NewTimer(r.wait)
	defer wait.Stop()
	for {
		ok, freed, own := r.grab(owner)
		if ok {
			return func() { r.give(owner) }, nil
		}
		select {
		case <-freed:
		case <-wait.C:
			return nil, r.busy(own)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// busy is the refusal of a reading that found no slot: the owner's share taken by their
// own readings (own), or every slot.
func (r *Readers) busy(own bool) error {
	n, perOwner := r.Slots()
	msg := fmt.Sprintf("Steward is busy reading other documents (%d at once, STEWARD_DOCUMENT_READERS); try again in %d seconds", n, int(BusyWait.Seconds()))
	if own {
		msg = fmt.Sprintf("Steward is already reading %d of your documents, as many as one owner may at once (STEWARD_DOCUMENT_READERS_PER_OWNER); try again in %d seconds",
			perOwner, int(BusyWait.Seconds()))
	}
	return &steward.Error{Code: steward.CodeRateLimited, Reason: ReasonBusy, RetryAfter: BusyWait, Message: msg}
}

// init turns this process into a reading child when its parent started it as one: it reads
// one document from stdin, answers on stdout and exits, before any main runs. Every binary
// that can call Extract imports this package, and so can be its own child (test binaries
// too).
func init() {
	if os.Getenv(childEnv) == "1" {
		os.Exit(serveChild(os.Stdin, os.Stdout))
	}
}

// childRequest is what the parent sends before the document's bytes.
type childRequest struct {
	MediaType, Name, ContentType, URL string
	Size                              int64
	Memory                            int64 // RLIMIT_DATA, bytes
	CPU                               int64 // RLIMIT_CPU, seconds
	Timeout                           time.Duration
}

// childAnswer is the child's answer: the text, or the refusal, and its peak resident set
// (VmHWM) in bytes.
type childAnswer struct {
	Extracted Extracted
	Err       *steward.Error
	PeakRSS   int64
}

// usage is what a reading cost, for the benchmarks: the child's peak resident set in bytes
// (0 when it was stopped before it answered) and the time it took.
type usage struct {
	PeakRSS int64
	Wall    time.Duration
}

// sandboxed reads src (of media type mt) in a child process, in one of r's slots.
func (r *Readers) sandboxed(ctx context.Context, mt string, src Source) (Extracted, usage, error) {
	release, err := r.take(ctx, src.Owner)
	if err != nil {
		return Extracted{}, usage{}, err
	}
	defer release()

	size := src.Len()
	timeout := TimeoutFor(int(size))
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req := childRequest{MediaType: mt, Name: src.Name, ContentType: src.ContentType, URL: src.URL,
		Size: size, Memory: childMemoryFor(int(size)), CPU: int64(timeout/time.Second) + 1, Timeout: timeout}
	head, err := json.Marshal(req)
	if err != nil {
		return Extracted{}, usage{}, err
	}
	var frame [4]byte
	binary.BigEndian.PutUint32(frame[:], uint32(len(head)))
	cmd := exec.CommandContext(rctx, childproc.Executable())
	// GORACE: a race-detector build (tests) would otherwise sleep a second as each child exits.
	cmd.Env = []string{childEnv + "=1", "GOMAXPROCS=1", "GOTRACEBACK=none", "GORACE=atexit_sleep_ms=0"}
	cmd.Stdin = io.MultiReader(bytes.NewReader(frame[:]), bytes.NewReader(head), src.Reader())
	out, stderr := &childproc.CappedBuffer{Max: maxAnswer}, &childproc.CappedBuffer{Max: maxStderr}
	cmd.Stdout, cmd.Stderr = out, stderr
	cmd.WaitDelay = time.Second
	start := time.Now()
	runErr := cmd.Run()
	u := usage{Wall: time.Since(start)}
	switch {
	case ctx.Err() != nil:
		return Extracted{}, u, ctx.Err()
	case rctx.Err() != nil:
		return Extracted{}, u, overran(timeout)
	case runErr != nil && cmd.ProcessState == nil:
		return Extracted{}, u, fmt.Errorf("start the document reader: %w", runErr)
	case runErr != nil && childproc.OutOfMemory(stderr.Buf.Bytes()):
		return Extracted{}, u, refuse(ReasonTooComplex, "reading the document needs more memory than Steward allows one reading (%d MB), so it was stopped", req.Memory>>20)
	case runErr != nil && childproc.KilledForCPU(cmd.ProcessState):
		return Extracted{}, u, overran(timeout)
	case runErr != nil:
		return Extracted{}, u, fmt.Errorf("the document reader failed (%v): %s", cmd.ProcessState, childproc.FirstLine(stderr.Buf.Bytes()))
	case out.Over:
		return Extracted{}, u, overText("document")
	}
	var ans childAnswer
	if err := gob.NewDecoder(&out.Buf).Decode(&ans); err != nil {
		return Extracted{}, u, fmt.Errorf("read the document reader's answer: %w", err)
	}
	u.PeakRSS = ans.PeakRSS
	if ans.Err != nil {
		return Extracted{}, u, ans.Err
	}
	return ans.Extracted, u, nil
}

// overran is the refusal of a reading that ran out of time.
func overran(timeout time.Duration) error {
	return refuse(ReasonTimeout, "reading the document took longer than %v, so it was stopped; a simpler or smaller copy may work", timeout)
}

// childMemoryFor is the data segment a child may use for a document of n bytes.
func childMemoryFor(n int) int64 { return ChildMemory + 2*int64(n) + raceMemory }

// serveChild is the child's side: it reads the request and the document from in, limits
// itself, reads the document and writes its answer to out. The exit status is 0 when an
// answer was written.
func serveChild(in io.Reader, out io.Writer) int {
	var frame [4]byte
	if _, err := io.ReadFull(in, frame[:]); err != nil {
		return 3
	}
	n := binary.BigEndian.Uint32(frame[:])
	if n > 1<<16 {
		return 3
	}
	head := make([]byte, n)
	if _, err := io.ReadFull(in, head); err != nil {
		return 3
	}
	var req childRequest
	if err := json.Unmarshal(head, &req); err != nil || req.Size < 0 || req.Size > 1<<30 {
		return 3
	}
	if err := childproc.LimitSelf(req.Memory, req.CPU); err != nil {
		return 4
	}
	lowerPriority()
	// The Go heap collects harder as it nears the limit, before the kernel refuses it memory.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	debug.SetMemoryLimit(int64(ms.Sys) + req.Memory*3/4)
	data := make([]byte, req.Size)
	if _, err := io.ReadFull(in, data); err != nil {
		return 3
	}
	ctx, cancel := context.WithTimeout(context.Background(), req.Timeout)
	defer cancel()
	ex, err := extract(ctx, req.MediaType, Source{Name: req.Name, ContentType: req.ContentType, URL: req.URL, Data: data})
	ans := childAnswer{PeakRSS: childproc.PeakRSS()}
	var se *steward.Error
	switch {
	case err == nil:
		ans.Extracted = ex
	case errors.Is(err, context.DeadlineExceeded):
		ans.Err = overran(req.Timeout).(*steward.Error)
	case errors.As(err, &se):
		ans.Err = se
	default:
		ans.Err = steward.Refusef(steward.CodeInvalid, ReasonCorrupt, "the document could not be read: %v", err)
	}
	if err := gob.NewEncoder(out).Encode(ans); err != nil {
		return 5
	}
	return 0
}
