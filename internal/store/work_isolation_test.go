package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/stewardhq/steward/internal/store"
)

// workKey is the key of the work item seed enqueues for an owner.
func workKey(name string) string { return "item of " + name }

// seedWork gives an owner a pending work item (migrations/00053_work.sql).
func seedWork(ctx context.Context, tx *Tx, name string) error {
	return tx.Work.Enqueue(ctx, "isolation_probe", workKey(name), time.Now().Add(-time.Minute))
}

// probeWork: bob reads, claims, finishes and retries none of alice's work items, and his
// enqueue under her key makes a row of his own.
func probeWork(t *testing.T, ctx context.Context, s *Store, a, b seeded) {
	covers("Work.Enqueue", "Work.Claim", "Work.Finish", "Work.Retry", "Work.Get")
	key, now := workKey(a.owner.Name), time.Now()
	err := s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		if _, err := tx.Work.Get(ctx, "isolation_probe", key); !errors.Is(err, ErrNotFound) {
			t.Errorf("bob's Get of alice's item: %v, want not found", err)
		}
		if c, ok, err := tx.Work.Claim(ctx, "isolation_probe", key, now, now.Add(time.Hour)); ok || err != nil {
			t.Errorf("bob's Claim of alice's item: %+v %v %v, want nothing to claim", c, ok, err)
		}
		stolen := WorkClaim{Attempts: 1, ClaimedAt: now}
		if ok, err := tx.Work.Finish(ctx, "isolation_probe", key, stolen); ok || err != nil {
			t.Errorf("bob's Finish of alice's item: %v %v", ok, err)
		}
		if ok, err := tx.Work.Retry(ctx, "isolation_probe", key, stolen, now, true, "bob"); ok || err != nil {
			t.Errorf("bob's Retry of alice's item: %v %v", ok, err)
		}
		return tx.Work.Enqueue(ctx, "isolation_probe", key, now.Add(time.Hour))
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		w, err := tx.Work.Get(ctx, "isolation_probe", key)
		if err != nil || w.State != "queued" || w.Attempts != 0 || w.LastError != "" || w.RunAfter.After(now) {
			t.Errorf("alice's item after bob: %+v, %v", w, err)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
