// Package work is Steward's one work spine (docs/ARCHITECTURE.md §10), after
// riverqueue/river's model at Steward's scale: every piece of asynchronous work an owner has
// pending is one row of the owner-scoped work table (migrations/00053_work.sql), keyed by
// (owner, kind, key) and enqueued in the transaction that made the work (Enqueue). Kinds are
// registered with their workers (Spine.Register); Hand makes the one choice of where an item
// runs now — in this process under `steward serve` (Run), else on the run queue for
// functions/worker (HandleMessages), else before the caller answers or left to the drain;
// Do claims the row with a lease, runs the worker and deletes the row; one Drain (one
// door-side scan) takes the items whose hand-off was lost and rescues those whose lease
// lapsed. The row only says "look now": the domain's own claim (a job run's, a turn's, a
// Telegram update's) still decides exactly once, so workers are idempotent.
package work

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/trace"
)

// Worker does one item of its kind for its owner. It runs outside any transaction and must
// be idempotent: the spine may run an item again (a lapsed lease, a redelivered message), and
// the domain's own claim decides. An item already done is a nil error.
type Worker func(ctx context.Context, ownerID uuid.UUID, key string) error

// Kind is one kind of work and its worker.
type Kind struct {
	// Name is the kind's name on its rows and messages: "webhook_run", "turn_continue",
	// "telegram_update", … (lower case, digits and underscores, at most 40 characters).
	Name string
	// Work does one item.
	Work Worker
	// Grace is how long a handed item waits before the drain takes it (the hand-off's
	// chance); 0 for items due at their run_after.
	Grace time.Duration
	// Lease is how long a claimed item is held before the drain's rescuer frees it: longer
	// than the worker may run. Zero means DefaultLease.
	Lease time.Duration
	// MaxAttempts is how many failed attempts an item has before it is marked failed,
	// logged, and kept for an operator. Zero means DefaultMaxAttempts.
	MaxAttempts int
	// Inline runs an item before Hand returns when there is neither this process's Run nor
	// a run queue (or the send failed); otherwise the drain takes it after Grace.
	Inline bool
	// Rowless kinds keep no row here: their own table is their queue and has its own drain
	// (the deliverer's notifications). Do runs the worker without a claim, and Hand runs it
	// in this process's Run or before it returns, never on the run queue.
	Rowless bool
}

// Defaults of a Kind's zero fields.
const (
	DefaultLease       = 15 * time.Minute
	DefaultMaxAttempts = 5
)

func (k Kind) lease() time.Duration {
	if k.Lease > 0 {
		return k.Lease
	}
	return DefaultLease
}

func (k Kind) maxAttempts() int {
	if k.MaxAttempts > 0 {
		return k.MaxAttempts
	}
	return DefaultMaxAttempts
}

// backoff is how long an item waits after its attempts-th failed attempt: a minute, doubled
// each time, at most an hour.
func backoff(attempts int) time.Duration {
	d := time.Minute
	for i := 1; i < attempts && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// Door is the one cross-owner read the spine needs; *store.Door implements it.
type Door interface {
	ScanDueWork(ctx context.Context, due map[string]time.Time, now time.Time, limit int) ([]store.WorkRef, error)
}

// Sender puts a message on the run queue (STEWARD_RUN_QUEUE_URL); *awsapi.Queue implements it.
type Sender interface {
	Send(ctx context.Context, body string) error
}

// Spine runs the registered kinds' items. Build it with its fields, Register each kind, then
// hand it out; it is safe for concurrent use.
type Spine struct {
	// Store claims and finishes items in their owner's transactions.
	Store *store.Store
	// Door finds the items due across owners (Drain).
	Door Door
	// Queue is the run queue handed items go to when Run is not running here (Lambda); nil
	// when there is none.
	Queue Sender
	// Now is the one clock run_after and leases are decided by (docs/ARCHITECTURE.md §9).
	Now steward.Clock
	// Logger logs what Hand and Run do outside a request's context.
	Logger zerolog.Logger
	// Batch bounds the items one Drain takes; zero means 50.
	Batch int

	mu      sync.Mutex
	kinds   map[string]Kind
	runCtx  context.Context // set while Run runs
	running sync.WaitGroup  // the items Run's process runs
}

// Register adds a kind; it panics on a duplicate or malformed name or a nil worker, a
// programming error caught when the process starts.
func (s *Spine) Register(k Kind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !validName(k.Name) || k.Work == nil {
		panic(fmt.Sprintf("work: kind %q: a name of [a-z0-9_] and a worker are required", k.Name))
	}
	if _, dup := s.kinds[k.Name]; dup {
		panic(fmt.Sprintf("work: kind %q registered twice", k.Name))
	}
	if s.kinds == nil {
		s.kinds = map[string]Kind{}
	}
	s.kinds[k.Name] = k
}

// validName is the migration's check on kind.
func validName(name string) bool {
	if name == "" || len(name) > 40 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, c := range name {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// kind finds a registered kind.
func (s *Spine) kind(name string) (Kind, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.kinds[name]
	if !ok {
		return Kind{}, fmt.Errorf("work: unknown kind %q", name)
	}
	return k, nil
}

// Enqueue records an item of kind for ownerID in tx, the caller's transaction, due at
// runAfter: it commits or rolls back with the work it stands for. It is idempotent per
// (owner, kind, key); an item already pending is queued again for runAfter.
func Enqueue(ctx context.Context, tx *store.Tx, kind string, ownerID uuid.UUID, key string, runAfter time.Time) error {
	if ownerID != tx.OwnerID() {
		return fmt.Errorf("work: enqueue %s %s for owner %s in owner %s's transaction", kind, key, ownerID, tx.OwnerID())
	}
	if !validName(kind) || key == "" || len(key) > 200 {
		return fmt.Errorf("work: enqueue: malformed kind %q or key %q", kind, key)
	}
	return tx.Work.Enqueue(ctx, kind, key, runAfter)
}

// Do claims the item (a lease of its kind's), runs its worker, and deletes it when the
// worker succeeds; when it fails, the item is queued again after a backoff, or marked failed
// after the kind's MaxAttempts, and the worker's error is returned. An item not there to
// claim (done, taken by another, not due yet) is nil: nothing runs.
func (s *Spine) Do(ctx context.Context, kind string, ownerID uuid.UUID, key string) error {
	k, err := s.kind(kind)
	if err != nil {
		return err
	}
	if k.Rowless {
		return s.work(ctx, k, ownerID, key)
	}
	now := s.Now.Now()
	var claim store.WorkClaim
	var claimed bool
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		claim, claimed, err = tx.Work.Claim(ctx, k.Name, key, now, now.Add(k.lease()))
		return err
	})
	if err != nil || !claimed {
		return err
	}
	werr := s.work(ctx, k, ownerID, key)
	if err := s.settle(ctx, k, ownerID, key, claim, werr); err != nil {
		return errors.Join(werr, err)
	}
	return werr
}

// work runs k's worker, a panic turned into an error.
func (s *Spine) work(ctx context.Context, k Kind, ownerID uuid.UUID, key string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("work: %s %s panicked: %v", k.Name, key, p)
		}
	}()
	return k.Work(ctx, ownerID, key)
}

// settleTimeout bounds recording an attempt's outcome, which runs even when the worker's
// context ended (a shutdown): an outcome not recorded leaves the item to the rescuer.
const settleTimeout = 5 * time.Second

// settle records an attempt's outcome: the item deleted when it succeeded, else queued again
// after its backoff, or failed after its kind's attempts.
func (s *Spine) settle(ctx context.Context, k Kind, ownerID uuid.UUID, key string, c store.WorkClaim, werr error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	log := zerolog.Ctx(ctx)
	return s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if werr == nil {
			_, err := tx.Work.Finish(ctx, k.Name, key, c)
			return err
		}
		failed := c.Attempts >= k.maxAttempts()
		after := s.Now.Now().Add(backoff(c.Attempts))
		msg := trace.Redact(werr.Error())
		ev := log.Warn()
		if failed {
			ev = log.Error()
		}
		ev.Str("kind", k.Name).Str("key", key).Stringer("owner_id", ownerID).Int("attempts", c.Attempts).
			Bool("failed", failed).Str("error", msg).Msg("work item failed")
		_, err := tx.Work.Retry(ctx, k.Name, key, c, after, failed, msg)
		return err
	})
}

// Drain is the spine's one door scan, an autonomy.Drainer run on every scheduler tick: the
// items queued past their run_after plus their kind's Grace (their hand-off was lost: a send
// that failed, a message dead-lettered, a process that stopped) and the items running whose
// lease lapsed (the rescuer: a worker that died) are each Do'ne in their owner's own
// transactions. An owner with nothing due costs nothing.
func (s *Spine) Drain(ctx context.Context) error {
	return s.drain(ctx, false)
}

// drain is Drain; now takes every queued item due at its run_after, without its grace.
func (s *Spine) drain(ctx context.Context, now bool) error {
	at := s.Now.Now()
	due := map[string]time.Time{}
	s.mu.Lock()
	for name, k := range s.kinds {
		if k.Rowless {
			continue
		}
		due[name] = at.Add(-k.Grace)
		if now {
			due[name] = at
		}
	}
	s.mu.Unlock()
	if len(due) == 0 {
		return nil
	}
	batch := s.Batch
	if batch <= 0 {
		batch = 50
	}
	refs, err := s.Door.ScanDueWork(ctx, due, at, batch)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range refs {
		if err := s.Do(ctx, r.Kind, r.OwnerID, r.Key); err != nil {
			errs = append(errs, fmt.Errorf("%s %s of owner %s: %w", r.Kind, r.Key, r.OwnerID, err))
		}
	}
	return errors.Join(errs...)
}
