package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// The stages of a batch of tool calls (docs/ARCHITECTURE.md §2, "A turn"). The loop's batch
// (the calls one model response made) and the confirm's (a suspended batch the owner decided)
// go through the same stages, each keeping its guarantee:
//
//  1. gate decision: each call vetted (a known tool, valid arguments) and, if it is a write
//     or a held egress read, decided by the gate (gateBatch) or, on confirm, by the owner
//     (decide); every decision is journaled before anything runs. The outcome is a plan.
//  2. reads (runReads): outside any transaction, journaled together after they ran.
//  3. database-local writes (executeLocal): each in the transaction of its journal row, so
//     effect and journal commit together or not at all.
//  4. external writes (executeExternal): journaled executing in their own commit before they
//     run; a crash leaves them executing, later unknown, never run again.
//  5. suspend or finish (plan.settle): with calls pending, the turn is saved suspended for the
//     confirm; otherwise the results join the turn as one message and the loop goes on to its
//     next model call or to finish. Every exit ends the turn (finish, stop, suspend): none is
//     left running.
//
// A write runs only from the plan's allowed calls, which only an allow of the gate or an
// approval of the owner puts there, and only once: the journal's transition from approved is
// conditional (steward.CallUpdate.From).

// plan is one batch of tool calls between its stages: what the gate (or the owner) made of
// each call and the results so far, in the model's call order.
type plan struct {
	calls   []steward.ToolCall
	results []*steward.ToolResult // nil while the call has no result yet
	recs    []steward.CallRecord  // the reads' journal rows, recorded after they ran
	reads   []int                 // calls to run now, outside any transaction
	allowed []int                 // approved writes, to run in call order
	pending []steward.PendingCall // writes waiting for the owner
}

// reset empties the plan before its calls are decided (again).
func (p *plan) reset() {
	p.results = make([]*steward.ToolResult, len(p.calls))
	p.recs = make([]steward.CallRecord, len(p.calls))
	p.reads, p.allowed, p.pending = nil, nil, nil
}

// waitsOnly reports a plan that only waits for the owner: no read to run, no write allowed.
func (p *plan) waitsOnly() bool {
	return len(p.pending) > 0 && len(p.reads) == 0 && len(p.allowed) == 0
}

// suspendState puts the batch into the turn's state for the confirm: its calls, the pending
// ones, and the results it has.
func (p *plan) suspendState(x *run) {
	x.st.Calls, x.st.Pending, x.st.Results = p.calls, p.pending, nil
	for _, res := range p.results {
		if res != nil {
			x.st.Results = append(x.st.Results, *res)
		}
	}
}

// message is the one message carrying every result of the batch, in call order.
func (p *plan) message() steward.Message { return resultsMessage(p.calls, p.results) }

// settle is the last stage: with calls pending, the batch goes into the turn's state and
// settle reports true (the caller suspends the turn); otherwise the results join the turn.
func (p *plan) settle(x *run) bool {
	if len(p.pending) > 0 {
		p.suspendState(x)
		return true
	}
	x.st.Messages = append(x.st.Messages, p.message())
	return false
}

// batch runs one batch of tool calls through the stages: unknown tools and invalid arguments
// become error results, writes go through the gate in one transaction, then reads run
// outside any transaction (a slow read holds neither a transaction nor a pool connection) and
// are journaled in a second one, then the allowed writes run. refused holds the error of each
// call whose arguments could not be stored (unstorable). It returns true when writes wait for
// a human; otherwise the results were appended as one message in call order.
func (r *Runner) batch(ctx context.Context, x *run, calls []steward.ToolCall, refused map[string]string) (bool, error) {
	p := &plan{calls: calls}
	vet := r.vet(x, calls, refused)
	if err := r.preview(ctx, x, calls, vet); err != nil {
		return false, err
	}
	merged, err := r.gateBatch(ctx, x, p, vet)
	switch {
	case err != nil:
		return false, err
	case merged:
		for i := range calls {
			x.send(StreamEvent{Type: "tool_call", Call: &calls[i]})
		}
		return true, nil
	}
	if err := r.runReads(ctx, x, p); err != nil {
		return false, err
	}
	if err := r.runWrites(ctx, x, p); err != nil {
		return false, err
	}
	if len(p.allowed) > 0 {
		// The writes were the step's last work: check again before the next model call or
		// the suspension (the reads' check, if any, came before them).
		if err := r.stopped(ctx, x); err != nil {
			return false, err
		}
	}
	return p.settle(x), nil
}

// vetted is what a call is before any statement: a known tool with valid arguments, and
// whether it goes to the gate; so the gate's decisions are read together with the kill switch.
type vetted struct {
	tool    tools.Tool
	reject  string // "unknown tool" or "invalid arguments"; msg is the model's error
	msg     string
	gated   bool
	preview string // what the tool's Preview said, for the approval card
	// estimate is what the tool's Estimate said the call moves (household minimums).
	estimate *steward.Money
}

// vet vets each call of a batch (vetted).
func (r *Runner) vet(x *run, calls []steward.ToolCall, refused map[string]string) []vetted {
	vet := make([]vetted, len(calls))
	for i, c := range calls {
		vet[i] = r.vetCall(x, c, refused)
	}
	return vet
}

func (r *Runner) vetCall(x *run, c steward.ToolCall, refused map[string]string) vetted {
	if msg, ok := refused[c.ID]; ok {
		return vetted{reject: "invalid arguments", msg: msg}
	}
	tool, ok := r.registry(x).Get(c.Name)
	if !ok {
		return vetted{reject: "unknown tool", msg: fmt.Sprintf("unknown tool %q; available tools: %s", c.Name, strings.Join(r.registry(x).Names(), ", "))}
	}
	if err := tool.Validate(c.Args); err != nil {
		return vetted{tool: tool, reject: "invalid arguments", msg: err.Error()}
	}
	return vetted{tool: tool, gated: tool.Kind != steward.KindRead || r.heldEgress(x, tool, c)}
}

// preview runs the Preview of each gated call whose tool has one, outside any transaction,
// before the gate: its words go on the approval card; an *ArgError or a *Refusal refuses the
// call (the model reads why). In a tainted turn a call whose URL the owner did not name gets no
// preview: a preview may fetch, and the fetch would carry data out before anyone said yes
// (§3); the card says so, and the call fetches only once approved.
func (r *Runner) preview(ctx context.Context, x *run, calls []steward.ToolCall, vet []vetted) error {
	for i, c := range calls {
		v := &vet[i]
		if !v.gated || v.reject != "" || v.tool.Preview == nil {
			continue
		}
		if x.taint() != "" && urlArg(c.Args) != "" && !x.ownerNamed(c.Args) {
			v.preview = "Not fetched yet: this turn has read outside content (" + x.taint() + "), so it is fetched and scanned only once you approve."
			continue
		}
		env := tools.Env{OwnerID: x.turn.OwnerID, TurnID: x.turn.ID, CallID: c.ID, Now: r.Now}
		text, err := v.tool.Preview(ctx, env, c.Args)
		switch {
		case tools.ForModel(err):
			v.reject, v.msg = "invalid arguments", err.Error()
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return fmt.Errorf("preview %s: %w", c.Name, err)
		default:
			v.preview = text
		}
		if v.tool.Estimate != nil && v.reject == "" {
			v.estimate, _ = v.tool.Estimate(ctx, env, c.Args) // unknown stays nil: a minimum matches
		}
	}
	return nil
}

// urlArg is a call's "url" argument, "" for none.
func urlArg(args json.RawMessage) string {
	var a struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal(args, &a)
	return strings.TrimSpace(a.URL)
}

// gateBatch is the loop's gate decision, in one transaction: the kill switch and the gate's
// decisions read together, then each call journaled (or rejected). A batch that only waits
// for the owner saves the suspended turn in the same transaction (docs/ARCHITECTURE.md §2);
// merged reports it. If that save fails — at its statement, or at COMMIT, which carries the
// deferred save's error (Turns.Finish) — the batch is decided again and the turn saved apart,
// as suspend does.
func (r *Runner) gateBatch(ctx context.Context, x *run, p *plan, vet []vetted) (merged bool, err error) {
	events, seq, turn := len(x.events), x.st.TraceSeq, x.turn
	decide := func(tx Tx, merge bool) error {
		x.events, x.st.TraceSeq = x.events[:events], seq
		var err error
		merged, err = r.decideBatch(ctx, tx, x, p, vet, merge)
		return err
	}
	err = r.inOwner(ctx, x, func(tx Tx) error { return decide(tx, true) })
	if err != nil && (merged || errors.As(err, new(*mergedWriteError))) {
		x.turn = turn
		err = r.inOwner(ctx, x, func(tx Tx) error { return decide(tx, false) })
	}
	return merged && err == nil, err
}

// decideBatch decides and journals the batch's calls in tx; with merge, a plan that only
// waits for the owner saves the suspended turn too (merged true, even when a later statement
// fails: the caller then decides again without it).
func (r *Runner) decideBatch(ctx context.Context, tx Tx, x *run, p *plan, vet []vetted, merge bool) (merged bool, err error) {
	p.reset()
	decisions, err := r.gateDecisions(ctx, tx, x, p.calls, vet)
	if err != nil {
		return false, err
	}
	for i := range p.calls {
		if err := r.journalDecision(ctx, tx, x, p, i, vet[i], decisions[i]); err != nil {
			return false, err
		}
	}
	if merge && p.waitsOnly() {
		p.suspendState(x)
		if err := r.saveSuspended(ctx, tx, x); err != nil {
			return false, &mergedWriteError{err}
		}
		merged = true
	}
	return merged, x.flush(ctx, tx)
}

// gateDecisions reads, in one round trip (Tx.Together), the step boundary's check (stopped
// before any tool ran) and the gate's decision on each gated call.
func (r *Runner) gateDecisions(ctx context.Context, tx Tx, x *run, calls []steward.ToolCall, vet []vetted) ([]steward.GateDecision, error) {
	decisions := make([]steward.GateDecision, len(calls))
	fns := []func() error{func() error {
		return r.check(ctx, tx, x)
	}}
	for i := range calls {
		if vet[i].gated {
			fns = append(fns, func() error {
				d, err := r.Gate.Decide(ctx, tx, r.gateRequest(x, calls[i]))
				if err != nil {
					return fmt.Errorf("gate %s: %w", calls[i].Name, err)
				}
				decisions[i] = d
				return nil
			})
		}
	}
	return decisions, tx.Together(ctx, fns...)
}

// journalDecision puts call i into the plan: a rejected call gets its error result; a read
// waits to run (its journal row comes after it ran); a gated call is journaled with the
// gate's decision d: approved (allowed), denied (its refusal) or pending (waiting for the owner).
func (r *Runner) journalDecision(ctx context.Context, tx Tx, x *run, p *plan, i int, v vetted, d steward.GateDecision) error {
	c := p.calls[i]
	if v.reject != "" {
		res := errorResult(c, v.msg)
		p.results[i] = &res
		x.record("tool_rejected", map[string]any{"call_id": c.ID, "tool": c.Name, "reason": v.reject})
		return nil
	}
	hash, err := tools.ArgsHash(c.Name, c.Args)
	if err != nil {
		return err
	}
	rec := steward.CallRecord{TurnID: x.turn.ID, CallID: c.ID, Tool: c.Name, Kind: v.tool.Kind, Args: c.Args, ArgsHash: hash}
	x.record("tool_requested", toolRequested{CallID: c.ID, Tool: c.Name, Kind: v.tool.Kind, ArgsHash: hash})
	if !v.gated {
		p.recs[i] = rec
		p.reads = append(p.reads, i)
		return nil
	}
	x.record("gate_decision", gateDecision{CallID: c.ID, Tool: c.Name, Verdict: d.Verdict, By: d.By, Reason: &d.Reason})
	rec.DecidedBy = d.By
	switch d.Verdict {
	case steward.Allow:
		rec.Status = steward.CallApproved
		p.allowed = append(p.allowed, i)
	case steward.Deny:
		res := refusal(c, "refused by "+d.By, d.Reason)
		p.results[i] = &res
		rec.Status, rec.Result = steward.CallDenied, res.Output
	default:
		rec.Status, rec.DecidedBy = steward.CallPending, ""
		// A call the gate asks for a reason of its own (a tainted egress call, a household
		// policy) is asked every time: no "always" is offered for it.
		pc := steward.PendingCall{CallID: c.ID, Tool: c.Name, Args: c.Args, ArgsHash: hash, AlwaysOffered: v.tool.AlwaysOffered() && d.Reason == "",
			Reversible: v.tool.Reversible, Preview: v.preview, Estimate: v.estimate}
		switch {
		case d.Reason == steward.ReasonTainted:
			pc.Reason, pc.Taint = d.Reason, x.taint()
		case x.st.Untrusted: // recalled outside text: no standing allow rule or auto mode applied (§3)
			pc.Reason, pc.Taint = steward.ReasonUntrusted, x.taint()
		}
		p.pending = append(p.pending, pc)
	}
	return tx.Journal.RecordCall(ctx, rec)
}

// runReads runs the plan's read calls outside any transaction, each with data that opens a
// short transaction per query and refuses writes, then journals them in one transaction
// that also checks the kill switch again before the next model call (what ran is kept); that
// check's refusal is the error returned.
func (r *Runner) runReads(ctx context.Context, x *run, p *plan) error {
	data, ledger := readData{r: r, x: x}, readLedger{r: r, x: x}
	next := 0
	for i := range p.calls {
		// The client sees the calls in the model's order, each read's result after its call.
		x.send(StreamEvent{Type: "tool_call", Call: &p.calls[i]})
		if next >= len(p.reads) || p.reads[next] != i {
			continue
		}
		next++
		res, err := r.runTool(ctx, data, ledger, x, p.calls[i])
		if err != nil {
			return err
		}
		p.results[i] = &res
		p.recs[i].Status, p.recs[i].Result = steward.CallSucceeded, res.Output
		if res.IsError {
			p.recs[i].Status = steward.CallFailed
		}
	}
	if len(p.reads) == 0 {
		return nil
	}
	var killed error
	err := r.inOwner(ctx, x, func(tx Tx) error {
		for _, i := range p.reads {
			if err := tx.Journal.RecordCall(ctx, p.recs[i]); err != nil {
				return err
			}
		}
		killed = r.check(ctx, tx, x)
		return x.flush(ctx, tx)
	})
	if err != nil {
		return err
	}
	return killed
}

// runWrites runs the plan's approved writes in call order (execute), each result in its place.
func (r *Runner) runWrites(ctx context.Context, x *run, p *plan) error {
	for _, i := range p.allowed {
		res, err := r.execute(ctx, x, p.calls[i])
		if err != nil {
			return err
		}
		p.results[i] = &res
	}
	return nil
}

// execute runs an approved write with its journal: succeeded/failed after it ran. A tool
// whose effect stays in Postgres runs in the same transaction as its journal row
// (executeAlone); an external one is journaled executing first (executeExternal).
func (r *Runner) execute(ctx context.Context, x *run, c steward.ToolCall) (steward.ToolResult, error) {
	if tool, _ := r.registry(x).Get(c.Name); tool.External {
		return r.executeExternal(ctx, x, c)
	}
	return r.executeAlone(ctx, x, c)
}

// executeAlone runs an approved database-local write in a transaction of its own with its
// journal row (executeLocal), so effect and journal commit together. When that transaction
// rolls back, nothing happened: the failure is journaled in another.
func (r *Runner) executeAlone(ctx context.Context, x *run, c steward.ToolCall) (steward.ToolResult, error) {
	var res steward.ToolResult
	err := r.inOwner(ctx, x, func(tx Tx) error {
		var err error
		if res, err = r.executeLocal(ctx, tx, x, c); err != nil {
			return err
		}
		return x.flush(ctx, tx)
	})
	if err == nil {
		return res, nil
	}
	logError(ctx, err, "write tool "+c.Name+" failed")
	res = errorResult(c, "the tool failed unexpectedly; nothing was changed")
	err = r.inOwner(ctx, x, func(tx Tx) error {
		return tx.Journal.UpdateCall(ctx, steward.CallUpdate{TurnID: x.turn.ID, CallID: c.ID, From: steward.CallApproved, To: steward.CallFailed, Result: res.Output})
	})
	return res, err
}

// executeExternal runs an approved write whose effect leaves Postgres: the kill switch and
// caps once more and approved → executing, in its own commit first; then the tool, outside
// any transaction; then executing → succeeded or failed. A crash before its result leaves it
// executing, later marked unknown, and it is never run again.
func (r *Runner) executeExternal(ctx context.Context, x *run, c steward.ToolCall) (steward.ToolResult, error) {
	var res steward.ToolResult
	allowed := false
	err := r.inOwner(ctx, x, func(tx Tx) error {
		var err error
		res, allowed, err = r.enforce(ctx, tx, x, c)
		if err != nil || !allowed {
			return err
		}
		return tx.Journal.UpdateCall(ctx, steward.CallUpdate{TurnID: x.turn.ID, CallID: c.ID, From: steward.CallApproved, To: steward.CallExecuting})
	})
	if err != nil || !allowed {
		return res, err
	}
	if r.afterExecuting != nil {
		if err := r.afterExecuting(c.ID); err != nil {
			return res, err
		}
	}
	res, err = r.runTool(ctx, nil, nil, x, c)
	unknown := errors.Is(err, steward.ErrOutcomeUnknown)
	switch {
	case unknown:
		// Sent without an answer (a broker's timeout): unknown, never sent again (§2, §20).
		res = errorResult(c, outcomeUnknown)
	case err != nil:
		res = errorResult(c, "the tool failed unexpectedly")
	}
	return res, r.inOwner(ctx, x, func(tx Tx) error {
		var err error
		if unknown {
			err = tx.Journal.UpdateCall(ctx, steward.CallUpdate{TurnID: x.turn.ID, CallID: c.ID, From: steward.CallExecuting, To: steward.CallUnknown, Result: res.Output})
		} else {
			err = r.journalResult(ctx, tx, x, c, steward.CallExecuting, res)
		}
		if err != nil {
			return err
		}
		return x.flush(ctx, tx)
	})
}

// outcomeUnknown is what the model reads of a call whose outcome is unknown.
const outcomeUnknown = "outcome unknown: this action was interrupted while running; it may or may not have happened and was not retried. Tell the owner to check."

// executeLocal runs an approved database-local write in tx with its journal row: the kill
// switch and caps once more, the tool on tx's data, then approved → succeeded or failed. No
// "executing" comes between: nothing outside tx could see it, and a crash leaves neither the
// effect nor the row. The run's queued events are left for the caller to flush in tx.
func (r *Runner) executeLocal(ctx context.Context, tx Tx, x *run, c steward.ToolCall) (steward.ToolResult, error) {
	res, ok, err := r.enforce(ctx, tx, x, c)
	if err != nil || !ok {
		return res, err
	}
	if res, err = r.runTool(ctx, tx.Data, tx.Ledger, x, c); err != nil {
		return res, err
	}
	return res, r.journalResult(ctx, tx, x, c, steward.CallApproved, res)
}

// enforce applies the kill switch and caps once more before an approved write runs; a
// refusal journals the call denied and returns its result with ok false.
func (r *Runner) enforce(ctx context.Context, tx Tx, x *run, c steward.ToolCall) (res steward.ToolResult, ok bool, err error) {
	d, err := r.Gate.Enforce(ctx, tx, r.gateRequest(x, c))
	if err != nil || d.Verdict == steward.Allow {
		return res, err == nil, err
	}
	res = refusal(c, "refused by "+d.By, d.Reason)
	x.record("gate_decision", gateDecision{CallID: c.ID, Tool: c.Name, Verdict: d.Verdict, By: d.By, At: "execution"})
	return res, false, tx.Journal.UpdateCall(ctx, steward.CallUpdate{TurnID: x.turn.ID, CallID: c.ID, From: steward.CallApproved, To: steward.CallDenied, Result: res.Output, DecidedBy: d.By})
}

// journalResult moves a call from status from to succeeded or failed with its result; a
// succeeded write keeps the inverse its tool handed over, and when it ran, for an undo.
func (r *Runner) journalResult(ctx context.Context, tx Tx, x *run, c steward.ToolCall, from steward.CallStatus, res steward.ToolResult) error {
	u := steward.CallUpdate{TurnID: x.turn.ID, CallID: c.ID, From: from, To: steward.CallSucceeded, Result: res.Output}
	if inv, ok := x.inverses[c.ID]; ok && !res.IsError {
		u.Inverse, u.At = &inv, r.Now.Now()
	}
	if res.IsError {
		u.To = steward.CallFailed
	}
	return tx.Journal.UpdateCall(ctx, u)
}

// mergedWriteError is a database-local write that failed inside a transaction it shares with
// an earlier stage (the confirm's claim), or the suspension saved with the loop's decisions:
// the caller redoes that stage alone.
type mergedWriteError struct{ err error }

func (e *mergedWriteError) Error() string { return "merged write: " + e.err.Error() }
func (e *mergedWriteError) Unwrap() error { return e.err }

// executeClaimed runs, in the claim's transaction, the approved database-local writes of the
// batch in call order, up to the first approved call that leaves Postgres (that one and the
// rest run after the commit, in order, as runWrites does); each result joins the state's
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
		if tool, ok := r.registry(x).Get(c.Name); !ok || tool.External {
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

// decidedPlan is the plan of a suspended batch after the owner's decisions (the confirm's
// gate decision, decide): the results produced before the suspension or in the claim's
// transaction, the owner's refusals, unknown outcomes and the results the journal holds, in
// the model's call order; approved calls still to run are allowed.
func decidedPlan(x *run, journal map[string]steward.CallRecord) (*plan, error) {
	done := make(map[string]steward.ToolResult, len(x.st.Results))
	for _, res := range x.st.Results {
		done[res.CallID] = res
	}
	p := &plan{calls: x.st.Calls, results: make([]*steward.ToolResult, len(x.st.Calls))}
	for i, c := range x.st.Calls {
		if res, ok := done[c.ID]; ok {
			p.results[i] = &res
			continue
		}
		j := journal[c.ID]
		var res steward.ToolResult
		switch j.Status {
		case steward.CallApproved:
			p.allowed = append(p.allowed, i)
			continue
		case steward.CallDenied:
			res = refusal(c, "the owner", j.Message)
		case steward.CallUnknown:
			res = errorResult(c, outcomeUnknown)
		case steward.CallSucceeded, steward.CallFailed:
			res = steward.ToolResult{CallID: c.ID, Name: c.Name, MintedID: c.MintedID, Output: j.Result, IsError: j.Status == steward.CallFailed}
		default:
			return nil, fmt.Errorf("call %s is %q after decisions", c.ID, j.Status)
		}
		p.results[i] = &res
	}
	return p, nil
}
