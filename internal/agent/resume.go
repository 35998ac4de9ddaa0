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

// ConfirmWith is Confirm with inClaim run in the claim's transaction, after the claim (an
// approval link is marked used there, so the link's use and the claim commit together or not
// at all: docs/ARCHITECTURE.md §2, "Approval links"); its error refuses the confirm and
// changes nothing.
func (r *Runner) ConfirmWith(ctx context.Context, ownerID, turnID uuid.UUID, decisions []steward.Decision, emit Emit,
	inClaim func(ctx context.Context, tx Tx) error) (steward.View, error) {
	x := &run{emit: emit, turn: steward.Turn{OwnerID: ownerID}}
	// One clock for the claim, however often its statements run (Tx.Together).
	cf := &confirmation{ownerID: ownerID, turnID: turnID, decisions: decisions, inClaim: inClaim, now: r.Now.Now()}
	err := r.claim(ctx, x, cf, true)
	if errors.As(err, new(*mergedWriteError)) {
		logError(ctx, err, "approved write failed in the claim's transaction; claiming alone")
		err = r.claim(ctx, x, cf, false)
	}
	err = r.claimedAfterAll(ctx, x, cf, err)
	if err == nil && cf.held != nil {
		return *cf.held, nil
	}
	if err != nil {
		return steward.View{}, claimError(turnID, err)
	}
	zerolog.Ctx(ctx).UpdateContext(func(c zerolog.Context) zerolog.Context { return c.Stringer("turn_id", turnID) })
	return r.resume(ctx, x, cf.journal)
}

// Recover takes back a turn whose confirm died mid-way (resuming, its lease lapsed: the sweep
// finds it): it is claimed again like a confirm whose decisions are those already journaled
// — no vote is cast, nothing is decided anew —, a call the dead confirm left executing
// becomes unknown and is never run again, and the turn goes on to its end. A turn that is
// not resuming with a lapsed lease is a conflict (another recovery, or a confirm, took it).
func (r *Runner) Recover(ctx context.Context, ownerID, turnID uuid.UUID) (steward.View, error) {
	var pending []steward.PendingCall
	err := r.Store.InOwner(ctx, ownerID, func(tx Tx) error {
		t, err := tx.Turns.Get(ctx, turnID)
		if err == nil && t.State != nil {
			pending = t.State.Pending
		}
		return err
	})
	if err != nil {
		return steward.View{}, fmt.Errorf("recover turn %s: %w", turnID, err)
	}
	decisions := make([]steward.Decision, len(pending))
	for i, p := range pending {
		// Each call was decided before the claim died (decide skips it): only its hash is read.
		decisions[i] = steward.Decision{CallID: p.CallID, ArgsHash: p.ArgsHash, Approve: true}
	}
	x := &run{turn: steward.Turn{OwnerID: ownerID}}
	cf := &confirmation{ownerID: ownerID, turnID: turnID, decisions: decisions, now: r.Now.Now(), recovering: true}
	if err := r.claim(ctx, x, cf, false); err != nil {
		return steward.View{}, claimError(turnID, err)
	}
	zerolog.Ctx(ctx).Info().Stringer("turn_id", turnID).Msg("recovering a turn whose confirm died")
	return r.resume(ctx, x, cf.journal)
}

// confirmation is one confirm in flight: the owner's request, and what its claim found.
type confirmation struct {
	ownerID, turnID uuid.UUID
	decisions       []steward.Decision
	inClaim         func(ctx context.Context, tx Tx) error
	now             time.Time
	// journal is the turn's journal by call id after the decisions; held, the turn's view
	// when the household holds it (Hooks.Hold).
	journal map[string]steward.CallRecord
	held    *steward.View
	// recovering is Recover's claim: only a resuming turn whose lease lapsed is taken, and
	// the household is not asked (its members' votes were counted before the first claim).
	recovering bool
	// claimed is the turn as the claim's transaction left it, committed or not
	// (claimedAfterAll).
	claimed steward.Turn
}

// spend runs inClaim, if any, in the claim's transaction (a link used for the decision is
// spent there).
func (cf *confirmation) spend(ctx context.Context, tx Tx) error {
	if cf.inClaim == nil {
		return nil
	}
	return cf.inClaim(ctx, tx)
}

// claim is the confirm's gate decision. One transaction reads the turn, checks the
// decisions, admits, claims it (exactly once), journals the decisions and, with merge, runs
// the approved database-local writes with their journal rows (docs/ARCHITECTURE.md §2, §6):
// a concurrent confirm waits on the claim's row lock and then finds the turn claimed. If a
// write fails there (a mergedWriteError), everything rolls back and the caller redoes the
// claim alone; the write then runs in a transaction of its own, as in the loop.
func (r *Runner) claim(ctx context.Context, x *run, cf *confirmation, merge bool) error {
	x.events, x.st = nil, nil
	return r.inOwner(ctx, x, func(tx Tx) error {
		in, err := r.claimReads(ctx, tx, cf)
		if err != nil {
			return err
		}
		byCall, err := r.checkConfirm(in.turn, cf.decisions)
		if err != nil {
			return err
		}
		story, held, err := r.holdOrRecover(ctx, tx, cf, in.turn, byCall)
		if err != nil || held {
			return err
		}
		if r.hooks.OwnerTools != nil {
			x.reg = r.registryWith(ctx, in.extra, in.toolsErr)
		}
		if in.admitErr != nil {
			return in.admitErr
		}
		c, err := r.claimTurn(ctx, tx, cf, in.turn.ConversationID)
		if err != nil {
			return err
		}
		x.turn, x.st = c.turn, c.turn.State
		if story != nil {
			x.record("household_approval", story)
		}
		if err := cf.spend(ctx, tx); err != nil {
			return err
		}
		if cf.journal, err = r.decide(ctx, tx, x, byCall, c.calls); err != nil {
			return err
		}
		r.adoptModel(x)
		if merge {
			if err := r.executeClaimed(ctx, tx, x, cf.journal); err != nil {
				return err
			}
		}
		r.loadHistory(x, c.stored, c.conv.Summary, x.st.HistorySeq)
		cf.claimed = x.turn
		return x.flush(ctx, tx)
	})
}

// claimedAfterAll settles a claim that failed with lost after it claimed the turn: when its
// connection was lost with its COMMIT's answer (a failover at that moment), it may have
// committed. In a fresh transaction it reads the turn: exactly as this claim left it
// (sameClaim), the claim committed and the turn goes on (nil), exactly once as ever;
// otherwise lost is returned. Any other outcome is lost as it is.
func (r *Runner) claimedAfterAll(ctx context.Context, x *run, cf *confirmation, lost error) error {
	if lost == nil || cf.claimed.ID == uuid.Nil || steward.ErrorCode(lost) != steward.CodeUnavailable || errors.Is(lost, steward.ErrNotCommitted) {
		return lost
	}
	var now steward.Turn
	err := r.Store.InOwner(ctx, cf.ownerID, func(tx Tx) error {
		var err error
		now, err = tx.Turns.Get(ctx, cf.turnID)
		return err
	})
	if err != nil || !sameClaim(now, cf.claimed) {
		return lost
	}
	x.turn = cf.claimed
	return nil
}

// sameClaim reports whether turn t is as the claim c left it: status, version, and the
// lease (the claimer's clock) and update time (its transaction's) that no other claim of
// the same version shares.
func sameClaim(t, c steward.Turn) bool {
	return t.Status == c.Status && t.Version == c.Version && t.UpdatedAt.Equal(c.UpdatedAt) &&
		t.LeaseUntil != nil && c.LeaseUntil != nil && t.LeaseUntil.Equal(*c.LeaseUntil)
}

// claimRead is what a claim reads before it decides: the turn, the owner's tools and
// admission's verdict.
type claimRead struct {
	turn               steward.Turn
	extra              []tools.Tool
	toolsErr, admitErr error
}

// claimReads reads the turn, admission's state, the household's votes and the owner's tools
// in one round trip (Tx.Together); their outcomes are taken in the order they always were.
func (r *Runner) claimReads(ctx context.Context, tx Tx, cf *confirmation) (claimRead, error) {
	var in claimRead
	var getErr error
	fns := []func() error{func() error {
		in.turn, getErr = tx.Turns.Get(ctx, cf.turnID)
		return nil
	}, func() error {
		in.admitErr = r.admit(ctx, tx, steward.Admission{OwnerID: cf.ownerID, Resume: true})
		return nil
	}}
	if r.hooks.Hold != nil {
		// The household's votes on the turn, Hold's first read: the transaction keeps
		// them for it (a failed read here is Hold's to read again).
		fns = append(fns, func() error {
			_, _ = tx.Household.Votes(ctx, cf.turnID)
			return nil
		})
	}
	if r.hooks.OwnerTools != nil {
		// Read each time: a redone claim reads them again, the first read having
		// rolled back with everything else.
		fns = append(fns, func() error {
			in.extra, in.toolsErr = r.ownerTools(ctx, tx)
			return nil
		})
	}
	if err := tx.Together(ctx, fns...); err != nil {
		return in, err
	}
	if steward.ErrorCode(getErr) == steward.CodeNotFound {
		return in, steward.Errorf(steward.CodeNotFound, "turn not found")
	}
	if getErr != nil {
		return in, fmt.Errorf("load turn %s: %w", cf.turnID, getErr)
	}
	return in, nil
}

// checkConfirm refuses a confirm of a turn not waiting for decisions, or whose decisions do
// not fit its pending calls; it returns the decisions by call id.
func (r *Runner) checkConfirm(turn steward.Turn, decisions []steward.Decision) (map[string]steward.Decision, error) {
	if err := r.resumable(turn); err != nil {
		return nil, err
	}
	byCall, err := checkDecisions(turn.State.Pending, decisions)
	if err != nil {
		return nil, err
	}
	return byCall, r.checkAlways(turn.State.Pending, byCall)
}

// holdOrRecover is hold for a confirm; a recovery (Recover) asks no household and takes only
// a resuming turn.
func (r *Runner) holdOrRecover(ctx context.Context, tx Tx, cf *confirmation, turn steward.Turn, byCall map[string]steward.Decision) (*steward.HouseholdStory, bool, error) {
	if !cf.recovering {
		return r.hold(ctx, tx, cf, turn, byCall)
	}
	if turn.Status != steward.StatusResuming {
		return nil, false, steward.Errorf(steward.CodeConflict, "turn %s is %s: nothing to recover", cf.turnID, turn.Status)
	}
	return nil, false, nil
}

// hold asks the household (Hooks.Hold) whether the turn waits for more votes. A held turn
// keeps suspended: the owner's decision is recorded (a link used for it is spent) and its
// view is cf.held. Otherwise the story, if any, is the household's approval to record.
func (r *Runner) hold(ctx context.Context, tx Tx, cf *confirmation, turn steward.Turn, byCall map[string]steward.Decision) (*steward.HouseholdStory, bool, error) {
	if r.hooks.Hold == nil {
		return nil, false, nil
	}
	held, story, err := r.hooks.Hold(ctx, tx, turn, byCall)
	if err != nil || !held {
		return story, false, err
	}
	if err := cf.spend(ctx, tx); err != nil {
		return nil, true, err
	}
	v, err := r.view(ctx, tx, turn)
	cf.held = &v
	return nil, true, err
}

// claimedTurn is what the claim's round trip returns: the claimed turn, its journal and its
// conversation's history.
type claimedTurn struct {
	turn   steward.Turn
	calls  []steward.CallRecord
	stored []steward.StoredMessage
	conv   steward.Conversation
}

// claimTurn claims the turn (exactly once: a concurrent confirm waits on its row lock, then
// finds the turn claimed) in one round trip with the journal's reads and the conversation's
// history; when the claim fails, so does the transaction, and the reads are rolled back
// with it.
func (r *Runner) claimTurn(ctx context.Context, tx Tx, cf *confirmation, convID uuid.UUID) (claimedTurn, error) {
	var c claimedTurn
	err := tx.Together(ctx, func() error {
		var err error
		c.turn, err = tx.Turns.Claim(ctx, cf.turnID, cf.now, r.lease())
		return err
	}, func() error {
		_, err := tx.Journal.MarkUnknownCalls(ctx, cf.turnID)
		return err
	}, func() error {
		var err error
		c.calls, err = tx.Journal.Calls(ctx, cf.turnID)
		return err
	}, func() error {
		var err error
		c.stored, err = tx.Conversations.Messages(ctx, convID)
		return err
	}, func() error {
		var err error
		c.conv, err = tx.Conversations.Get(ctx, convID)
		return err
	})
	return c, err
}

// claimError is the confirm's error for a claim that failed: a refusal as it is, a turn no
// longer waiting as a conflict in words.
func claimError(turnID uuid.UUID, err error) error {
	var refused *steward.Error
	if errors.As(err, &refused) {
		return refused
	}
	if code := steward.ErrorCode(err); code == steward.CodeNotFound || code == steward.CodeConflict {
		return steward.Errorf(steward.CodeConflict, "turn %s is no longer waiting for decisions (another request resumed or resolved it)", turnID)
	}
	return fmt.Errorf("claim turn %s: %w", turnID, err)
}

// resume runs the claimed batch's remaining stages after the claim's commit: the approved
// writes still to run, in call order (runWrites), then the results join the turn and the loop
// goes on (a proposed turn finishes with its outcome).
func (r *Runner) resume(ctx context.Context, x *run, journal map[string]steward.CallRecord) (steward.View, error) {
	p, err := decidedPlan(x, journal)
	if err == nil {
		err = r.runWrites(ctx, x, p)
	}
	if err != nil {
		logError(ctx, err, "resume failed")
		return r.finish(ctx, x, steward.StatusFailed, "", "a tool failed unexpectedly")
	}
	x.st.Messages = append(x.st.Messages, p.message())
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
		if d.Approve && !p.AlwaysOffered {
			return steward.Errorf(steward.CodeInvalid, "always is not offered for this call of %s (always_offered is false): it is asked every time; approve it without always (nothing was decided)", p.Tool)
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

// lease is how long a claim holds a resuming turn.
func (r *Runner) lease() time.Duration {
	if r.Lease > 0 {
		return r.Lease
	}
	return 15 * time.Minute
}
