package sweep

import (
	"context"
	"time"

	"github.com/stewardhq/steward/internal/store"
)

// Retention is how long the sweep keeps the rows that only grow (docs/ARCHITECTURE.md §21;
// STEWARD_RETAIN_* in docs/CONFIGURATION.md). A zero age keeps that kind forever.
type Retention struct {
	Audit             time.Duration // audit events (never less than 30 days: the database refuses younger)
	WebhookDeliveries time.Duration // webhook deliveries, their bodies with them
	MemoryOutbox      time.Duration // memory outbox items done or failed
	JobRuns           time.Duration // finished job runs (a schedule's newest is kept)
	// Batch is the most rows one statement deletes (RetireBatch when zero); Batches the most
	// statements per kind in one sweep (RetireBatches when zero). Each statement is its own
	// short transaction: a sweep never holds a lock for long, and a backlog is worked off over
	// the following sweeps.
	Batch, Batches int
}

// RetireBatch and RetireBatches bound one sweep's retention: at most 20 × 1,000 rows per kind.
const (
	RetireBatch   = 1000
	RetireBatches = 20
)

// Retired counts the rows one sweep's retention deleted, by kind.
type Retired struct{ Audit, WebhookDeliveries, MemoryOutbox, JobRuns int64 }

// Retirer deletes old rows across owners, one bounded batch per call: *store.Door.
type Retirer interface {
	Retire(ctx context.Context, what store.Retained, before time.Time, batch int) (int64, error)
}

// retire deletes, for each kind with a retention, the rows older than it at now, in batches,
// until a batch comes back short or Batches were run.
func (s *Sweeper) retire(ctx context.Context, now time.Time) (Retired, error) {
	var out Retired
	if s.Retirer == nil {
		return out, nil
	}
	r := s.Retention
	batch, batches := r.Batch, r.Batches
	if batch <= 0 {
		batch = RetireBatch
	}
	if batches <= 0 {
		batches = RetireBatches
	}
	for _, k := range []struct {
		what  store.Retained
		age   time.Duration
		count *int64
	}{{store.RetainedAudit, r.Audit, &out.Audit}, {store.RetainedWebhookDeliveries, r.WebhookDeliveries, &out.WebhookDeliveries},
		{store.RetainedMemoryOutbox, r.MemoryOutbox, &out.MemoryOutbox}, {store.RetainedJobRuns, r.JobRuns, &out.JobRuns}} {
		if k.age <= 0 {
			continue
		}
		for range batches {
			n, err := s.Retirer.Retire(ctx, k.what, now.Add(-k.age), batch)
			if err != nil {
				return out, err
			}
			*k.count += n
			if n < int64(batch) {
				break
			}
		}
	}
	return out, nil
}
