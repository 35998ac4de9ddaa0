// Package sweep ends what a dead process or an absent owner left behind: suspended turns past
// their expiry become expired, turns and job runs still running long after any process could
// be working on them, or whose lease lapsed, are failed, and a resuming turn whose confirm
// died (its lease lapsed) is recovered. The scheduler runs it as one of its drains (on Lambda
// from the scheduled tick, under `steward serve` from the minute ticker). Every decision is
// made by the injected clock, passed into the SQL (docs/ARCHITECTURE.md §9). It also keeps
// the rows that only grow within their retention (retention.go, docs/ARCHITECTURE.md §21).
package sweep

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/store"

	"github.com/stewardhq/steward/internal/steward"
)

// Stale is how long a turn or job run may stay running before it is taken for dead: twice
// the longest function timeout (15 minutes).
const Stale = 30 * time.Minute

// Owners finds the owners with something to sweep: a suspended turn or pending household vote
// past its expiry at now, a turn or job run running since before staleBefore. *store.Door
// implements it (one cross-owner read).
type Owners interface {
	ScanSweepOwners(ctx context.Context, now, staleBefore time.Time) ([]uuid.UUID, error)
}

// Held finds, across owners, the running and resuming turns held by processes of one host
// whose leases have not lapsed at now. *store.Door implements it.
type Held interface {
	ScanHeldTurns(ctx context.Context, prefix string, now time.Time) ([]store.HeldTurns, error)
}

// Sweeper sweeps the turns and job runs of the owners that have something to sweep, each
// owner in its own transaction; an owner with nothing costs none.
type Sweeper struct {
	Store  *store.Store
	Owners Owners
	// Now is the clock; nil means time.Now.
	Now steward.Clock
	// Stale overrides the package's Stale when positive.
	Stale time.Duration
	// Recover takes back a resuming turn whose lease lapsed (the confirm that claimed it
	// died): agent.Runner.Recover. It runs after the owner's transaction; nil leaves such
	// turns to the owner's next confirm.
	Recover func(ctx context.Context, ownerID, turnID uuid.UUID) error
	// Retention is how long old rows are kept; Retirer (*store.Door) deletes them. A nil
	// Retirer, or a zero age, keeps them.
	Retention Retention
	Retirer   Retirer
	// Process is this process's holder name (Process: `steward serve`); Held finds the turns
	// held on its host. With both set, a sweep first ends the leases of turns held by a
	// process of this host that is gone (killed, perhaps restarted as this one), so they are
	// failed or recovered now, not when their leases lapse. "" (Lambda): leases alone.
	Process string
	Held    Held
}

// Swept counts what one Sweep changed, across owners.
type Swept struct {
	Expired int64 // suspended turns past their expiry
	// HouseholdExpired counts the household votes still pending on those turns, now expired.
	HouseholdExpired int64
	StaleTurns       int64   // running turns failed as interrupted
	StaleRuns        int64   // running job runs failed as interrupted
	Recovered        int64   // resuming turns whose confirm died, taken back
	Retired          Retired // old rows retention deleted
}

// Drain sweeps once; it makes a Sweeper an autonomy.Drainer.
func (s *Sweeper) Drain(ctx context.Context) error {
	_, err := s.Sweep(ctx)
	return err
}

// Sweep expires every owner's suspended turns whose expiry has passed, and fails turns and
// job runs running for longer than Stale. One door-side query finds the owners with any of
// these; only they are swept. It stops at the first error.
func (s *Sweeper) Sweep(ctx context.Context) (Swept, error) {
	var total Swept
	var err error
	now := s.Now.Now()
	stale := Stale
	if s.Stale > 0 {
		stale = s.Stale
	}
	if total.Retired, err = s.retire(ctx, now); err != nil {
		return total, err
	}
	if err := s.releaseGone(ctx, now); err != nil {
		return total, err
	}
	owners, err := s.Owners.ScanSweepOwners(ctx, now, now.Add(-stale))
	if err != nil {
		return total, err
	}
	for _, owner := range owners {
		var swept Swept
		var lapsed []uuid.UUID
		err := s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
			var err error
			if s.Recover != nil {
				if lapsed, err = tx.Sweep.LapsedResuming(ctx, now); err != nil {
					return err
				}
			}
			if swept.Expired, err = tx.Sweep.Expire(ctx, now); err != nil {
				return err
			}
			// Household requests follow their suspension: expired in the members' inboxes.
			if swept.HouseholdExpired, err = tx.Household.Expire(ctx, now); err != nil {
				return err
			}
			if swept.StaleTurns, err = tx.Sweep.FailStale(ctx, now, now.Add(-stale)); err != nil {
				return err
			}
			swept.StaleRuns, err = tx.Runs.FailStale(ctx, now.Add(-stale))
			return err
		})
		if err != nil {
			return total, err
		}
		for _, id := range lapsed {
			if err := s.Recover(ctx, owner, id); err != nil {
				return total, fmt.Errorf("recover turn %s: %w", id, err)
			}
			swept.Recovered++
		}
		total.Expired += swept.Expired
		total.HouseholdExpired += swept.HouseholdExpired
		total.StaleTurns += swept.StaleTurns
		total.StaleRuns += swept.StaleRuns
		total.Recovered += swept.Recovered
	}
	return total, nil
}

// releaseGone ends the leases of the turns held by processes of this host that are gone.
func (s *Sweeper) releaseGone(ctx context.Context, now time.Time) error {
	prefix := hostOf(s.Process)
	if prefix == "" || s.Held == nil {
		return nil
	}
	held, err := s.Held.ScanHeldTurns(ctx, prefix, now)
	if err != nil {
		return err
	}
	for _, h := range held {
		if h.Holder == s.Process || !gone(h.Holder) {
			continue
		}
		err := s.Store.WithOwner(ctx, h.OwnerID, func(tx *store.Tx) error {
			_, err := tx.Sweep.ReleaseHolder(ctx, h.Holder, now)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
