package agent

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// cancelPoll is how often a turn waiting on its model looks whether its owner asked it to
// stop (docs/ARCHITECTURE.md §2, "Cancelling a turn").
const cancelPoll = time.Second

// watchCancel returns the context for one model call: it is cancelled, with errCancelled as
// its cause, when the owner asks the turn to stop while the call is in flight (Runner.Cancel
// stores the request on the turn, whichever process serves it), so a long model call is
// abandoned instead of awaited; with errStopping when the process shuts down (Runner.Stop).
// The same look renews the turn's lease, so a turn waiting on a slow model is not taken for
// one whose process died. A watch reads the turn every cancelPoll in its own short
// transaction and touches nothing of the run; stop ends it.
func (r *Runner) watchCancel(ctx context.Context, x *run) (watched context.Context, stop func()) {
	if x.turn.ID == uuid.Nil {
		return ctx, func() {} // no turn (Runner.Read)
	}
	watched, cancel := context.WithCancelCause(ctx)
	owner, id := x.turn.OwnerID, x.turn.ID
	// The turn's lease as the run last knew it: renewed with the first look once a third of
	// it is gone (the sweep fails a running turn whose lease lapsed, docs/ARCHITECTURE.md §2).
	var leased time.Time
	if x.turn.LeaseUntil != nil {
		leased = *x.turn.LeaseUntil
	}
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(cancelPoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-watched.Done():
				return
			case <-r.stopping:
				cancel(errStopping)
				return
			case <-tick.C:
			}
			var asked bool
			now, renew := r.Now.Now(), false
			if renew = leased.Sub(now) < r.lease()*2/3; renew {
				leased = now.Add(r.lease())
			}
			err := r.Store.InOwner(watched, owner, func(tx Tx) error {
				var err error
				if renew {
					asked, err = tx.Turns.RenewLease(watched, id, now, r.lease())
				} else {
					asked, err = tx.Turns.CancelRequested(watched, id)
				}
				return err
			})
			if err == nil && asked {
				cancel(errCancelled)
				return
			}
		}
	}()
	return watched, func() {
		close(done)
		cancel(nil)
	}
}
