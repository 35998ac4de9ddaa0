package store

import (
	"context"
	"fmt"
	"time"

	"github.com/stewardhq/steward/db"
)

// Retained names a kind of row that only grows and is deleted once old (docs/ARCHITECTURE.md
// §21): its words are the sweep's and the errors'.
type Retained string

// The rows retention deletes.
const (
	RetainedAudit             Retained = "audit events"
	RetainedWebhookDeliveries Retained = "webhook deliveries"
	RetainedMemoryOutbox      Retained = "finished memory outbox items"
	RetainedJobRuns           Retained = "finished job runs"
)

// Retire deletes, across owners, at most batch of the oldest rows of what older than before
// (audit events older than 30 days at the least, whatever before says; a schedule's newest
// run is kept) and returns how many went: one short statement through a database function
// only the door may call (migrations/00040_retention.sql).
func (d *Door) Retire(ctx context.Context, what Retained, before time.Time, batch int) (int64, error) {
	q := db.New(d.conn())
	var n int64
	var err error
	switch what {
	case RetainedAudit:
		n, err = q.RetireAudit(ctx, db.RetireAuditParams{Before: before, Batch: int32(batch)})
	case RetainedWebhookDeliveries:
		n, err = q.RetireWebhookDeliveries(ctx, db.RetireWebhookDeliveriesParams{Before: before, Batch: int32(batch)})
	case RetainedMemoryOutbox:
		n, err = q.RetireMemoryOutbox(ctx, db.RetireMemoryOutboxParams{Before: before, Batch: int32(batch)})
	case RetainedJobRuns:
		n, err = q.RetireJobRuns(ctx, db.RetireJobRunsParams{Before: before, Batch: int32(batch)})
	default:
		return 0, fmt.Errorf("retire: unknown kind %q", what)
	}
	if err != nil {
		return 0, fmt.Errorf("retire %s: %w", what, err)
	}
	return n, nil
}
