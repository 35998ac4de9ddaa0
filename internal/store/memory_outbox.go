package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/db"
)

// The memory outbox: finished turns waiting to be ingested into memory. The Door lists due
// items across owners (door.go); a worker claims each one with a lease inside its owner's
// transaction, and completes, fails or releases it. The claim counts the attempt, and the
// attempt count is the lease's fencing token: a worker whose lease lapsed and was taken over
// can no longer complete, fail or release the item.

// DueIngest is an outbox item due for ingestion.
type DueIngest struct {
	ID      int64
	OwnerID uuid.UUID
}

// Ingest is a claimed outbox item.
type Ingest struct {
	ID             int64
	TurnID         uuid.UUID
	ConversationID uuid.UUID
	// Attempts counts this claim; it fences the lease.
	Attempts int
}

// IngestBacklog counts outbox items: pending (waiting, retrying or leased) and failed (gave
// up after their last attempt).
type IngestBacklog struct {
	Pending int64 `json:"pending"`
	Failed  int64 `json:"failed"`
	// OldestPending is the age of the oldest pending item (0 when none).
	OldestPending time.Duration `json:"oldest_pending"`
	// LastError is the error of the most recently failed item.
	LastError string `json:"last_error,omitempty"`
}

// FailedIngest is an outbox item that gave up.
type FailedIngest struct {
	ID             int64     `json:"id"`
	TurnID         uuid.UUID `json:"turn_id"`
	ConversationID uuid.UUID `json:"conversation_id"`
	Attempts       int       `json:"attempts"`
	LastError      string    `json:"last_error"`
	FailedAt       time.Time `json:"failed_at"`
	CreatedAt      time.Time `json:"created_at"`
}

// ClaimIngest leases an outbox item due at now until now+lease and counts the attempt. It is
// ErrConflict when the item is not due (done, failed, waiting for a retry, or leased by
// another worker). now is the caller's clock.
func (t Outbox) ClaimIngest(ctx context.Context, id int64, now time.Time, lease time.Duration) (Ingest, error) {
	r, err := t.q.ClaimIngest(ctx, db.ClaimIngestParams{OwnerID: t.ownerID, ID: id, Now: now, LockedUntil: now.Add(lease)})
	if errors.Is(err, pgx.ErrNoRows) {
		return Ingest{}, fmt.Errorf("claim ingest %d: %w", id, ErrConflict)
	}
	if err != nil {
		return Ingest{}, fmt.Errorf("claim ingest %d: %w", id, err)
	}
	return Ingest{ID: r.ID, TurnID: r.TurnID, ConversationID: r.ConversationID, Attempts: int(r.Attempts)}, nil
}

// CompleteIngest marks a claimed item done; ErrConflict when the claim was lost.
func (t Outbox) CompleteIngest(ctx context.Context, in Ingest) error {
	n, err := t.q.CompleteIngest(ctx, db.CompleteIngestParams{OwnerID: t.ownerID, ID: in.ID, Attempts: int32(in.Attempts)})
	return fenced("complete ingest", in, n, err)
}

// MaxIngestError caps the error text kept on an outbox item.
const MaxIngestError = 500

// FailIngest records a failed attempt: the item is due again at retryAt, or, with giveUp,
// never again (it stays visible as failed). ErrConflict when the claim was lost.
func (t Outbox) FailIngest(ctx context.Context, in Ingest, msg string, retryAt time.Time, giveUp bool) error {
	n, err := t.q.FailIngest(ctx, db.FailIngestParams{OwnerID: t.ownerID, ID: in.ID, Attempts: int32(in.Attempts),
		LastError: truncate(msg, MaxIngestError), RetryAt: retryAt, GiveUp: giveUp})
	return fenced("fail ingest", in, n, err)
}

// ReleaseIngest gives an interrupted attempt back: the item is due again at once and the
// attempt does not count. ErrConflict when the claim was lost.
func (t Outbox) ReleaseIngest(ctx context.Context, in Ingest) error {
	n, err := t.q.ReleaseIngest(ctx, db.ReleaseIngestParams{OwnerID: t.ownerID, ID: in.ID, Attempts: int32(in.Attempts)})
	return fenced("release ingest", in, n, err)
}

// IngestBacklog counts the owner's outbox items.
func (t Outbox) IngestBacklog(ctx context.Context) (IngestBacklog, error) {
	r, err := t.q.OwnerIngestBacklog(ctx, t.ownerID)
	if err != nil {
		return IngestBacklog{}, fmt.Errorf("ingest backlog: %w", err)
	}
	return IngestBacklog{Pending: r.Pending, Failed: r.Failed, LastError: r.LastError,
		OldestPending: time.Duration(r.OldestPendingSeconds * float64(time.Second))}, nil
}

// FailedIngests lists the owner's failed outbox items, most recent first (for the activity
// feed).
func (t Outbox) FailedIngests(ctx context.Context, limit int) ([]FailedIngest, error) {
	rows, err := t.q.FailedIngests(ctx, db.FailedIngestsParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("failed ingests: %w", err)
	}
	out := make([]FailedIngest, len(rows))
	for i, r := range rows {
		out[i] = FailedIngest{ID: r.ID, TurnID: r.TurnID, ConversationID: r.ConversationID, Attempts: int(r.Attempts),
			LastError: r.LastError, CreatedAt: r.CreatedAt}
		if r.FailedAt != nil {
			out[i].FailedAt = *r.FailedAt
		}
	}
	return out, nil
}

// fenced maps "no row changed" to ErrConflict: the claim was lost.
func fenced(what string, in Ingest, n int64, err error) error {
	if err != nil {
		return fmt.Errorf("%s %d: %w", what, in.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("%s %d (attempt %d): claim lost: %w", what, in.ID, in.Attempts, ErrConflict)
	}
	return nil
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return strings.TrimSpace(s) + "…"
}
