package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/db"
)

// Work is the owner's pending work (migrations/00053_work.sql, internal/work): one row per
// item, enqueued in the transaction that made the work, claimed with a lease by whoever runs
// it, deleted when it is done.
type Work struct{ *conn }

// WorkItem is one pending item as its owner reads it.
type WorkItem struct {
	Kind       string
	Key        string
	State      string // queued, running or failed
	Attempts   int
	RunAfter   time.Time
	LeaseUntil *time.Time
	LastError  string
	CreatedAt  time.Time
}

// WorkClaim is a claimed item: how many attempts it has had, this one included, and the
// claim's token, which Finish and Retry name so that a claim voided since (the item
// enqueued again, or rescued by another) changes nothing.
type WorkClaim struct {
	Attempts  int
	ClaimedAt time.Time
}

// Enqueue records an item of kind, due at runAfter, in this transaction; an item already
// pending under that key is queued again for runAfter (its claim, if any, is void).
func (t Work) Enqueue(ctx context.Context, kind, key string, runAfter time.Time) error {
	if err := t.q.EnqueueWork(ctx, db.EnqueueWorkParams{OwnerID: t.ownerID, Kind: kind, Key: key, RunAfter: runAfter}); err != nil {
		return fmt.Errorf("enqueue %s %s: %w", kind, key, err)
	}
	return nil
}

// Claim takes the item if it is due at now (queued past run_after, or running with its
// lease lapsed), holding it until leaseUntil; ok is false when it is not there to take
// (done, taken by another, failed, or not due yet).
func (t Work) Claim(ctx context.Context, kind, key string, now, leaseUntil time.Time) (WorkClaim, bool, error) {
	r, err := t.q.ClaimWork(ctx, db.ClaimWorkParams{OwnerID: t.ownerID, Kind: kind, Key: key, Now: now, LeaseUntil: leaseUntil})
	if errors.Is(err, pgx.ErrNoRows) {
		return WorkClaim{}, false, nil
	}
	if err != nil {
		return WorkClaim{}, false, fmt.Errorf("claim %s %s: %w", kind, key, err)
	}
	return WorkClaim{Attempts: int(r.Attempts), ClaimedAt: r.ClaimedAt}, true, nil
}

// Finish deletes a claimed item that is done; false when its claim was voided since.
func (t Work) Finish(ctx context.Context, kind, key string, c WorkClaim) (bool, error) {
	n, err := t.q.FinishWork(ctx, db.FinishWorkParams{OwnerID: t.ownerID, Kind: kind, Key: key, ClaimedAt: c.ClaimedAt})
	if err != nil {
		return false, fmt.Errorf("finish %s %s: %w", kind, key, err)
	}
	return n == 1, nil
}

// Retry puts a claimed item whose attempt failed back in the queue for runAfter, or marks it
// failed for good (kept for an operator) when failed is set; false when its claim was
// voided since.
func (t Work) Retry(ctx context.Context, kind, key string, c WorkClaim, runAfter time.Time, failed bool, lastError string) (bool, error) {
	n, err := t.q.RetryWork(ctx, db.RetryWorkParams{OwnerID: t.ownerID, Kind: kind, Key: key, ClaimedAt: c.ClaimedAt,
		RunAfter: runAfter, Failed: failed, LastError: lastError})
	if err != nil {
		return false, fmt.Errorf("retry %s %s: %w", kind, key, err)
	}
	return n == 1, nil
}

// Get reads one pending item; ErrNotFound when there is none (done, or never enqueued).
func (t Work) Get(ctx context.Context, kind, key string) (WorkItem, error) {
	r, err := t.q.GetWork(ctx, db.GetWorkParams{OwnerID: t.ownerID, Kind: kind, Key: key})
	if err != nil {
		return WorkItem{}, notFound("work "+kind+" "+key, err)
	}
	return WorkItem{Kind: r.Kind, Key: r.Key, State: r.State, Attempts: int(r.Attempts), RunAfter: r.RunAfter,
		LeaseUntil: r.LeaseUntil, LastError: r.LastError, CreatedAt: r.CreatedAt}, nil
}

// WorkRef names one owner's pending item.
type WorkRef struct {
	OwnerID uuid.UUID
	Kind    string
	Key     string
}

// ScanDueWork lists up to limit items due across owners, oldest first (work.door): those
// queued whose run_after is at or before their kind's time in due (a kind not in due is
// left alone), and those running whose lease lapsed at now (the rescuer's). Each is claimed
// in its owner's own transaction.
func (d *Door) ScanDueWork(ctx context.Context, due map[string]time.Time, now time.Time, limit int) ([]WorkRef, error) {
	kinds, times := make([]string, 0, len(due)), make([]time.Time, 0, len(due))
	var latest time.Time
	for k, t := range due {
		kinds, times = append(kinds, k), append(times, t)
		if t.After(latest) {
			latest = t
		}
	}
	rows, err := db.New(d.conn()).ScanDueWork(ctx, db.ScanDueWorkParams{Kinds: kinds, Due: times, Latest: latest, Now: now, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("scan due work: %w", err)
	}
	out := make([]WorkRef, len(rows))
	for i, r := range rows {
		out[i] = WorkRef(r)
	}
	return out, nil
}
