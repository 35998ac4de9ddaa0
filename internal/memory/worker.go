package memory

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/store"
)

// Queue lists outbox items due for ingestion across owners. *store.Door implements it: the
// scan is a cross-owner read; each item is then claimed in its owner's transaction.
type Queue interface {
	DueIngests(ctx context.Context, now time.Time, limit int) ([]store.DueIngest, error)
}

// Worker drains the memory outbox off the hot path: under `steward serve` as a goroutine
// (Run), on Lambda from a scheduled tick (Drain). Each item is claimed with a lease and read
// (Service.load) in one transaction — which also completes it when memory already holds the
// exchange — then ingested (Service.ingest) and completed in one transaction fenced by the
// claim. A failed item is
// retried with exponential backoff and, after MaxAttempts, marked failed with its last error
// (store.Tx.IngestBacklog, store.Door.IngestBacklog). An item whose worker dies mid-way is
// claimed again once its lease lapses; one whose context is cancelled is released at once.
// Leases and retries are decided by the Service's clock (Service.Now), passed into the SQL.
// Zero fields take the defaults named on them.
type Worker struct {
	Memory *Service
	Queue  Queue

	// Interval is Run's polling period (5 s).
	Interval time.Duration
	// Batch is how many due items are listed at a time (32).
	Batch int
	// Concurrency is how many items are ingested at once (4).
	Concurrency int
	// Lease is how long a claimed item is held before another worker may take it (2 min);
	// longer than an item's embedding and model calls take.
	Lease time.Duration
	// MaxAttempts is how many times an item is tried before it is marked failed (5).
	MaxAttempts int
	// Backoff is the wait before the first retry (30 s); it doubles per attempt, with
	// jitter, up to MaxBackoff (1 h).
	Backoff, MaxBackoff time.Duration
}

// Drained counts what a Drain did.
type Drained struct {
	Done    int // ingested and completed
	Retry   int // failed, to be retried after a backoff
	Failed  int // failed for the last time
	Skipped int // claimed by another worker first, or released on cancellation
}

// Run drains the outbox every Interval until ctx is done, then returns nil. Errors are
// logged; while drains fail (the database unavailable) the wait doubles up to maxRunBackoff,
// and the first drain that succeeds brings it back to Interval (docs/ARCHITECTURE.md §10).
func (w *Worker) Run(ctx context.Context) error {
	interval := orDefault(w.Interval, 5*time.Second)
	wait := interval
	for {
		if _, err := w.Drain(ctx, 10*orDefault(w.Batch, 32)); err != nil && ctx.Err() == nil {
			wait = min(2*wait, max(interval, maxRunBackoff))
			zerolog.Ctx(ctx).Error().Err(err).Dur("next_in", wait).Msg("memory worker: drain failed")
		} else {
			wait = interval
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// maxRunBackoff is the longest wait between Run's drains while they fail.
const maxRunBackoff = time.Minute

// Drain ingests due items until none is due or max items were handled, and says what it did.
// A cancelled ctx stops it early (with ctx's error) and releases the items in hand.
func (w *Worker) Drain(ctx context.Context, max int) (Drained, error) {
	var total Drained
	for handled := 0; handled < max; {
		due, err := w.Queue.DueIngests(ctx, w.Memory.Now.Now(), min(orDefault(w.Batch, 32), max-handled))
		if err != nil {
			return total, err
		}
		if len(due) == 0 {
			return total, nil
		}
		d := w.handle(ctx, due)
		total.Done += d.Done
		total.Retry += d.Retry
		total.Failed += d.Failed
		total.Skipped += d.Skipped
		handled += len(due)
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
	return total, nil
}

// handle ingests items, Concurrency at a time. An owner's items are first claimed and read
// together (owned); what that could not take goes alone (one).
func (w *Worker) handle(ctx context.Context, due []store.DueIngest) Drained {
	var (
		mu    sync.Mutex
		total Drained
		wg    sync.WaitGroup
		slots = make(chan struct{}, orDefault(w.Concurrency, 4))
	)
	run := func(fn func() Drained) {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			d := fn()
			mu.Lock()
			total.Done += d.Done
			total.Retry += d.Retry
			total.Failed += d.Failed
			total.Skipped += d.Skipped
			mu.Unlock()
		})
	}
	var owners []uuid.UUID
	byOwner := map[uuid.UUID][]store.DueIngest{}
	for _, item := range due {
		if _, ok := byOwner[item.OwnerID]; !ok {
			owners = append(owners, item.OwnerID)
		}
		byOwner[item.OwnerID] = append(byOwner[item.OwnerID], item)
	}
	var alone []store.DueIngest
	for _, owner := range owners {
		items := byOwner[owner]
		if len(items) == 1 {
			alone = append(alone, items[0])
			continue
		}
		done, claimed, rest := w.owned(ctx, owner, items)
		mu.Lock()
		total.Done += done.Done
		total.Skipped += done.Skipped
		mu.Unlock()
		for _, c := range claimed {
			run(func() Drained { return w.finish(ctx, owner, c.in, c.p, c.loadErr) })
		}
		alone = append(alone, rest...)
	}
	for _, item := range alone {
		run(func() Drained { return w.one(ctx, item) })
	}
	wg.Wait()
	return total
}

// owned claims and reads one owner's items in one pipelined transaction, their statements
// sharing round trips (store.Tx.Together: the claims in one, each item's reads in the next):
// an exchange memory already holds is completed there. It returns how many it completed or
// found taken by another worker, the claimed items left to finish (ingest, or record a failed
// read), each on its own, and — when the transaction failed — all items, to go alone.
func (w *Worker) owned(ctx context.Context, owner uuid.UUID, items []store.DueIngest) (done Drained, claimed []claimedItem, rest []store.DueIngest) {
	now, lease := w.Memory.Now.Now(), orDefault(w.Lease, 2*time.Minute) // the same on every run of a fn
	got := make([]claimedItem, len(items))
	err := w.Memory.Store.WithOwnerPipelined(ctx, owner, func(tx *store.Tx) error {
		fns := make([]func() error, len(items))
		for i, item := range items {
			fns[i] = func() error {
				c := claimedItem{}
				c.in, c.claimErr = tx.Outbox.ClaimIngest(ctx, item.ID, now, lease)
				if c.claimErr == nil {
					c.p, c.loadErr = w.Memory.load(ctx, tx, c.in)
				}
				got[i] = c
				return nil
			}
		}
		return tx.Together(ctx, fns...)
	})
	if err != nil {
		if ctx.Err() == nil {
			zerolog.Ctx(ctx).Warn().Err(err).Stringer("owner_id", owner).Int("items", len(items)).Msg("memory worker: the owner's items could not be taken together; each goes alone")
		}
		return Drained{}, nil, items
	}
	backfill := false
	for _, c := range got {
		switch {
		case c.claimErr != nil:
			done.Skipped++ // claimed by another worker first
		case c.p == nil && c.loadErr == nil:
			done.Done++ // memory held it: completed in load
		default:
			// Every item got the owner's unembedded facts (one read, before any was
			// ingested): the first item embeds them, the others would embed them again.
			if c.p != nil && backfill {
				c.p.backfill = nil
			}
			backfill = backfill || (c.p != nil && len(c.p.backfill) > 0)
			claimed = append(claimed, c)
		}
	}
	return done, claimed, nil
}

// claimedItem is an item owned claimed, with what load read (p) or why it could not.
type claimedItem struct {
	in                store.Ingest
	p                 *pending
	claimErr, loadErr error
}

// one claims, ingests and completes one item, or records why not.
func (w *Worker) one(ctx context.Context, item store.DueIngest) Drained {
	log := zerolog.Ctx(ctx).With().Stringer("owner_id", item.OwnerID).Int64("outbox_id", item.ID).Logger()
	st := w.Memory.Store
	var in store.Ingest
	var p *pending
	claim := func(tx *store.Tx) (err error) {
		in, err = tx.Outbox.ClaimIngest(ctx, item.ID, w.Memory.Now.Now(), orDefault(w.Lease, 2*time.Minute))
		return err
	}
	// The claim and the reads in one transaction; an exchange memory already holds is done
	// there. If the reads fail they undo the claim, so the item is claimed again on its own
	// and read in a transaction of its own: the failure then counts as an attempt.
	claimed := false
	err := st.WithOwner(ctx, item.OwnerID, func(tx *store.Tx) error {
		if err := claim(tx); err != nil {
			return err
		}
		claimed = true
		var err error
		p, err = w.Memory.load(ctx, tx, in)
		return err
	})
	var loadErr error
	if err != nil && claimed && ctx.Err() == nil {
		if err = st.WithOwner(ctx, item.OwnerID, claim); err == nil {
			loadErr = st.WithOwner(ctx, item.OwnerID, func(tx *store.Tx) (err error) {
				p, err = w.Memory.load(ctx, tx, in)
				return err
			})
		}
	}
	if err != nil {
		if !errors.Is(err, store.ErrConflict) && ctx.Err() == nil {
			log.Error().Err(err).Msg("memory worker: claim failed")
		}
		return Drained{Skipped: 1}
	}
	return w.finish(ctx, item.OwnerID, in, p, loadErr)
}

// finish ingests a claimed item that load read (p; nil when load completed it) or could not
// read (loadErr), and records the outcome.
func (w *Worker) finish(ctx context.Context, owner uuid.UUID, in store.Ingest, p *pending, loadErr error) Drained {
	log := zerolog.Ctx(ctx).With().Stringer("owner_id", owner).Int64("outbox_id", in.ID).Logger()
	st := w.Memory.Store
	var got ingested
	var err error
	switch {
	case loadErr != nil:
		err = fmt.Errorf("load turn %s: %w", in.TurnID, loadErr)
	case p != nil:
		got, err = w.Memory.ingest(ctx, owner, p)
	}
	if err == nil {
		log.Debug().Int("chunks", got.chunks).Int("facts", got.facts).Int("facts_embedded", got.embedded).Msg("memory worker: turn ingested")
		return Drained{Done: 1}
	}
	// The outcome is recorded even when ctx is cancelled, on a short context of its own.
	rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if ctx.Err() != nil {
		// Interrupted, not failed: give the attempt back. If even this fails, the lease
		// lapses and the item is claimed again.
		_ = st.WithOwner(rec, owner, func(tx *store.Tx) error { return tx.Outbox.ReleaseIngest(rec, in) })
		return Drained{Skipped: 1}
	}
	if errors.Is(err, store.ErrConflict) {
		return Drained{Skipped: 1} // the lease lapsed and another worker took the item over
	}
	giveUp := in.Attempts >= orDefault(w.MaxAttempts, 5)
	retryIn := w.backoff(in.Attempts)
	ferr := st.WithOwner(rec, owner, func(tx *store.Tx) error {
		return tx.Outbox.FailIngest(rec, in, err.Error(), w.Memory.Now.Now().Add(retryIn), giveUp)
	})
	if ferr != nil {
		log.Error().Err(ferr).Msg("memory worker: recording a failure failed; the item is retried when its lease lapses")
	}
	if giveUp {
		log.Error().Err(err).Int("attempts", in.Attempts).Msg("memory worker: ingestion failed for the last time")
		return Drained{Failed: 1}
	}
	log.Warn().Err(err).Int("attempts", in.Attempts).Dur("retry_in", retryIn).Msg("memory worker: ingestion failed; retrying later")
	return Drained{Retry: 1}
}

func (w *Worker) backoff(attempt int) time.Duration {
	d := orDefault(w.Backoff, 30*time.Second)
	limit := orDefault(w.MaxBackoff, time.Hour)
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return d/2 + rand.N(d/2+1)
}
