// Package household is household approvals (docs/API.md, "Household approvals";
// migrations/00021_households.sql; docs/ARCHITECTURE.md §5). The operator groups owners of
// one deployment into a household and gives it policies: a tool, an optional minimum amount
// and the other members who must also approve. When a member's turn suspends on a matching
// call, the call is filed in the named members' inboxes (Suspended, in the transaction that
// saves the turn). The owner's confirm then records the owner's vote and keeps the turn
// suspended until every named member approved (Hold, in the confirm's transaction, before
// the claim); one deny by anyone ends it. A member decides in their own transaction (their
// own rows, under row-level security); when that vote completes the request, the service
// resumes the requester's turn under the requester's id through the runner's ConfirmWith — the
// same exactly-once claim — never in the member's context.
package household

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
)

// Hooks are the household's side of a turn, given to the runner at its construction
// (agent.Hooks): Suspended files a suspended turn's matching calls, Hold holds the owner's
// confirm until the members voted. They call nothing back (docs/ARCHITECTURE.md §7).
type Hooks struct {
	// Tools reads a call's amount (a policy's minimum); nil files calls without one.
	Tools *tools.Registry
	// Now is the clock (nil: the system clock).
	Now steward.Clock
}

// Service lists a member's inbox and takes the members' votes, resuming the requester's turn
// through Confirmer when a vote completes a request.
type Service struct {
	Store     *store.Store
	Confirmer agent.Confirmer
	// Now is the clock (nil: the system clock).
	Now steward.Clock
}

// InboxLimit caps the requests one inbox read returns.
const InboxLimit = 100

// Suspended is an agent.Hooks.Suspended: it files the turn's pending calls for the
// household's approval when a policy of the owner's household matches one of them. It
// stores no notification.
func (h Hooks) Suspended(ctx context.Context, tx agent.Tx, turn steward.Turn) (notify bool, err error) {
	if turn.State == nil || len(turn.State.Pending) == 0 || turn.ExpiresAt == nil {
		return false, nil
	}
	calls := make([]steward.HouseholdCall, len(turn.State.Pending))
	for i, p := range turn.State.Pending {
		c := steward.HouseholdCall{CallID: p.CallID, ArgsHash: p.ArgsHash, Tool: p.Tool, Summary: steward.ArgsSummary(p.Args)}
		if m := p.Estimate; m != nil { // the tool's own estimate (an order's notional, §20)
			minor := m.Minor
			c.AmountMinor, c.Currency, c.Amount = &minor, m.Currency, steward.FormatMoney(m.Minor, m.Currency)
		} else if h.Tools != nil {
			if tool, ok := h.Tools.Get(p.Tool); ok && tool.Money != nil {
				// An unreadable amount stays nil, and a policy's minimum then matches.
				if m, err := tool.MoneyIn(p.Args); err == nil && m != nil {
					minor := m.Minor
					c.AmountMinor, c.Currency, c.Amount = &minor, m.Currency, steward.FormatMoney(m.Minor, m.Currency)
				}
			}
		}
		calls[i] = c
	}
	return false, tx.Household.File(ctx, turn.ID, calls, *turn.ExpiresAt)
}

// onBehalf marks a confirm the service makes for the requester after a member's vote: it
// records no vote of the owner's.
type onBehalf struct{}

// Hold is agent.Hooks.Hold. On the owner's own confirm it records the owner's votes; while a
// named member has not voted and nobody denied (steward.HouseholdWait), it keeps the turn
// suspended. Otherwise it voids the votes still pending and returns who decided what for the
// turn's story.
func (h Hooks) Hold(ctx context.Context, tx agent.Tx, turn steward.Turn, decisions map[string]steward.Decision) (bool, *steward.HouseholdStory, error) {
	votes, err := tx.Household.Votes(ctx, turn.ID)
	if err != nil || len(votes) == 0 {
		return false, nil, err
	}
	if ctx.Value(onBehalf{}) == nil {
		for _, v := range votes {
			if v.ApproverID != turn.OwnerID || v.Status != steward.VotePending {
				continue
			}
			d := decisions[v.CallID]
			if d.Approve && d.Always != steward.AlwaysNone {
				return false, nil, steward.Errorf(steward.CodeInvalid, "always is not offered for %s: this call needs household approval, so it is asked every time (nothing was decided)", v.Tool)
			}
			if err := tx.Household.DecideOwn(ctx, turn.ID, v.CallID, d.Approve, d.Message, h.Now.Now()); err != nil {
				return false, nil, err
			}
		}
		// Read again under the turn's vote lock (DecideOwn took it): a member's vote
		// committed before it is seen here, one committed after sees the owner's.
		if votes, err = tx.Household.Votes(ctx, turn.ID); err != nil {
			return false, nil, err
		}
	}
	if members, _ := steward.HouseholdWait(votes, turn.OwnerID); len(members) > 0 {
		return true, nil, nil
	}
	if err := tx.Household.Close(ctx, turn.ID); err != nil {
		return false, nil, err
	}
	story := &steward.HouseholdStory{Votes: make([]steward.HouseholdStoryVote, 0, len(votes))}
	for _, v := range votes {
		by := v.ApproverName
		if v.ApproverID == turn.OwnerID {
			by = "owner"
		}
		story.Votes = append(story.Votes, steward.HouseholdStoryVote{ApproverID: v.ApproverID, By: by, CallID: v.CallID,
			Message: v.Message, Tool: v.Tool, Vote: v.Status})
	}
	return false, story, nil
}

// Inbox lists the requests addressed to member by the household's other members.
func (s *Service) Inbox(ctx context.Context, member uuid.UUID) ([]steward.HouseholdApproval, error) {
	var out []steward.HouseholdApproval
	err := s.Store.WithOwner(ctx, member, func(tx *store.Tx) error {
		var err error
		out, err = tx.Household.Inbox(ctx, InboxLimit)
		return err
	})
	// A request whose suspension has passed is expired even before the sweep marks it.
	now := s.Now.Now()
	for i := range out {
		if out[i].Status == steward.VotePending && !now.Before(out[i].ExpiresAt) {
			out[i].Status = steward.VoteExpired
		}
	}
	if out == nil {
		out = []steward.HouseholdApproval{}
	}
	return out, err
}

var errExpired = steward.Errorf(steward.CodeConflict, "this household approval has expired: the request's wait for a decision ended before it was decided; nothing was changed")

// Decide records member's vote on a request addressed to them. When it completes the
// request (the last approval, or a deny), the requester's turn resumes here.
func (s *Service) Decide(ctx context.Context, member, id uuid.UUID, approve bool, message string) (steward.HouseholdApproval, error) {
	if len(message) > 2000 {
		return steward.HouseholdApproval{}, steward.Errorf(steward.CodeInvalid, "message is longer than 2000 bytes")
	}
	if err := steward.CheckText("message", message); err != nil {
		return steward.HouseholdApproval{}, err
	}
	var a steward.HouseholdApproval
	err := s.Store.WithOwner(ctx, member, func(tx *store.Tx) error {
		var err error
		a, err = tx.Household.Decide(ctx, id, approve, message, s.Now.Now())
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		cur, gerr := tx.Household.Get(ctx, id)
		switch {
		case errors.Is(gerr, store.ErrNotFound):
			return steward.Errorf(steward.CodeNotFound, "household approval not found")
		case gerr != nil:
			return gerr
		case cur.Status == steward.VoteExpired:
			return errExpired
		case cur.Status != steward.VotePending:
			return steward.Errorf(steward.CodeConflict, "this household approval was already decided (%s); nothing was changed", cur.Status)
		}
		return errExpired
	})
	if err != nil {
		return steward.HouseholdApproval{}, err
	}
	if err := s.settle(ctx, member, a); err != nil {
		return a, err
	}
	return a, nil
}

// settle resumes the requester's turn once the request is complete: every vote approved
// (with the owner's decisions), or member denied (every pending call denied, saying by
// whom). It runs under the requester's id, through the exactly-once claim: when two last
// votes race, one resumes and the other finds the turn claimed (docs/ARCHITECTURE.md §5).
func (s *Service) settle(ctx context.Context, member uuid.UUID, a steward.HouseholdApproval) error {
	var votes []steward.HouseholdVote
	var turn steward.Turn
	err := s.Store.WithOwner(ctx, a.RequesterID, func(tx *store.Tx) error {
		var err error
		if votes, err = tx.Household.Votes(ctx, a.TurnID); err != nil {
			return err
		}
		turn, err = tx.Turns.Get(ctx, a.TurnID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) || steward.ErrorCode(err) == steward.CodeNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if turn.Status != steward.StatusSuspended || turn.State == nil {
		return nil
	}
	own := map[string]steward.HouseholdVote{}
	name := "a household member"
	for _, v := range votes {
		if v.ApproverID == a.RequesterID {
			own[v.CallID] = v
		} else if v.ApproverID == member {
			name = v.ApproverName
		}
		if a.Status != steward.VoteDenied && v.Status != steward.VoteApproved {
			return nil // someone has yet to vote
		}
	}
	decisions := make([]steward.Decision, len(turn.State.Pending))
	for i, p := range turn.State.Pending {
		d := steward.Decision{CallID: p.CallID, ArgsHash: p.ArgsHash}
		if a.Status == steward.VoteDenied {
			d.Message = cutMessage(fmt.Sprintf("denied by household member %s (%s)", name, a.Tool), a.Message)
		} else {
			v, ok := own[p.CallID]
			if !ok {
				return nil
			}
			d.Approve, d.Message = true, v.Message
		}
		decisions[i] = d
	}
	_, err = s.Confirmer.ConfirmWith(context.WithValue(ctx, onBehalf{}, true), a.RequesterID, a.TurnID, decisions, nil, nil)
	if steward.ErrorCode(err) == steward.CodeConflict {
		return nil // resumed by another request: exactly once
	}
	return err
}

func cutMessage(head, msg string) string {
	s := head
	if msg != "" {
		s += ": " + msg
	}
	for len(s) > 2000 {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}
