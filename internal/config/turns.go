package config

import (
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

// Turns is how a turn runs: its bounds (model calls, turns at once, the deployment's daily
// cost), how long it may wait for the owner, how long its writes can be undone, and how it is
// held and handed on between processes.
type Turns struct {
	// AllowAutoMode lets owners use gate mode "auto" (writes without asking); development
	// only (STEWARD_ALLOW_AUTO_MODE).
	AllowAutoMode bool
	// MaxIterations caps model calls per turn before one final tool-free completion
	// (STEWARD_MAX_ITERATIONS).
	MaxIterations int
	// SuspendTTL is how long a suspended turn waits for decisions before it expires
	// (STEWARD_SUSPEND_TTL).
	SuspendTTL time.Duration
	// MaxTurnsPerOwner caps an owner's turns running at once in one process
	// (STEWARD_MAX_TURNS_PER_OWNER); more are refused 429 rate_limited.
	MaxTurnsPerOwner int
	// DailyCostCapMicros is the deployment's daily cost cap across every owner, in millionths
	// of a dollar (STEWARD_DAILY_COST_CAP_USD), which `steward migrate up` and the migrate
	// function store in the database; nil keeps the database's (`steward control cap`).
	DailyCostCapMicros *int64
	// UndoWindow is how long after it ran a database-local write can be undone
	// (STEWARD_UNDO_WINDOW, 10m by default).
	UndoWindow time.Duration
	// RunQueueURL is the SQS queue an accepted webhook's run is sent to, for the worker
	// function to take within seconds (STEWARD_RUN_QUEUE_URL; on Lambda). Unset, `steward
	// serve` runs it right after the 202 and the scheduler's drain is the fallback
	// (docs/ARCHITECTURE.md §10).
	RunQueueURL string
	// ContinueMargin is how much of an invocation's time a turn keeps in hand: with less
	// left before its deadline, the turn stops between steps as continuing and a fresh
	// invocation takes it from the run queue (STEWARD_CONTINUE_MARGIN, 30s; on Lambda only,
	// where invocations have deadlines; docs/ARCHITECTURE.md §2, §10).
	ContinueMargin time.Duration
	// Lease is how long a running or resuming turn is held by its process: renewed while the
	// turn waits on its model; one whose lease lapsed is taken for dead by the sweep, which
	// fails a running turn and recovers a resuming one (STEWARD_LEASE, 15m: a Lambda
	// function's longest timeout).
	Lease time.Duration
}

// turns reads the Turns area.
func (r *reader) turns() Turns {
	t := Turns{
		AllowAutoMode:      r.boolean("STEWARD_ALLOW_AUTO_MODE"),
		MaxIterations:      r.intIn("STEWARD_MAX_ITERATIONS", 8, 1, 50),
		SuspendTTL:         r.duration("STEWARD_SUSPEND_TTL", 7*24*time.Hour),
		MaxTurnsPerOwner:   r.intIn("STEWARD_MAX_TURNS_PER_OWNER", 4, 1, 100),
		DailyCostCapMicros: r.dollars("STEWARD_DAILY_COST_CAP_USD"),
		UndoWindow:         r.duration("STEWARD_UNDO_WINDOW", 10*time.Minute),
		RunQueueURL:        r.str("STEWARD_RUN_QUEUE_URL", ""),
		ContinueMargin:     r.duration("STEWARD_CONTINUE_MARGIN", 30*time.Second),
		Lease:              r.duration("STEWARD_LEASE", 15*time.Minute),
	}
	r.httpURL("STEWARD_RUN_QUEUE_URL", t.RunQueueURL)
	return t
}

// dollars reads an optional dollar amount (steward.ParseDollars) as millionths of a dollar;
// nil when unset.
func (r *reader) dollars(name string) *int64 {
	v := r.str(name, "")
	if v == "" {
		return nil
	}
	micros, err := steward.ParseDollars(v)
	if err != nil {
		r.fail(name, v, err.Error())
		return nil
	}
	return &micros
}
