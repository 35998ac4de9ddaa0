package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// Confirm applies the owner's decisions to a suspended turn and resumes it (docs/ARCHITECTURE.md §2,
// "Suspend and resume"): the decisions are checked against the pending calls (one for each,
// bound to its args_hash), the turn is claimed exactly once, approved calls run with the
// journal, denied ones become refusals, and the loop continues in the same turn and trace.
func (r *Runner) Confirm(ctx context.Context, ownerID, turnID uuid.UUID, decisions []steward.Decision, emit Emit) (steward.View, error) {
	return r.ConfirmWith(ctx, ownerID, turnID, decisions, emit, nil)
}

// ConfirmWith is Confirm with inClaim run in the claim's transaction, after the claim (issue
// 17 §1: a link is marked used there, so the link's use and the claim commit together or not
// at all); its error refuses the confirm and changes nothing.
func (r *Runner) ConfirmWith(ctx context.Context, ownerID, turnID uuid.UUID, decisions []steward.Decision, emit Emit,
	inClaim func(ctx context.Context, tx Tx) error) (steward.View, error) {
	x := &run{emit: emit, turn: steward.Turn{OwnerID: ownerID}}
	var journal map[string]steward.CallRecord
	var held *steward.View
	// One transaction reads the turn, checks the decisions, admits, claims it (exactly once),
	// journals the decisions and runs the approved database-local writes with their journal
	// rows (docs/ARCHITECTURE.md §2, §6): a concurrent confirm waits on the claim's row lock
	// and then finds the turn claimed. If a write fails there, everything rolls back and the
	// claim is redone alone; the write then runs in a transaction of its own, as before.
	now := r.Now.Now() // one clock for the claim, however often its statements run (Tx.Together)
	claim := func(merge bool) error {
		x.events, x.st = nil, nil
		return r.inOwner(ctx, x, func(tx Tx) error {
			// The turn, admission's state, the household's votes and the owner's tools share a
			// round trip (Tx.Together); their outcomes are taken in the order they always were.
			var turn steward.Turn
			var extra []tools.Tool
			var getErr, toolsErr, admitErr error
			fns := []func() error{func() error {
				turn, getErr = tx.Turns.Get(ctx, turnID)
				return nil
			}, func() error {
				admitErr = r.admit(ctx, tx, steward.Admission{OwnerID: ownerID, Resume: true})
				return nil
			}}
			if r.hooks.Hold != nil {
				// The household's votes on the turn, Hold's first read: the transaction keeps
				// them for it (a failed read here is Hold's to read again).
				fns = append(fns, func() error {
					_, _ = tx.Household.Votes(ctx, turnID)
					return nil
				})
			}
			if r.hooks.OwnerTools != nil {
				// Read each time: a redone claim reads them again, the first read having
				// rolled back with everything else.
				fns = append(fns, func() error {
					extra, toolsErr = r.ownerTools(ctx, tx)
					return nil
				})
			}
			if err := tx.Together(ctx, fns...); err != nil {
				return err
			}
			if steward.ErrorCode(getErr) == steward.CodeNotFound {
				return steward.Errorf(steward.CodeNotFound, "turn not found")
			}
			if getErr != nil {
				return fmt.Errorf("load turn %s: %w", turnID, getErr)
			}
			if err := r.resumable(turn); err != nil {
				return err
			}
			byCall, err := checkDecisions(turn.State.Pending, decisions)
			if err != nil {
				return err
			}
			if err := r.checkAlways(turn.State.Pending, byCall); err != nil {
				return err
			}
			var story *steward.HouseholdStory
			if r.hooks.Hold != nil {
				hold, s, err := r.hooks.Hold(ctx, tx, turn, byCall)
				if err != nil {
					return err
				}
				if hold {
					// The owner's decision is recorded: a link used for it is spent.
					if inClaim != nil {
						if err := inClaim(ctx, tx); err != nil {
							return err
						}
					}
					v, err := r.view(ctx, tx, turn)
					held = &v
					return err
				}
				story = s
			}
			if r.hooks.OwnerTools != nil {
				x.reg = r.registryWith(ctx, extra, toolsErr)
			}
			if admitErr != nil {
				return admitErr
			}
			// The claim (exactly once: a concurrent confirm waits on its row lock, then finds
			// the turn claimed), the journal's reads and the conversation's history share a
			// round trip; when the claim fails, so does the transaction, and the reads are
			// rolled back with it.
			var claimed steward.Turn
			var calls []steward.CallRecord
			var stored []steward.StoredMessage
			var conv steward.Conversation
			err = tx.Together(ctx, func() error {
				var err error
				claimed, err = tx.Turns.Claim(ctx, turnID, now, r.lease())
				return err
			}, func() error {
				_, err := tx.Journal.MarkUnknownCalls(ctx, turnID)
				return err
			}, func() error {
				var err error
				calls, err = tx.Journal.Calls(ctx, turnID)
				return err
			}, func() error {
				var err error
				stored, err = tx.Conversations.Messages(ctx, turn.ConversationID)
				return err
			}, func() error {
				var err error
				conv, err = tx.Conversations.Get(ctx, turn.ConversationID)
				return err
			})
			if err != nil {
				return err
			}
			x.turn, x.st = claimed, claimed.State
			if story != nil {
				x.record("household_approval", story)
			}
			if inClaim != nil {
				if err := inClaim(ctx, tx); err != nil {
					return err
				}
			}
			if journal, err = r.decide(ctx, tx, x, byCall, calls); err != nil {
				return err
			}
			r.adoptModel(x)
			if merge {
				if err := r.executeClaimed(ctx, tx, x, journal); err != nil {
					return err
				}
			}
			r.loadHistory(x, stored, conv.Summary, x.st.HistorySeq)
			return x.flush(ctx, tx)
		})
	}
	err := claim(true)
	if errors.As(err, new(*mergedWriteError)) {
		logError(ctx, err, "approved write failed in the claim's transaction; claiming alone")
		err = claim(false)
	}
	if err == nil && held != nil {
		return *held, nil
	}
	var refused *steward.Error
	if errors.As(err, &refused) {
		return steward.View{}, refused
	}
	if err != nil {
		if steward.ErrorCode(err) == steward.CodeNotFound || steward.ErrorCode(err) == steward.CodeConflict {
			return steward.View{}, steward.Errorf(steward.CodeConflict, "turn %s is no longer waiting for decisions (another request resumed or resolved it)", turnID)
		}
		return steward.View{}, fmt.Errorf("claim turn %s: %w", turnID, err)
	}
	zerolog.Ctx(ctx).UpdateContext(func(c zerolog.Context) zerolog.Context { return c.Stringer("turn_id", turnID) })

	results, err := r.batchResults(ctx, x, journal)
	if err != nil {
		logError(ctx, err, "resume failed")
		return r.finish(ctx, x, steward.StatusFailed, "", "a tool failed unexpectedly")
	}
	x.st.Messages = append(x.st.Messages, resultsMessage(x.st.Calls, results))
	x.st.Pending, x.st.Calls, x.st.Results = nil, nil, nil
	if x.st.Proposed {
		return r.finishProposed(ctx, x)
	}
	return r.loop(ctx, x)
}

// adoptModel moves a turn suspended under another model to this runner's model: the turn
// records the model that finishes it, and the turn's messages lose the old model's provider
// metadata (thought signatures), which only the model that made it may be sent.
func (r *Runner) adoptModel(x *run) {
	name := r.Model.Name()
	if x.turn.Model == name {
		return
	}
	x.record("model_changed", map[string]any{"from": x.turn.Model, "to": name})
	x.turn.Model = name
	x.st.Messages = steward.WithoutProviderMeta(x.st.Messages)
}

// resumable refuses turns that are not waiting for decisions.
func (r *Runner) resumable(t steward.Turn) error {
	now := r.Now.Now()
	switch {
	case t.Status == steward.StatusSuspended && t.ExpiresAt != nil && !now.Before(*t.ExpiresAt):
		return steward.Errorf(steward.CodeConflict, "turn %s expired before it was confirmed", t.ID)
	case t.Status == steward.StatusSuspended:
	case t.Status == steward.StatusCancelled:
		return steward.Errorf(steward.CodeConflict, "turn %s was cancelled: its pending writes will never run", t.ID)
	case t.Status == steward.StatusResuming && t.LeaseUntil != nil && now.After(*t.LeaseUntil):
		// Its resume died mid-way: this request recovers it.
	default:
		return steward.Errorf(steward.CodeConflict, "turn %s is %s, not waiting for decisions", t.ID, t.Status)
	}
	if t.State == nil || len(t.State.Pending) == 0 {
		return steward.Errorf(steward.CodeConflict, "turn %s has no pending calls", t.ID)
	}
	return nil
}

// checkDecisions requires exactly one decision per pending call, each bound to the call's
// args_hash, and returns them by call id.
func checkDecisions(pending []steward.PendingCall, decisions []steward.Decision) (map[string]steward.Decision, error) {
	want := make(map[string]steward.PendingCall, len(pending))
	for _, p := range pending {
		want[p.CallID] = p
	}
	byCall := make(map[string]steward.Decision, len(decisions))
	for _, d := range decisions {
		p, ok := want[d.CallID]
		switch {
		case !ok:
			return nil, steward.Errorf(steward.CodeInvalid, "call_id %q is not a pending call of this turn", d.CallID)
		case byCall[d.CallID] != (steward.Decision{}):
			return nil, steward.Errorf(steward.CodeInvalid, "call_id %q has more than one decision", d.CallID)
		case d.ArgsHash != p.ArgsHash:
			return nil, steward.Errorf(steward.CodeConflict, "args_hash of call %q does not match its arguments: reload the turn and decide on what it shows", d.CallID)
		case len(d.Message) > 2000:
			return nil, steward.Errorf(steward.CodeInvalid, "message of call %q is longer than 2000 bytes", d.CallID)
		case steward.CheckText("message", d.Message) != nil:
			return nil, steward.CheckText(fmt.Sprintf("message of call %q", d.CallID), d.Message)
		}
		byCall[d.CallID] = d
	}
	for _, p := range pending {
		if _, ok := byCall[p.CallID]; !ok {
			return nil, steward.Errorf(steward.CodeInvalid, "missing a decision for pending call %q (%s)", p.CallID, p.Tool)
		}
	}
	return byCall, nil
}

// checkAlways refuses, before anything is decided, an "always" of unknown scope and one for
// a tool that does not offer it (money and egress tools: no standing rule may run them
// without asking, docs/SECURITY.md "Safety, in code").
func (r *Runner) checkAlways(pending []steward.PendingCall, byCall map[string]steward.Decision) error {
	for _, p := range pending {
		d := byCall[p.CallID]
		switch d.Always {
		case steward.AlwaysNone:
			continue
		case steward.AlwaysArgs, steward.AlwaysTool:
		default:
			return steward.Errorf(steward.CodeInvalid, "always of call %q must be %q or %q, not %q", p.CallID, steward.AlwaysArgs, steward.AlwaysTool, d.Always)
		}
		if tool, ok := r.Tools.Get(p.Tool); d.Approve && (!ok || !tool.AlwaysOffered()) {
			return steward.Errorf(steward.CodeInvalid, "always is not offered for %s: it moves money or sends data out, so it is asked every time and no standing rule can allow it; approve it without always (nothing was decided)", p.Tool)
		}
	}
	return nil
}

// decide writes the owner's decisions into the journal (calls already decided, by an earlier
// resume that died, keep their journal state) and stores standing rules for "always"; calls
// is the turn's journal, read after a call left executing by a dead resume became unknown.
// It returns the journal by call id.
func (r *Runner) decide(ctx context.Context, tx Tx, x *run, byCall map[string]steward.Decision, calls []steward.CallRecord) (map[string]steward.CallRecord, error) {
	journal := make(map[string]steward.CallRecord, len(calls))
	for _, c := range calls {
		journal[c.CallID] = c
	}
	x.record("turn_resumed", turnResumed{Decisions: len(byCall)})
	for _, p := range x.st.Pending {
		d, c := byCall[p.CallID], journal[p.CallID]
		if c.Status != steward.CallPending {
			continue
		}
		to := steward.CallDenied
		if d.Approve {
			to = steward.CallApproved
		}
		if err := tx.Journal.UpdateCall(ctx, steward.CallUpdate{TurnID: x.turn.ID, CallID: p.CallID, From: steward.CallPending, To: to, DecidedBy: "human", Message: d.Message}); err != nil {
			return nil, err
		}
		c.Status, c.DecidedBy, c.Message = to, "human", d.Message
		journal[p.CallID] = c
		x.record("gate_decision", gateDecision{CallID: p.CallID, Tool: p.Tool, Verdict: map[bool]steward.Verdict{true: steward.Allow, false: steward.Deny}[d.Approve], By: "human"})
		if d.Approve && d.Always != steward.AlwaysNone {
			rule, err := tx.Rules.Create(ctx, alwaysRule(p, d.Always))
			if err != nil {
				return nil, err
			}
			x.record("rule_created", map[string]any{"rule_id": rule.ID, "tool": p.Tool, "effect": "allow", "scope": d.Always})
		}
	}
	return journal, nil
}

// alwaysRule is the standing allow rule an approval with "always" stores: for scope "tool"
// a pattern with an empty predicate (any arguments); for "args" an exact rule of the approved
// arguments, so only a call with exactly these arguments — none added, none left out — is
// allowed again.
func alwaysRule(p steward.PendingCall, scope steward.Always) steward.Rule {
	if scope == steward.AlwaysTool {
		return steward.Rule{Tool: p.Tool, Predicate: json.RawMessage(`{}`), Match: steward.MatchPattern, Effect: "allow", Source: "approval", Note: "approved with always (any arguments)"}
	}
	return steward.Rule{Tool: p.Tool, Predicate: p.Args, Match: steward.MatchExact, Effect: "allow", Source: "approval", Note: "approved with always (these arguments)"}
}

// mergedWriteError is a database-local write that failed inside the claim's transaction.
type mergedWriteError struct{ err error }

func (e *mergedWriteError) Error() string { return "merged write: " + e.err.Error() }
func (e *mergedWriteError) Unwrap() error { return e.err }

// executeClaimed runs, in the claim's transaction, the approved database-local writes of the
// batch in call order, up to the first approved call that leaves Postgres (that one and the
// rest run after the commit, in order, as batchResults does); each result joins the state's
// results and each journal row is updated.
func (r *Runner) executeClaimed(ctx context.Context, tx Tx, x *run, journal map[string]steward.CallRecord) error {
	done := make(map[string]bool, len(x.st.Results))
	for _, res := range x.st.Results {
		done[res.CallID] = true
	}
	for _, c := range x.st.Calls {
		j := journal[c.ID]
		if done[c.ID] || j.Status != steward.CallApproved {
			continue
		}
		if tool, ok := r.registry(x).Get(c.Name); !ok || tool.External || tool.Egress {
			return nil
		}
		res, err := r.executeLocal(ctx, tx, x, c)
		if err != nil {
			return &mergedWriteError{err}
		}
		x.st.Results = append(x.st.Results, res)
	}
	return nil
}

// batchResults reassembles the suspended batch's results in the model's call order: results
// produced before the suspension, approved calls run now, refusals, and unknown outcomes.
func (r *Runner) batchResults(ctx context.Context, x *run, journal map[string]steward.CallRecord) ([]*steward.ToolResult, error) {
	done := make(map[string]steward.ToolResult, len(x.st.Results))
	for _, res := range x.st.Results {
		done[res.CallID] = res
	}
	results := make([]*steward.ToolResult, len(x.st.Calls))
	for i, c := range x.st.Calls {
		if res, ok := done[c.ID]; ok {
			results[i] = &res
			continue
		}
		j := journal[c.ID]
		var res steward.ToolResult
		switch j.Status {
		case steward.CallApproved:
			var err error
			if res, err = r.execute(ctx, x, c); err != nil {
				return nil, err
			}
		case steward.CallDenied:
			res = refusal(c, "the owner", j.Message)
		case steward.CallUnknown:
			res = errorResult(c, "outcome unknown: this action was interrupted while running; it may or may not have happened and was not retried. Tell the owner to check.")
		case steward.CallSucceeded, steward.CallFailed:
			res = steward.ToolResult{CallID: c.ID, Name: c.Name, MintedID: c.MintedID, Output: j.Result, IsError: j.Status == steward.CallFailed}
		default:
			return nil, fmt.Errorf("call %s is %q after decisions", c.ID, j.Status)
		}
		results[i] = &res
	}
	return results, nil
}

// lease is how long a claim holds a resuming turn.
func (r *Runner) lease() time.Duration {
	if r.Lease > 0 {
		return r.Lease
	}
	return 15 * time.Minute
}
