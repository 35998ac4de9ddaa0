package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
)

// Cancel is the owner's request that a turn stop (docs/ARCHITECTURE.md §2, "Cancelling a
// turn"). The request is stored on the turn in one transaction, so it reaches the process
// running it wherever that is:
//
//   - a running or resuming turn keeps running until its loop's next step boundary, where it
//     ends cancelled (check); a model call in flight is abandoned (watchCancel), a write
//     already under way finishes first, and the view says cancel_requested;
//   - a suspended or continuing turn — no process runs it — is cancelled at once: its pending
//     calls are journaled denied, its household votes voided, and no confirm, one-tap link or
//     Telegram button can run them any more (the claims require no request);
//   - an already cancelled turn is answered as it is (idempotent); any other ended turn is a
//     conflict, and another owner's or an unknown turn is not found.
func (r *Runner) Cancel(ctx context.Context, ownerID, turnID uuid.UUID) (steward.View, error) {
	var v steward.View
	err := r.Store.InOwner(ctx, ownerID, func(tx Tx) error {
		before, err := tx.Turns.Get(ctx, turnID)
		if err != nil {
			return err
		}
		if before.Status == steward.StatusCancelled {
			v = steward.ViewOf(before)
			return nil
		}
		if before.Status.Ended() {
			return steward.Errorf(steward.CodeConflict, "turn %s is already %s: there is nothing to cancel", turnID, before.Status)
		}
		t, err := tx.Turns.Cancel(ctx, turnID, r.Now.Now())
		if steward.ErrorCode(err) == steward.CodeNotFound {
			// It ended between the read and the update (the loop's own transaction).
			return steward.Errorf(steward.CodeConflict, "turn %s ended before it could be cancelled: there is nothing to cancel", turnID)
		}
		if err != nil {
			return err
		}
		v = steward.ViewOf(t)
		if t.Status != steward.StatusCancelled {
			return nil // running: its loop ends it at the next step boundary and writes its story
		}
		return r.cancelled(ctx, tx, before)
	})
	if steward.ErrorCode(err) == steward.CodeNotFound {
		return steward.View{}, steward.Errorf(steward.CodeNotFound, "turn not found")
	}
	var e *steward.Error
	if errors.As(err, &e) {
		return steward.View{}, e
	}
	if err != nil {
		return steward.View{}, fmt.Errorf("cancel turn %s: %w", turnID, err)
	}
	return v, nil
}

// cancelled writes the story of a turn Cancel ended at once (before is the turn as it was):
// its pending calls journaled denied by the owner, the household's votes on them voided, and
// the turn_cancelled event.
func (r *Runner) cancelled(ctx context.Context, tx Tx, before steward.Turn) error {
	seq := 0
	if st := before.State; st != nil {
		seq = st.TraceSeq
		if before.Status == steward.StatusSuspended {
			res := []byte(`{"status":"not done","refused_by":"owner","message":"the turn was cancelled"}`)
			for _, p := range st.Pending {
				if err := tx.Journal.UpdateCall(ctx, steward.CallUpdate{TurnID: before.ID, CallID: p.CallID,
					From: steward.CallPending, To: steward.CallDenied, Result: res, DecidedBy: "owner"}); err != nil {
					return err
				}
			}
		}
	}
	if r.hooks.Hold != nil {
		if err := tx.Household.Close(ctx, before.ID); err != nil {
			return err
		}
	}
	return tx.Journal.AppendEvents(ctx, &before.ID, []steward.NewEvent{{Seq: seq + 1, Kind: "turn_cancelled",
		Data: []byte(fmt.Sprintf(`{"error":%q,"from":%q}`, steward.CancelledNote, before.Status))}})
}
