package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/steward"
)

// Turns that outlive a deadline (docs/ARCHITECTURE.md §2, §10). On Lambda an invocation has a
// deadline (ctx's); a turn that needs more model calls than fit stops between steps, before
// a model call, when less than ContinueMargin is left: its state is saved as continuing and
// Continue hands it to a fresh invocation (the run queue's worker), which claims it exactly
// once (ContinueTurn) and goes on in the same turn and trace. A turn makes at least one
// model call per invocation before it may stop, so a margin longer than the function's
// timeout still finishes. Under `steward serve` requests have no deadline: nothing changes.

// continueMargin is the time a turn keeps in hand before its deadline.
func (r *Runner) continueMargin() time.Duration {
	if r.ContinueMargin > 0 {
		return r.ContinueMargin
	}
	return 30 * time.Second
}

// nearDeadline reports whether ctx's deadline is closer than the margin and the turn can
// continue elsewhere. The deadline is the runtime's wall clock, so it is measured against the
// wall clock, not Runner.Now (which decides expiry and leases, docs/ARCHITECTURE.md §9).
func (r *Runner) nearDeadline(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return ok && r.hooks.Continue != nil && time.Until(deadline) < r.continueMargin()
}

// continueLater saves x's turn as continuing with its state, tells the client, and, after
// the commit, hands the turn on with Continue. A failed hand-off leaves the turn continuing
// and its work item queued: the work spine's drain takes it a few minutes later.
func (r *Runner) continueLater(ctx context.Context, x *run) (steward.View, error) {
	x.turn.Status, x.turn.State, x.turn.ExpiresAt = steward.StatusContinuing, x.st, nil
	r.account(x)
	err := r.saveEnd(ctx, x, func(ctx context.Context, tx Tx) error {
		x.record("turn_continuing", map[string]any{"iterations": x.st.Iterations})
		if err := x.save(ctx, tx); err != nil {
			return err
		}
		return enqueueContinuing(ctx, tx, x.turn.ID, r.Now.Now())
	})
	if err != nil {
		return r.failUnsaved(ctx, x, fmt.Errorf("save continuing turn %s: %w", x.turn.ID, err))
	}
	v := steward.ViewOf(x.turn)
	x.send(StreamEvent{Type: "continuing", Turn: &v})
	if r.hooks.Continue == nil || r.shuttingDown() {
		// Stopped by a shutdown (Runner.Stop): the next process's drain continues it.
		zerolog.Ctx(ctx).Info().Stringer("turn_id", x.turn.ID).Msg("turn saved continuing for the next process")
		return v, nil
	}
	if err := r.hooks.Continue(ctx, x.turn.OwnerID, x.turn.ID); err != nil {
		logError(ctx, err, "continuing turn not handed on; the scheduler's drain will continue it")
	} else {
		zerolog.Ctx(ctx).Info().Stringer("turn_id", x.turn.ID).Int("iterations", x.st.Iterations).Msg("turn continues in another invocation")
	}
	return v, nil
}

// ContinueKind is the work spine's kind of a turn saved continuing (internal/work): its row
// is enqueued with the save, keyed by the turn's id, and its worker is ContinueTurn.
const ContinueKind = "turn_continue"

// enqueueContinuing puts a turn saved continuing on the work spine in its save's
// transaction (a deferred write: no round trip of its own), so that the spine's drain
// continues it if the hand-off is lost. A Tx without the spine (a test's) enqueues nothing.
func enqueueContinuing(ctx context.Context, tx Tx, turnID uuid.UUID, now time.Time) error {
	if tx.Work == nil {
		return nil
	}
	return tx.Work.Enqueue(ctx, ContinueKind, turnID.String(), now)
}

// ContinueTurn claims a continuing turn (exactly once: a turn another invocation already
// took, or that is no longer continuing, is a conflict and nothing runs) and runs its loop
// on from where it stopped.
func (r *Runner) ContinueTurn(ctx context.Context, ownerID, turnID uuid.UUID) (steward.View, error) {
	x := &run{turn: steward.Turn{OwnerID: ownerID}}
	err := r.inOwner(ctx, x, func(tx Tx) error {
		claimed, err := tx.Turns.ClaimContinuing(ctx, turnID, r.Now.Now(), r.lease())
		if err != nil {
			return err
		}
		if claimed.State == nil {
			return fmt.Errorf("continuing turn %s has no state", turnID)
		}
		x.turn, x.st = claimed, claimed.State
		x.reg = r.ownerRegistry(ctx, tx)
		r.adoptModel(x)
		stored, err := tx.Conversations.Messages(ctx, x.turn.ConversationID)
		if err != nil {
			return err
		}
		conv, err := tx.Conversations.Get(ctx, x.turn.ConversationID)
		if err != nil {
			return err
		}
		r.loadHistory(x, stored, conv.Summary, x.st.HistorySeq)
		x.record("turn_continued", map[string]any{"iterations": x.st.Iterations})
		return x.flush(ctx, tx)
	})
	if c := steward.ErrorCode(err); c == steward.CodeNotFound || c == steward.CodeConflict {
		return steward.View{}, steward.Errorf(steward.CodeConflict, "turn %s is not continuing (another invocation took it, or it ended)", turnID)
	}
	if err != nil {
		return steward.View{}, fmt.Errorf("claim continuing turn %s: %w", turnID, err)
	}
	zerolog.Ctx(ctx).UpdateContext(func(c zerolog.Context) zerolog.Context { return c.Stringer("turn_id", turnID) })
	v, err := r.loop(ctx, x)
	if err == nil && v.Status != steward.StatusContinuing {
		for _, ended := range r.hooks.Ended {
			ended(ctx, ownerID, v)
		}
	}
	return v, err
}
