// Package undo is the undo window (docs/ARCHITECTURE.md §2): a succeeded
// database-local write journaled its inverse when it ran, and Service.Undo applies that
// inverse once, within the window, in one owner transaction, recording an "undone" event in
// the turn's audit story. Writes with effects outside the database have no inverse and are
// refused. The faces (internal/httpapi, internal/webapp) call it; it opens the transaction.
package undo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Service undoes journaled writes. It is safe for concurrent use.
type Service struct {
	Store *store.Store
	// Window is how long after a write ran it can be undone; zero means
	// steward.DefaultUndoWindow (STEWARD_UNDO_WINDOW).
	Window time.Duration
	// Now is the clock (app.App.Now); nil means time.Now.
	Now steward.Clock
}

func (s *Service) window() time.Duration {
	if s.Window > 0 {
		return s.Window
	}
	return steward.DefaultUndoWindow
}

// Undoable reports whether the call can be undone now: it succeeded, it has an inverse,
// it was not undone yet and it ran within the window.
func (s *Service) Undoable(c steward.CallRecord) bool {
	return c.Status == steward.CallSucceeded && c.Inverse != nil && c.UndoneAt == nil &&
		c.ExecutedAt != nil && !c.ExecutedAt.Before(s.Now.Now().Add(-s.window()))
}

// Undo reverts call callID of turn turnID exactly once, by (who asked: "api", "web", …).
// An unknown turn or call is CodeNotFound; a call that did not succeed or cannot be undone
// is CodeInvalid; one already undone, or whose window passed, or whose effect changed since
// (the task or fact it touched is gone) is CodeConflict. Nothing changes on an error.
func (s *Service) Undo(ctx context.Context, ownerID, turnID uuid.UUID, callID, by string) (steward.Undone, error) {
	var out steward.Undone
	now := s.Now.Now()
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		c, err := tx.Journal.MarkUndone(ctx, turnID, callID, now.Add(-s.window()), now, by)
		if errors.Is(err, store.ErrConflict) {
			return s.refusal(ctx, tx, turnID, callID, now)
		}
		if err != nil {
			return err
		}
		if err := apply(ctx, tx, *c.Inverse); err != nil {
			return err
		}
		seq, err := tx.Journal.NextSeq(ctx, turnID)
		if err != nil {
			return err
		}
		data, err := json.Marshal(map[string]any{"call_id": callID, "tool": c.Tool, "op": c.Inverse.Op, "by": by, "at": now})
		if err != nil {
			return err
		}
		if err := tx.Journal.AppendEvents(ctx, &turnID, []steward.NewEvent{{Seq: seq, Kind: "undone", Data: data}}); err != nil {
			return err
		}
		out = steward.Undone{TurnID: turnID, CallID: callID, Tool: c.Tool, Op: c.Inverse.Op, UndoneAt: now, UndoneBy: by}
		return nil
	})
	return out, err
}

// refusal says why a call could not be marked undone.
func (s *Service) refusal(ctx context.Context, tx *store.Tx, turnID uuid.UUID, callID string, now time.Time) error {
	c, err := tx.Journal.Call(ctx, turnID, callID)
	if errors.Is(err, store.ErrNotFound) {
		return steward.Errorf(steward.CodeNotFound, "turn %s has no call %q", turnID, callID)
	}
	if err != nil {
		return err
	}
	switch {
	case c.UndoneAt != nil:
		return steward.Errorf(steward.CodeConflict, "call %s (%s) was already undone at %s by %s", callID, c.Tool, c.UndoneAt.UTC().Format(time.RFC3339), c.UndoneBy)
	case c.Status != steward.CallSucceeded:
		return steward.Errorf(steward.CodeInvalid, "call %s (%s) is %s: only a call that succeeded can be undone", callID, c.Tool, c.Status)
	case c.Inverse == nil:
		return steward.Errorf(steward.CodeInvalid, "call %s (%s) can't be undone: its effect is outside Steward's database (or it changed nothing)", callID, c.Tool)
	default:
		return steward.Errorf(steward.CodeConflict, "the undo window of call %s (%s) has passed: it ran at %s, and a write can be undone for %s",
			callID, c.Tool, c.ExecutedAt.UTC().Format(time.RFC3339), s.window())
	}
}

// apply performs an inverse in tx. A row it needs that is gone (the task deleted since)
// or a fact remembered again since is a conflict: the undo changes nothing.
func apply(ctx context.Context, tx *store.Tx, inv steward.Inverse) error {
	var err error
	switch inv.Op {
	case steward.UndoDeleteTask:
		err = tx.Tasks.DeleteTask(ctx, inv.ID)
	case steward.UndoReopenTask:
		err = tx.Tasks.ReopenTask(ctx, inv.ID)
	case steward.UndoForgetFact:
		_, err = tx.Tasks.ForgetFact(ctx, inv.ID)
	case steward.UndoRestoreFact:
		err = tx.Tasks.RestoreFact(ctx, inv.ID)
	case steward.UndoDeleteTransaction:
		err = tx.Ledger.DeleteTransaction(ctx, inv.ID)
	case steward.UndoDeleteDocument:
		err = tx.Documents.Delete(ctx, inv.ID)
	case steward.UndoRecategorize:
		for _, m := range inv.Moves {
			acc, aerr := tx.Ledger.Account(ctx, m.Category)
			if aerr != nil {
				err = aerr
				break
			}
			if _, err = tx.Ledger.Categorize(ctx, m.Transactions, acc.ID); err != nil {
				break
			}
		}
	default:
		return fmt.Errorf("undo: unknown inverse %q", inv.Op)
	}
	switch {
	case errors.Is(err, steward.ErrNotFound):
		return steward.Errorf(steward.CodeConflict, "can't undo %s: what it changed has changed since (%v); nothing was undone", inv.Op, err)
	case errors.Is(err, steward.ErrConflict):
		return steward.Errorf(steward.CodeConflict, "can't undo %s: the same fact was remembered again since; nothing was undone", inv.Op)
	}
	return err
}
