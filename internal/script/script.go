// Package script runs a model's Starlark code over values it is given, with no I/O at all
// (docs/ARCHITECTURE.md §17): no load, no files, no network, no environment,
// no clock. Run evaluates in a child process — this same executable started again with
// childEnv set — that the kernel bounds like the document readers' (internal/childproc): its
// data segment (the memory bound Starlark itself lacks), its CPU seconds, no file writes;
// inside it, the interpreter is bounded by execution steps, a wall-clock cancellation, the
// printed text's size and the result's size. Starlark forbids recursion, so the call depth
// is bounded by the code's length.
package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/childproc"
)

// The limits of one run.
const (
	// MaxCode is the longest code accepted, in bytes.
	MaxCode = 32 << 10
	// MaxInputs is the most the inputs may weigh, as JSON.
	MaxInputs = 2 << 20
	// MaxSteps is the most Starlark execution steps a run may take (about a second of work).
	MaxSteps = 20_000_000
	// Timeout is the wall-clock time a run may take.
	Timeout = 5 * time.Second
	// MaxPrinted is the most printed text kept; printing more stops the run.
	MaxPrinted = 64 << 10
	// MaxResult is the most the result may weigh, as JSON.
	MaxResult = 64 << 10
	// Memory is the data segment a run may use beyond what its process starts with and
	// twice its inputs' size.
	Memory = 128 << 20
	// BusyWait is how long a run waits for a free slot before it is refused as busy.
	BusyWait = 5 * time.Second

	childEnv  = "STEWARD_SCRIPT_RUNNER"
	maxAnswer = MaxPrinted + MaxResult + 64<<10
	maxStderr = 4 << 10
)

// Request is one run: the code and the values bound to names before it runs — Inputs as
// their JSON, CSV texts as their rows (csv.dicts, parsed inside the sandbox) — for Owner, whose
// share of the slots it takes.
type Request struct {
	Owner  uuid.UUID `json:"-"`
	Code   string
	Inputs map[string]any
	CSV    map[string]string
}

// Result is what a run gave: the printed text and the value of the global "result" (or of
// the code, when it is a single expression) as JSON (null when there is none).
type Result struct {
	Printed string          `json:"printed"`
	Result  json.RawMessage `json:"result"`
	Steps   uint64          `json:"steps"`
}

// Error is a run that failed for a reason its code can fix: a syntax or runtime error, or a
// limit it crossed. Its message is written for the model.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Slots bounds the runs at once in this process: half the CPUs, at least two, and half of
// them for one owner.
var Slots = childproc.NewSlots(max(2, runtime.NumCPU()/2))

// ErrBusy is a run refused for want of a slot: the model may pass it on, or try later.
var ErrBusy = errors.New("busy")

// init turns this process into a running child when its parent started it as one.
func init() {
	if os.Getenv(childEnv) == "1" {
		os.Exit(serveChild(os.Stdin, os.Stdout))
	}
}

// childRequest is what the parent sends on the child's stdin.
type childRequest struct {
	Request Request
	Memory  int64
}

// childAnswer is the child's answer.
type childAnswer struct {
	Result  Result
	Err     string
	PeakRSS int64
}

// Run runs req in a child process within the limits above.
func Run(ctx context.Context, req Request) (Result, error) {
	res, _, err := run(ctx, req)
	return res, err
}

// run is Run that also says the child's peak resident set in bytes (0 when it was stopped).
func run(ctx context.Context, req Request) (Result, int64, error) {
	if len(req.Code) > MaxCode {
		return Result{}, 0, &Error{fmt.Sprintf("the code is %d bytes; at most %d are allowed", len(req.Code), MaxCode)}
	}
	inputs, err := json.Marshal([]any{req.Inputs, req.CSV})
	if err != nil {
		return Result{}, 0, fmt.Errorf("encode the inputs: %w", err)
	}
	if len(inputs) > MaxInputs {
		return Result{}, 0, &Error{fmt.Sprintf("the inputs are %d KB; at most %d KB are allowed: pass fewer rows or a shorter document", len(inputs)>>10, MaxInputs>>10)}
	}
	in, err := json.Marshal(childRequest{Request: req, Memory: Memory + 2*int64(len(inputs)) + raceMemory})
	if err != nil {
		return Result{}, 0, fmt.Errorf("encode the request: %w", err)
	}

	release, err := acquire(ctx, req.Owner)
	if err != nil {
		return Result{}, 0, err
	}
	defer release()

	timeout := Timeout * raceSlowdown
	rctx, cancel := context.WithTimeout(ctx, timeout+2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(rctx, childproc.Executable())
	cmd.Env = []string{childEnv + "=1", "GOMAXPROCS=1", "GOTRACEBACK=none", "GORACE=atexit_sleep_ms=0"}
	cmd.Stdin = bytes.NewReader(in)
	out, stderr := &childproc.CappedBuffer{Max: maxAnswer}, &childproc.CappedBuffer{Max: maxStderr}
	cmd.Stdout, cmd.Stderr = out, stderr
	cmd.WaitDelay = time.Second
	if err := ended(ctx, rctx, cmd, cmd.Run(), stderr.Buf.Bytes()); err != nil {
		return Result{}, 0, err
	}
	if out.Over {
		return Result{}, 0, errors.New("the code runner's answer was too long")
	}
	var ans childAnswer
	if err := json.Unmarshal(out.Buf.Bytes(), &ans); err != nil {
		return Result{}, 0, fmt.Errorf("read the code runner's answer: %w", err)
	}
	if ans.Err != "" {
		return Result{}, ans.PeakRSS, &Error{ans.Err}
	}
	return ans.Result, ans.PeakRSS, nil
}

// acquire takes a slot for owner; without one, it says so in words the model can pass on.
func acquire(ctx context.Context, owner uuid.UUID) (func(), error) {
	release, err := Slots.Acquire(ctx, owner, BusyWait)
	switch {
	case errors.Is(err, childproc.ErrShare):
		return nil, fmt.Errorf("%w: steward already runs %d of this owner's programs at once, its share; run this one after them", ErrBusy, Slots.PerOwner)
	case errors.Is(err, childproc.ErrBusy):
		return nil, fmt.Errorf("%w: steward is running other code; try again shortly", ErrBusy)
	}
	return release, err
}

// ended says how a child that ran (runErr its end, stderr what it wrote) failed, or nil.
func ended(ctx, rctx context.Context, cmd *exec.Cmd, runErr error, stderr []byte) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case rctx.Err() != nil || runErr != nil && childproc.KilledForCPU(cmd.ProcessState):
		return &Error{fmt.Sprintf("the code ran longer than %v and was stopped", Timeout)}
	case runErr != nil && cmd.ProcessState == nil:
		return fmt.Errorf("start the code runner: %w", runErr)
	case runErr != nil && childproc.OutOfMemory(stderr):
		return &Error{fmt.Sprintf("the code needed more memory than Steward allows (%d MB) and was stopped", Memory>>20)}
	case runErr != nil:
		// The child runs nothing but the interpreter on the code: its end is the code's doing.
		return &Error{fmt.Sprintf("the code was stopped: its runner ended (%v): %s", cmd.ProcessState, childproc.FirstLine(stderr))}
	}
	return nil
}

// serveChild is the child's side: it reads the request from in, limits itself, runs the code
// and writes its answer to out. The exit status is 0 when an answer was written.
func serveChild(in io.Reader, out io.Writer) int {
	var req childRequest
	if err := json.NewDecoder(io.LimitReader(in, MaxInputs+MaxCode+1<<10)).Decode(&req); err != nil {
		return 3
	}
	if err := childproc.LimitSelf(req.Memory, int64(Timeout/time.Second)*raceSlowdown+1); err != nil {
		return 4
	}
	// The Go heap collects harder as it nears the limit, before the kernel refuses it memory.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	debug.SetMemoryLimit(int64(ms.Sys) + req.Memory*3/4)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout*raceSlowdown)
	defer cancel()
	res, err := Eval(ctx, req.Request)
	ans := childAnswer{Result: res, PeakRSS: childproc.PeakRSS()}
	if err != nil {
		ans.Err = err.Error()
	}
	if err := json.NewEncoder(out).Encode(ans); err != nil {
		return 5
	}
	return 0
}
