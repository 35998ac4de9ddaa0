package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/trace"
)

// run is one turn in flight in this process.
type run struct {
	turn    steward.Turn
	history []steward.Message
	// groups are the history's turn groups and summary the conversation's pinned summary,
	// which stands for the groups before them (context.go).
	groups  []group
	summary *steward.Summary
	st      *steward.State
	emit    Emit
	events  []event
	// inTx is set while one of the run's transactions is open; stream events sent then wait
	// in queued, so that no client I/O ever happens inside a transaction (a client that
	// stops reading must not hold a database connection): see inOwner.
	inTx   bool
	queued []StreamEvent
	// reg is the turn's registry: Runner.Tools and the owner's own tools (OwnerTools);
	// nil means Runner.Tools alone.
	reg *tools.Registry
	// inverses are the inverses the run's writes handed over, by call id, for the journal
	// (the undo window, docs/ARCHITECTURE.md §2).
	inverses map[string]steward.Inverse
	// notify is set when a Suspended hook stored a notification with the turn's suspension:
	// AfterSuspend then runs.
	notify bool
}

// event is an audit row waiting for the run's next transaction.
type event struct {
	seq  int
	kind string
	data any
}

// send hands a stream event to the client, or queues it while a transaction is open.
func (x *run) send(e StreamEvent) {
	switch {
	case x.emit == nil:
	case x.inTx:
		x.queued = append(x.queued, e)
	default:
		x.emit(e)
	}
}

// inOwner runs fn in one of the run's transactions, then delivers the stream events fn
// queued, after the transaction ended (committed or not). When it did not commit, x's turn
// and its unwritten events are as they were before (a save's version bump, made before a
// deferred save came back, with it), so the transaction may be run again: one whose
// connection was lost before it could commit (steward.ErrNotCommitted: a failover) is run
// once more, on a fresh connection, with the events of the lost attempt dropped
// (docs/ARCHITECTURE.md §6).
func (r *Runner) inOwner(ctx context.Context, x *run, fn func(Tx) error) error {
	x.inTx = true
	before, events := x.turn, x.events
	err := r.Store.InOwner(ctx, x.turn.OwnerID, fn)
	if err != nil {
		x.turn, x.events = before, events
	}
	if errors.Is(err, steward.ErrNotCommitted) && ctx.Err() == nil {
		x.queued = nil
		if err = r.Store.InOwner(ctx, x.turn.OwnerID, fn); err != nil {
			x.turn, x.events = before, events
		}
	}
	x.inTx = false
	queued := x.queued
	x.queued = nil
	for _, e := range queued {
		x.send(e)
	}
	return err
}

// record queues an audit event; it is written in the run's next transaction.
func (x *run) record(kind string, data any) {
	x.st.TraceSeq++
	x.events = append(x.events, event{seq: x.st.TraceSeq, kind: kind, data: data})
}

// flush writes the queued audit events in tx, in one statement.
func (x *run) flush(ctx context.Context, tx Tx) error {
	if len(x.events) == 0 {
		return nil
	}
	rows := make([]steward.NewEvent, len(x.events))
	for i, e := range x.events {
		b, err := json.Marshal(e.data)
		if err != nil {
			return fmt.Errorf("encode %s event: %w", e.kind, err)
		}
		// Secrets never reach the trace; redaction keeps JSON valid (it only edits inside
		// strings), and anything else falls back to a marker.
		s := string(b)
		switch red := trace.Redact(s); {
		case red == s: // nothing to redact: b is json.Marshal's
		case json.Valid([]byte(red)):
			b = []byte(red)
		default:
			b = []byte(`{"redacted":true}`)
		}
		rows[i] = steward.NewEvent{Seq: e.seq, Kind: e.kind, Data: tools.Storable(b)}
	}
	if err := tx.Journal.AppendEvents(ctx, &x.turn.ID, rows); err != nil {
		return err
	}
	x.events = nil // a new slice: inOwner may restore the old one if the transaction fails
	return nil
}

// Start runs a new turn for a message, until it completes, fails or suspends.
func (r *Runner) Start(ctx context.Context, in Input, emit Emit) (steward.View, error) {
	msg := strings.TrimSpace(in.Message)
	switch n := utf8.RuneCountInString(msg); {
	case n == 0:
		return steward.View{}, steward.Errorf(steward.CodeInvalid, "message is empty")
	case n > MaxMessageRunes:
		return steward.View{}, steward.Errorf(steward.CodeInvalid, "message is %d characters long; the limit is %d", n, MaxMessageRunes)
	case !utf8.ValidString(msg):
		return steward.View{}, steward.Errorf(steward.CodeInvalid, "message is not valid UTF-8")
	}
	if err := steward.CheckText("message", msg); err != nil {
		return steward.View{}, err
	}
	if in.Trigger == "" {
		in.Trigger = steward.TriggerChat
	}
	x := &run{emit: emit, st: &steward.State{SchemaVersion: steward.StateSchemaVersion,
		Messages: []steward.Message{{Role: steward.RoleUser, Parts: []steward.Part{{Text: msg}}}}}}
	x.turn.OwnerID, in.Message = in.OwnerID, msg
	if err := r.open(ctx, x, in, true, r.embed(ctx, in.OwnerID, msg)); err != nil {
		return steward.View{}, err
	}
	zerolog.Ctx(ctx).UpdateContext(func(c zerolog.Context) zerolog.Context { return c.Stringer("turn_id", x.turn.ID) })
	if x.st.Taint = x.taint(); x.st.Taint == "" && in.Taint != "" {
		x.st.Taint = in.Taint
		x.record("turn_tainted", map[string]any{"source": in.Taint})
	}
	// The client learns the turn's id before the first model call: to cancel it (Cancel).
	started := steward.ViewOf(x.turn)
	x.send(StreamEvent{Type: "started", Turn: &started})
	return r.loop(ctx, x)
}

// open starts x's turn in one transaction: the conversation (continued or new), the memory
// recall (vec is the message's embedding, or nil) and the owner's tools when reads is set —
// optional reads, under a savepoint each —, admission (kill switch, budgets) and the turn row.
// The conversation, the reads and admission share round trips (Tx.Together).
func (r *Runner) open(ctx context.Context, x *run, in Input, reads bool, vec []float32) error {
	var created steward.Turn // the turn the transaction inserted, committed or not
	start := func(tx Tx) error {
		var conv steward.Conversation
		var stored []steward.StoredMessage
		fns := []func() error{func() error {
			var err error
			if in.ConversationID == nil {
				conv, err = tx.Conversations.Create(ctx, title(in.Message))
				return err // a new conversation has no history
			}
			conv, err = tx.Conversations.Get(ctx, *in.ConversationID)
			return err
		}}
		if in.ConversationID != nil {
			fns = append(fns, func() error {
				var err error
				stored, err = tx.Conversations.Messages(ctx, *in.ConversationID)
				return err
			})
		}
		var memory, recalled string
		var extra []tools.Tool
		var memErr, toolsErr error
		if reads && r.Memory != nil {
			fns = append(fns, func() error {
				memory, recalled, memErr = r.recall(ctx, tx, vec, in.Message)
				return nil
			})
		}
		if reads && r.hooks.OwnerTools != nil {
			fns = append(fns, func() error {
				extra, toolsErr = r.ownerTools(ctx, tx)
				return nil
			})
		}
		// After the reads, whose results come with admission's: its lock on the owner is
		// then held for less time.
		fns = append(fns, func() error {
			return r.admit(ctx, tx, steward.Admission{OwnerID: in.OwnerID, Trigger: in.Trigger})
		})
		if err := tx.Together(ctx, fns...); err != nil {
			return err
		}
		if in.ConversationID != nil {
			x.st.HistorySeq = r.loadHistory(x, stored, conv.Summary, -1)
		}
		if memErr != nil {
			logError(ctx, memErr, "memory recall failed; the turn goes on without it")
			memory, recalled = "", ""
		}
		x.st.Memory, x.st.Untrusted = memory, recalled != ""
		if reads && r.hooks.OwnerTools != nil {
			x.reg = r.registryWith(ctx, extra, toolsErr)
		}
		var err error
		x.turn, err = tx.Turns.Create(ctx, conv.ID, in.Trigger, r.Model.Name(), r.Now.Now(), r.lease())
		if err != nil {
			return err
		}
		created = x.turn
		r.started(x, in.Trigger)
		if recalled != "" && x.st.Taint == "" {
			x.st.Taint = recalled // untrusted memory is in the turn from the start (§3)
			x.record("turn_tainted", map[string]any{"source": recalled})
		}
		return nil
	}
	return openError(r.settledStart(ctx, x, in.Trigger, start, &created))
}

// settledStart runs start (which sets *created to the turn it inserts) and settles a lost
// COMMIT answer (startedAfterAll); when nothing of it committed, it runs once more, on a
// fresh connection.
func (r *Runner) settledStart(ctx context.Context, x *run, trigger steward.Trigger, start func(Tx) error, created *steward.Turn) error {
	err := r.inOwner(ctx, x, start)
	err = r.startedAfterAll(ctx, x, *created, trigger, err)
	if errors.Is(err, errStartNotCommitted) && ctx.Err() == nil {
		*created = steward.Turn{}
		err = r.inOwner(ctx, x, start)
		err = r.startedAfterAll(ctx, x, *created, trigger, err)
	}
	return err
}

// errStartNotCommitted marks a start whose COMMIT's answer was lost and whose turn was then
// not found: nothing of it committed, so it may run again.
var errStartNotCommitted = errors.New("the start did not commit")

// started records x's turn_started event, written with the turn's next transaction like
// every event.
func (r *Runner) started(x *run, trigger steward.Trigger) {
	x.record("turn_started", turnStarted{Trigger: trigger, ConversationID: x.turn.ConversationID, Model: r.Model.Name(),
		PromptVersion: PromptVersion, PromptSHA256: promptSHA256})
}

// startedAfterAll settles a start (open) that failed with lost after it inserted created: when
// its connection was lost with its COMMIT's answer (a failover at that moment), it may have
// committed. In a fresh transaction it looks for the created turn: found, the turn started
// and goes on (nil); not found, nothing of it committed, and lost is returned (its words
// claim nothing either way). Any other outcome is lost as it is.
func (r *Runner) startedAfterAll(ctx context.Context, x *run, created steward.Turn, trigger steward.Trigger, lost error) error {
	if lost == nil || created.ID == uuid.Nil || steward.ErrorCode(lost) != steward.CodeUnavailable || errors.Is(lost, steward.ErrNotCommitted) {
		return lost
	}
	x.turn = created
	err := r.inOwner(ctx, x, func(tx Tx) error {
		t, err := tx.Turns.Get(ctx, created.ID)
		if err == nil {
			x.turn = t
		}
		return err
	})
	if err != nil {
		x.turn = steward.Turn{OwnerID: created.OwnerID}
		logError(ctx, err, "a start whose COMMIT's answer was lost: its turn was not found")
		if steward.ErrorCode(err) == steward.CodeNotFound {
			return fmt.Errorf("%w (%w)", lost, errStartNotCommitted)
		}
		return lost
	}
	r.started(x, trigger)
	return nil
}

// openError is the error of a turn that could not start: a refusal as it is, a conversation
// not found in words; nil for nil.
func openError(err error) error {
	var e *steward.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case steward.ErrorCode(err) == steward.CodeNotFound:
		return steward.Errorf(steward.CodeNotFound, "conversation not found")
	}
	return fmt.Errorf("start turn: %w", err)
}

// recallTimeout bounds the recall's embedding so a slow embedder cannot hold a turn.
const recallTimeout = 3 * time.Second

// embed is the message's embedding for recall, before and outside any transaction; nil
// when there is no memory or the embedding failed (logged: recall goes on by keyword).
func (r *Runner) embed(ctx context.Context, ownerID uuid.UUID, msg string) []float32 {
	if r.Memory == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, recallTimeout)
	defer cancel()
	vec, err := r.Memory.Embed(ctx, ownerID, msg)
	if err != nil {
		logError(ctx, err, "memory recall: embedding failed; recalling by keyword only")
		return nil
	}
	return vec
}

// recall asks Memory, in the turn's start transaction tx and under a savepoint, for a memory
// block, and what untrusted text it holds, in words ("" for none); the caller logs its error,
// never fatal.
func (r *Runner) recall(ctx context.Context, tx Tx, vec []float32, msg string) (block, taint string, err error) {
	err = tx.Try(ctx, func() error {
		var err error
		block, taint, err = r.Memory.RecallIn(ctx, tx, vec, msg)
		return err
	})
	return block, taint, err
}

func hasToolResults(m steward.Message) bool {
	for _, p := range m.Parts {
		if p.ToolResult != nil {
			return true
		}
	}
	return false
}

// title is a new conversation's title: the start of its first message.
func title(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(msg) <= 60 {
		return msg
	}
	return string([]rune(msg)[:60]) + "…"
}

// loop calls the model until the turn completes, fails or suspends (docs/ARCHITECTURE.md §2).
func (r *Runner) loop(ctx context.Context, x *run) (steward.View, error) {
	maxIter := r.MaxIterations
	if maxIter <= 0 {
		maxIter = 8
	}
	calls := x.st.Iterations
	for {
		if (x.st.Iterations > calls && r.nearDeadline(ctx)) || r.shuttingDown() {
			return r.continueLater(ctx, x)
		}
		final := x.st.Iterations >= maxIter
		resp, err := r.call(ctx, x, !final)
		if ended, err := r.ends(err); ended != nil {
			if errors.Is(err, errStopping) {
				return r.continueLater(ctx, x)
			}
			if err != nil {
				logError(ctx, err, "model call failed")
			}
			return r.finish(ctx, x, ended.status, ended.answer, ended.note)
		}
		uniqueCallIDs(x.st.Messages, resp.Message)
		refused := unstorable(resp.Message)
		x.st.Messages = append(x.st.Messages, resp.Message)
		if ended := answered(resp, final); ended != nil {
			return r.finish(ctx, x, ended.status, ended.answer, ended.note)
		}
		suspended, err := r.batch(ctx, x, resp.ToolCalls(), refused)
		if err != nil {
			return r.stop(ctx, x, err)
		}
		if suspended {
			return r.suspend(ctx, x)
		}
	}
}

// ending is how a turn ends after a model call: its status, answer and note.
type ending struct {
	status       steward.Status
	answer, note string
}

// ends is the turn's ending when its model call failed (nil when it answered): cancelled by
// its owner, failed in words — or, for a shutdown (errStopping, returned), none: it continues.
func (r *Runner) ends(err error) (*ending, error) {
	switch {
	case err == nil:
		return nil, nil
	case errors.Is(err, errCancelled):
		return &ending{status: steward.StatusCancelled, note: steward.CancelledNote}, nil
	case errors.Is(err, errStopping):
		return &ending{}, err
	}
	return &ending{status: steward.StatusFailed, note: r.modelFailure(err)}, err
}

// answered is the turn's ending when the model's answer ends it: blocked, cut off, declined,
// empty, its final answer after the iteration cap, or an answer without calls; nil when it
// calls tools.
func answered(resp llm.Response, final bool) *ending {
	switch resp.Finish {
	case llm.FinishBlocked:
		return &ending{status: steward.StatusFailed, note: "the model's answer was blocked (" + resp.FinishDetail + ")"}
	case llm.FinishMaxTokens:
		return &ending{status: steward.StatusFailed, note: "the answer was cut off at the output token limit"}
	case llm.FinishRefused:
		return &ending{status: steward.StatusFailed, note: "the model declined to answer (" + resp.FinishDetail + ")"}
	}
	calls := resp.ToolCalls()
	switch {
	case len(calls) == 0 && strings.TrimSpace(resp.Text()) == "":
		return &ending{status: steward.StatusFailed, note: "the model answered with nothing; try again"}
	case final:
		return &ending{status: steward.StatusCompleted, answer: resp.Text(), note: steward.IterationLimitNote}
	case len(calls) == 0:
		return &ending{status: steward.StatusCompleted, answer: resp.Text()}
	}
	return nil
}

// uniqueCallIDs gives every call of msg an id unique within the turn: a call without an id,
// or reusing one, gets a minted id (never sent back to the provider).
func uniqueCallIDs(turn []steward.Message, msg steward.Message) {
	seen := map[string]bool{}
	for _, m := range turn {
		for _, p := range m.Parts {
			if p.ToolCall != nil {
				seen[p.ToolCall.ID] = true
			}
		}
	}
	for _, p := range msg.Parts {
		if c := p.ToolCall; c != nil {
			if c.ID == "" || seen[c.ID] {
				c.ID, c.MintedID = "call_"+strings.ReplaceAll(uuid.NewString(), "-", "")[:16], true
			}
			seen[c.ID] = true
		}
	}
}

// unstorable refuses the calls of msg whose arguments Postgres cannot store (a NUL, an
// unpaired surrogate escape, bytes that are not UTF-8: tools.CheckStorable) before anything
// stores them: each one's arguments, and any call's name, are scrubbed in msg (tools.Scrub),
// and the error the model reads instead of a result is returned by call id.
func unstorable(msg steward.Message) map[string]string {
	var refused map[string]string
	for _, p := range msg.Parts {
		c := p.ToolCall
		if c == nil {
			continue
		}
		c.Name = tools.ScrubText(c.Name)
		if e := tools.CheckStorable(c.Args); e != nil {
			e.Tool = c.Name
			if refused == nil {
				refused = map[string]string{}
			}
			refused[c.ID], c.Args = e.Error(), tools.Scrub(c.Args)
		}
	}
	return refused
}

// call makes one model call with the turn so far; withTools=false is the final tool-free
// completion after the iteration cap, which keeps the tools declared (the request's prefix
// stays byte-identical, so it is cached like the calls before it) but forbids calling them.
func (r *Runner) call(ctx context.Context, x *run, withTools bool) (llm.Response, error) {
	decls := r.registry(x).Declarations()
	r.compact(ctx, x, decls)
	req := llm.Request{System: SystemPrompt, Messages: append(append([]steward.Message(nil), x.history...), x.st.Messages...)}
	if x.st.Memory != "" {
		// The memory block rides on the turn's user message, after the stable prefix
		// (system prompt, tool declarations, history), which stays byte-identical. It is a
		// context part: the model reads it, but it is not the owner's words (steward.Part.Context).
		i := len(x.history)
		user := req.Messages[i]
		user.Parts = append([]steward.Part{{Text: x.st.Memory, Context: true}}, user.Parts...)
		req.Messages[i] = user
	}
	if x.summary != nil {
		// The pinned summary leads the history as data (context.go, docs/ARCHITECTURE.md §3).
		first := req.Messages[0]
		first.Parts = append([]steward.Part{summaryPart(x.summary)}, first.Parts...)
		req.Messages[0] = first
	}
	req.Tools, req.NoToolCalls = decls, !withTools
	var onDelta llm.DeltaFunc
	if x.emit != nil {
		onDelta = func(text string) error {
			x.send(StreamEvent{Type: "text", Text: text})
			return nil
		}
	}
	start := time.Now()
	bounded, cancel := context.WithTimeoutCause(ctx, r.modelTimeout(), errModelTimeout)
	watched, stop := r.watchCancel(bounded, x)
	resp, err := r.generate(watched, req, onDelta)
	if err != nil {
		switch cause := context.Cause(watched); {
		case cause == errCancelled || cause == errStopping || cause == errModelTimeout: // abandoned: the owner, a shutdown, the time limit
			err = cause
		case r.shuttingDown(): // the process's own context ended with it
			err = errStopping
		}
	}
	stop()
	cancel()
	x.st.Iterations++
	cost := r.charge(x, resp.Model, resp.Usage)
	r.attempts(x, resp, err)
	data := modelCall{Model: cmp.Or(resp.Model, r.Model.Name()), Finish: resp.Finish, FinishDetail: resp.FinishDetail,
		Usage: resp.Usage, CostMicros: cost, LatencyMS: time.Since(start).Milliseconds(), Tools: withTools}
	switch {
	case errors.Is(err, errCancelled):
		data.Error = "abandoned: the owner cancelled the turn"
	case errors.Is(err, errStopping):
		data.Error = "abandoned: Steward was shutting down; the turn continues in the next process"
	case errors.Is(err, errModelTimeout):
		data.Error = "abandoned: no answer within " + r.modelTimeout().String()
	case err != nil:
		data.Error = "model call failed"
	}
	x.record("model_call", data)
	return resp, err
}

// generate is the model's Generate, with a panic in the model's client — an SDK that
// dereferences what a malformed answer lacks — made the call's error: the answer is
// untrusted input, and a turn must end in words, not stay running behind a recovered 500.
func (r *Runner) generate(ctx context.Context, req llm.Request, onDelta llm.DeltaFunc) (resp llm.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			zerolog.Ctx(ctx).Error().Str("panic", fmt.Sprint(p)).Str("stack", string(debug.Stack())).Msg("the model's client panicked on its answer")
			resp, err = llm.Response{}, fmt.Errorf("the model's client panicked on its answer: %v", p)
		}
	}()
	return r.Model.Generate(ctx, req, onDelta)
}

// attempts records each model attempt of a fallback chain's call (llm.Response.Attempts) as
// a model_attempt event, then the one that answered, and counts every attempt's usage,
// priced at its own model, against the turn's budgets (docs/ARCHITECTURE.md §2). A call that
// went to its first model is the model_call event alone.
func (r *Runner) attempts(x *run, resp llm.Response, err error) {
	if len(resp.Attempts) == 0 {
		return
	}
	for _, a := range resp.Attempts {
		cost := r.charge(x, a.Model, a.Usage)
		outcome := "failed"
		if a.Skipped {
			outcome = "skipped"
		}
		x.record("model_attempt", map[string]any{"model": a.Model, "outcome": outcome, "error_class": a.Class(),
			"error": a.Error, "usage": a.Usage, "cost_micros": cost, "latency_ms": a.Latency.Milliseconds()})
	}
	if err == nil {
		x.record("model_attempt", map[string]any{"model": resp.Model, "outcome": "answered", "usage": resp.Usage})
	}
}

// charge counts a model call's usage against the turn's budgets, priced at model (0 without
// a Price), and returns its cost.
func (r *Runner) charge(x *run, model string, u steward.Usage) int64 {
	cost := int64(0)
	if r.Price != nil {
		cost = r.Price(model, u)
	}
	x.st.Usage = x.st.Usage.Add(u)
	x.st.CostMicros += cost
	return cost
}

// spend counts a model call a tool made of its own (web_search's grounded search) against
// the turn's budgets, priced at its model, and tells the story (a tool_spend event).
func (r *Runner) spend(x *run, c steward.ToolCall, model string, u steward.Usage) {
	cost := r.charge(x, model, u)
	x.record("tool_spend", map[string]any{"call_id": c.ID, "tool": c.Name, "model": model, "usage": u, "cost_micros": cost})
}

// finish ends the turn: saves its outcome and, when completed, appends its messages to the
// conversation.
func (r *Runner) finish(ctx context.Context, x *run, status steward.Status, answer, errMsg string) (steward.View, error) {
	x.turn.Status, x.turn.Answer, x.turn.Error = status, answer, errMsg
	x.turn.State, x.turn.ExpiresAt = nil, nil
	r.account(x)
	err := r.saveEnd(ctx, x, func(ctx context.Context, tx Tx) error {
		messages := x.st.Messages
		switch status {
		case steward.StatusCompleted:
			if err := r.checkHonesty(ctx, tx, x, answer); err != nil {
				return err
			}
		case steward.StatusFailed:
			done, err := r.writesDone(ctx, tx, x)
			if err != nil {
				return err
			}
			if done != "" {
				// What was done stays said and in the conversation, so "try again" does not
				// do it twice (docs/RELIABILITY.md).
				x.turn.Error = done + " Then " + errMsg
				messages = append(slices.Clip(messages), steward.Message{Role: steward.RoleModel, Parts: []steward.Part{{Text: x.turn.Error}}})
			}
		}
		x.record("turn_"+string(status), turnEnded{Error: x.turn.Error, Iterations: x.st.Iterations, Usage: x.st.Usage})
		// Only writes follow: the save travels with them and COMMIT, in one round trip.
		saved, err := tx.Turns.Finish(ctx, x.turn)
		if err != nil {
			return err
		}
		x.turn = saved
		if status == steward.StatusCompleted || len(messages) > len(x.st.Messages) {
			if err := tx.Conversations.Touch(ctx, x.turn.ConversationID, ""); err != nil {
				return err
			}
			if err := tx.Conversations.AppendMessages(ctx, x.turn.ConversationID, x.turn.ID, messages...); err != nil {
				return err
			}
			if r.Memory != nil {
				if err := tx.Conversations.EnqueueIngest(ctx, x.turn.ID, x.turn.ConversationID); err != nil {
					return err
				}
			}
		}
		return x.flush(ctx, tx)
	})
	if err != nil {
		return r.failUnsaved(ctx, x, fmt.Errorf("finish turn %s: %w", x.turn.ID, err))
	}
	v := steward.ViewOf(x.turn)
	typ := "completed"
	if status != steward.StatusCompleted {
		typ = "error"
	}
	x.send(StreamEvent{Type: typ, Turn: &v, Text: x.turn.Error})
	return v, nil
}

// unsavedError is the error of a turn whose outcome could not be saved.
const unsavedError = "the turn's result could not be saved"

// saveTimeout bounds the saves that end a turn's run in this process (finish, suspend,
// continue later), which no longer depend on the request: a client gone or a shutdown does
// not cancel them, and a database briefly unavailable (a failover, a restart) is waited for.
const saveTimeout = 30 * time.Second

// saveEnd runs save, the transaction that ends x's run in this process, on a context ctx's
// cancellation does not reach, bounded by saveTimeout. While the database is unavailable it
// is run again, waiting 1 s, then 2 s, 4 s…, until that context ends: a live process does not
// leave its turn running while it can still write it (docs/ARCHITECTURE.md §2). save must keep
// its effects in the transaction (inOwner restores the turn and its events when it does not
// commit).
func (r *Runner) saveEnd(ctx context.Context, x *run, save func(context.Context, Tx) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	wait := time.Second
	for {
		err := r.inOwner(ctx, x, func(tx Tx) error { return save(ctx, tx) })
		if steward.ErrorCode(err) != steward.CodeUnavailable {
			return err
		}
		logError(ctx, err, "saving the turn: the database is unavailable; trying again")
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// failUnsaved ends a turn whose outcome could not be saved — a value Postgres refuses (a NUL
// in the model's answer or in a tool's arguments), or a database that stayed unavailable —:
// in a fresh transaction the turn is failed with a generic error and only its final event
// (the queued ones may hold the refused value), so it never stays running until the sweep.
// The cause goes to the log. When even that cannot be saved, the error is returned (the
// sweep fails the turn later).
func (r *Runner) failUnsaved(ctx context.Context, x *run, cause error) (steward.View, error) {
	zerolog.Ctx(ctx).Error().Str("error", trace.Redact(cause.Error())).Stringer("turn_id", x.turn.ID).Msg("the turn could not be saved; failing it")
	x.turn.Status, x.turn.Answer, x.turn.Error = steward.StatusFailed, "", unsavedError
	x.turn.State, x.turn.ExpiresAt = nil, nil
	x.events = nil
	x.record("turn_failed", map[string]any{"error": unsavedError, "iterations": x.st.Iterations, "usage": x.st.Usage})
	err := r.saveEnd(ctx, x, x.save)
	if err != nil {
		return steward.View{}, fmt.Errorf("fail unsaved turn %s: %w (after %w)", x.turn.ID, err, cause)
	}
	v := steward.ViewOf(x.turn)
	x.send(StreamEvent{Type: "error", Turn: &v, Text: unsavedError})
	return v, nil
}

// save saves x's turn as it is, with its queued events, in tx.
func (x *run) save(ctx context.Context, tx Tx) error {
	saved, err := tx.Turns.Save(ctx, x.turn)
	if err != nil {
		return err
	}
	x.turn = saved
	return x.flush(ctx, tx)
}

// account copies the run's usage onto the turn, and what tainted it (memory remembers a
// tainted turn as untrusted, docs/ARCHITECTURE.md §3).
func (r *Runner) account(x *run) {
	x.turn.Usage, x.turn.CostMicros, x.turn.Iterations = x.st.Usage, x.st.CostMicros, x.st.Iterations
	x.turn.Taint = x.taint()
}

// suspend writes the turn with its pending writes to Postgres and returns it to the client.
// The batch's transaction may have saved it already (batch).
func (r *Runner) suspend(ctx context.Context, x *run) (steward.View, error) {
	if x.turn.Status != steward.StatusSuspended {
		err := r.saveEnd(ctx, x, func(ctx context.Context, tx Tx) error {
			if err := r.saveSuspended(ctx, tx, x); err != nil {
				return err
			}
			return x.flush(ctx, tx)
		})
		if err != nil {
			return r.failUnsaved(ctx, x, fmt.Errorf("suspend turn %s: %w", x.turn.ID, err))
		}
	}
	v := steward.ViewOf(x.turn)
	x.send(StreamEvent{Type: "suspended", Turn: &v})
	if r.hooks.AfterSuspend != nil && x.notify {
		r.hooks.AfterSuspend(ctx, x.turn.OwnerID, x.turn.ID)
	}
	return v, nil
}

// saveSuspended saves x's turn suspended with its state in tx; the caller flushes the events.
func (r *Runner) saveSuspended(ctx context.Context, tx Tx, x *run) error {
	ttl := r.SuspendTTL
	if ttl <= 0 {
		ttl = 7 * 24 * time.Hour
	}
	exp := r.Now.Now().Add(ttl)
	x.turn.Status, x.turn.State, x.turn.ExpiresAt = steward.StatusSuspended, x.st, &exp
	r.account(x)
	x.record("turn_suspended", turnSuspended{Pending: len(x.st.Pending), ExpiresAt: exp})
	// Deferred: the hook's first statement, or COMMIT, carries it (and its error).
	saved, err := tx.Turns.Finish(ctx, x.turn)
	if err != nil {
		return err
	}
	x.turn = saved
	x.notify = false
	for _, suspended := range r.hooks.Suspended {
		notify, err := suspended(ctx, tx, saved)
		if err != nil {
			return err
		}
		x.notify = x.notify || notify
	}
	return nil
}

// runTool runs a validated tool with data and ledger (nil: outside any transaction) and
// turns tool errors into results for the model; other errors (the database) are returned.
func (r *Runner) runTool(ctx context.Context, data tools.Data, ledger tools.Ledger, x *run, c steward.ToolCall) (steward.ToolResult, error) {
	start := time.Now()
	env := tools.Env{OwnerID: x.turn.OwnerID, TurnID: x.turn.ID, CallID: c.ID, Now: r.Now, Data: data, Ledger: ledger, Calls: readData{r: r, x: x},
		Undo: func(inv steward.Inverse) {
			if x.inverses == nil {
				x.inverses = map[string]steward.Inverse{}
			}
			x.inverses[c.ID] = inv
		}}
	env.Taint, env.Tainted = x.taint(), func(source string) { x.taintBy(c, source) }
	env.Spend = func(model string, u steward.Usage) { r.spend(x, c, model, u) }
	out, err := r.registry(x).Run(ctx, env, c.Name, c.Args)
	if tool, ok := r.registry(x).Get(c.Name); ok && tool.Untrusted {
		// Outside content is in the turn from now on, even in an error (docs/ARCHITECTURE.md §3).
		x.taintBy(c, "tool:"+c.Name)
	}
	res := steward.ToolResult{CallID: c.ID, Name: c.Name, MintedID: c.MintedID, Output: out}
	switch {
	case err == nil:
		if tool, _ := r.registry(x).Get(c.Name); tool.Playbook {
			res.Instructions = x.usedPlaybook(c, out)
		}
	case tools.ForModel(err) || errors.Is(err, tools.ErrUnknownTool):
		res = errorResult(c, err.Error())
	default:
		return res, fmt.Errorf("run %s: %w", c.Name, err)
	}
	res.Output = tools.Storable(res.Output) // a NUL in a mail is U+FFFD, never a failed batch (§2)
	x.record("tool_result", toolResult{CallID: c.ID, Tool: c.Name, OK: !res.IsError,
		Bytes: len(res.Output), DurationMS: time.Since(start).Milliseconds()})
	x.send(StreamEvent{Type: "tool_result", Result: &res})
	return res, nil
}

// taintBy taints x's turn by source, what call c took in (docs/ARCHITECTURE.md §3), unless
// something tainted it before.
func (x *run) taintBy(c steward.ToolCall, source string) {
	if x.st.Taint == "" {
		x.st.Taint = source
		x.record("turn_tainted", map[string]any{"call_id": c.ID, "source": source})
	}
}

// usedPlaybook records a skill's use on the turn (skill_used: which skill, which version)
// and reports whether its playbook reaches the model as instructions: only a built-in's or
// the owner's own (§3, §16). Any other taints the turn like outside content, and an output
// that is not a playbook is treated as such.
func (x *run) usedPlaybook(c steward.ToolCall, out json.RawMessage) bool {
	var p steward.Playbook
	if json.Unmarshal(out, &p) != nil || p.Name == "" {
		p = steward.Playbook{}
	}
	trusted := p.Trusted && (p.Origin == steward.SkillBuiltin || p.Origin == steward.SkillOwn)
	x.record("skill_used", map[string]any{"call_id": c.ID, "skill_id": p.SkillID, "name": p.Name, "version": p.Version,
		"origin": p.Origin, "trusted": trusted})
	if !trusted {
		x.taintBy(c, "skill:"+p.Name)
	}
	return trusted
}

// logError logs an internal error with secrets redacted.
func logError(ctx context.Context, err error, msg string) {
	zerolog.Ctx(ctx).Error().Str("error", trace.Redact(err.Error())).Msg(msg)
}

// admit asks the Control to let a turn start or resume.
func (r *Runner) admit(ctx context.Context, tx Tx, a steward.Admission) error {
	if r.Control == nil {
		return nil
	}
	return r.Control.Admit(ctx, tx, a)
}

// errCancelled stops a turn whose owner asked it to stop (Runner.Cancel).
var errCancelled = errors.New("the owner cancelled the turn")

// errStopping abandons a model call when the process shuts down (Runner.Stop).
var errStopping = errors.New("the process is shutting down")

// errModelTimeout abandons a model call that did not answer within Config.ModelTimeout.
var errModelTimeout = errors.New("the model did not answer in time")

// modelTimeout is Config.ModelTimeout, or DefaultModelTimeout.
func (r *Runner) modelTimeout() time.Duration {
	if r.ModelTimeout > 0 {
		return r.ModelTimeout
	}
	return DefaultModelTimeout
}

// modelFailure is what the owner reads of a model call that failed: the time limit, a
// provider unreachable or out of service after its retries (and fallbacks), or an answer that could not be
// used (cut short, malformed). The error itself goes to the log only.
func (r *Runner) modelFailure(err error) string {
	switch {
	case errors.Is(err, errModelTimeout):
		return "the model did not answer within " + r.modelTimeout().String() + "; try again later"
	case llm.IsUnreachable(err):
		return "the model's service could not be reached (the connection was refused or lost, and retrying and any other model did not help); try again in a few minutes"
	case llm.IsUnavailable(err):
		return "the model's service is unavailable (it failed or was rate limited, and retrying did not help); try again in a few minutes"
	}
	return "the model's answer could not be used (it was cut short or malformed); try again"
}

// check is the loop's check at a step boundary: the Control's (the kill switch: an *Error
// with CodeKilled), then whether the owner asked the turn to stop (errCancelled). Both reads
// share one round trip (Tx.Together).
func (r *Runner) check(ctx context.Context, tx Tx, x *run) error {
	var killed error
	var cancelled bool
	err := tx.Together(ctx, func() error {
		if r.Control == nil {
			return nil
		}
		killed = r.Control.Check(ctx, tx)
		if e := (*steward.Error)(nil); errors.As(killed, &e) {
			return nil // a refusal, not a failed statement: taken after the group
		}
		return killed
	}, func() error {
		if x.turn.ID == uuid.Nil {
			return nil // no turn (Runner.Read)
		}
		var err error
		cancelled, err = tx.Turns.CancelRequested(ctx, x.turn.ID)
		return err
	})
	switch {
	case err != nil:
		return err
	case killed != nil:
		return killed
	case cancelled:
		return errCancelled
	}
	return nil
}

// stop ends a turn whose batch returned err: aborted by the kill switch, cancelled by its
// owner (check), else failed.
func (r *Runner) stop(ctx context.Context, x *run, err error) (steward.View, error) {
	var e *steward.Error
	switch {
	case errors.As(err, &e) && e.Code == steward.CodeKilled:
		return r.finish(ctx, x, steward.StatusAborted, "", e.Message)
	case errors.Is(err, errCancelled):
		return r.finish(ctx, x, steward.StatusCancelled, "", steward.CancelledNote)
	}
	logError(ctx, err, "tool batch failed")
	return r.finish(ctx, x, steward.StatusFailed, "", "a tool failed unexpectedly")
}

// stopped is check at a step boundary that has no transaction of its own to carry it: after
// a batch's writes ran (the last of them committed with its journal row).
func (r *Runner) stopped(ctx context.Context, x *run) error {
	var stop error
	if err := r.inOwner(ctx, x, func(tx Tx) error {
		stop = r.check(ctx, tx, x)
		return nil
	}); err != nil {
		return err
	}
	return stop
}

// gateRequest describes a write call to the gate, with the money it moves if its tool
// declares an amount.
func (r *Runner) gateRequest(x *run, c steward.ToolCall) steward.GateRequest {
	req := steward.GateRequest{OwnerID: x.turn.OwnerID, TurnID: x.turn.ID, Trigger: x.turn.Trigger, Untrusted: x.st.Untrusted,
		CallID: c.ID, Tool: c.Name, Args: c.Args, Taint: x.taint()}
	tool, ok := r.registry(x).Get(c.Name)
	req.Egress = !ok || r.sendsOut(x, tool, c) || (tool.Links != nil && !x.ownerWroteAll(tool.Links(c.Args)))
	req.Rules = steward.OnlyOwnerYes
	if ok {
		req.Rules = tool.RuleScope()
	}
	if ok && tool.Money != nil {
		req.MovesMoney = true
		req.Money, _ = tool.MoneyIn(c.Args) // nil when unreadable: the gate denies it (ARCHITECTURE.md §2)
	}
	return req
}

// resultsMessage is the one message carrying every result of a batch, in call order. Each
// output enters the model's context as untrusted data, inside a data block.
func resultsMessage(calls []steward.ToolCall, results []*steward.ToolResult) steward.Message {
	msg := steward.Message{Role: steward.RoleUser, Parts: make([]steward.Part, len(calls))}
	for i := range calls {
		res := *results[i]
		if !res.Instructions {
			res.Output, _ = json.Marshal(DataBlock("tool:"+res.Name, plainJSON(res.Output)))
		}
		msg.Parts[i] = steward.Part{ToolResult: &res}
	}
	return msg
}

// plainJSON renders a JSON value as the model will read it: without the \u003c-style HTML
// escapes of encoding/json, so that what data says is what DataBlock sanitises.
func plainJSON(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// errorResult is a tool error the model can read and correct.
func errorResult(c steward.ToolCall, msg string) steward.ToolResult {
	b, _ := json.Marshal(msg)
	return steward.ToolResult{CallID: c.ID, Name: c.Name, MintedID: c.MintedID, Output: b, IsError: true}
}

// refusal is the result of a write that was not run, with who refused and why.
func refusal(c steward.ToolCall, by, message string) steward.ToolResult {
	b, _ := json.Marshal(map[string]string{"status": "not done", "refused_by": by, "message": message})
	return steward.ToolResult{CallID: c.ID, Name: c.Name, MintedID: c.MintedID, Output: b, IsError: true}
}

// taint is the source that tainted x's turn (docs/ARCHITECTURE.md §3): the first untrusted
// tool output it took in, else its trigger when outside data started it, else recalled
// untrusted memory; "" for a turn that has seen only the owner's words and data.
func (x *run) taint() string {
	switch {
	case x.st.Taint != "":
		return x.st.Taint
	case x.turn.Trigger == steward.TriggerWebhook || x.turn.Trigger == steward.TriggerMCP:
		return "trigger:" + string(x.turn.Trigger)
	case x.st.Untrusted:
		return "memory"
	}
	return ""
}

// heldEgress reports whether a call of an External read (web_fetch) must go to the gate
// instead of running at once: its turn is tainted and the owner's message did not name its
// URL.
func (r *Runner) heldEgress(x *run, tool tools.Tool, c steward.ToolCall) bool {
	return tool.External && tool.Kind == steward.KindRead && x.taint() != "" && !x.ownerNamed(c.Args)
}

// sendsOut reports whether a call of tool carries data to a destination the owner did not
// fix in advance: any External write, an External read (web_fetch) of a URL the owner's
// message did not name.
func (r *Runner) sendsOut(x *run, tool tools.Tool, c steward.ToolCall) bool {
	return tool.External && (tool.Kind != steward.KindRead || !x.ownerNamed(c.Args))
}

// ownerNamed reports whether the "url" argument of a call appears, as a word, in the owner's
// own message that began the turn (ownerWrote).
func (x *run) ownerNamed(args json.RawMessage) bool {
	var a struct {
		URL string `json:"url"`
	}
	return json.Unmarshal(args, &a) == nil && x.ownerWrote(strings.TrimSpace(a.URL))
}

// ownerWroteAll reports whether every one of links is a word the owner wrote (ownerWrote).
func (x *run) ownerWroteAll(links []string) bool {
	for _, l := range links {
		if !x.ownerWrote(l) {
			return false
		}
	}
	return true
}

// ownerWrote reports whether want appears, as a word, in the owner's own message that began
// the turn: its text parts outside any data block (a job's message carries a stranger's mail
// in one), never a context part such as recalled memory. A turn started by outside data has
// no owner's message.
func (x *run) ownerWrote(want string) bool {
	if want == "" || len(x.st.Messages) == 0 {
		return false
	}
	if t := x.turn.Trigger; t == steward.TriggerWebhook || t == steward.TriggerMCP {
		return false
	}
	for _, p := range x.st.Messages[0].Parts {
		if p.Context || p.ToolResult != nil || p.ToolCall != nil {
			continue
		}
		for _, w := range strings.Fields(withoutData(p.Text)) {
			if t := strings.Trim(w, "<>()[]{}\"'`,;!?"); t == want || strings.TrimRight(t, ".:") == want || tools.TrimWord(w) == want {
				return true
			}
		}
	}
	return false
}

// withoutData is text with its data blocks (DataBlock) cut out: what they hold is not the
// owner's words.
func withoutData(text string) string {
	const open, end = "<data source=", "\n</data>"
	var b strings.Builder
	for {
		i := strings.Index(text, open)
		if i < 0 {
			return b.String() + text
		}
		b.WriteString(text[:i])
		j := strings.Index(text[i:], end)
		if j < 0 {
			return b.String()
		}
		text = text[i+j+len(end):]
	}
}
