package undo_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
	"github.com/stewardhq/steward/internal/undo"
)

// harness is a runner over a fresh real database whose owner approves every write, and the
// undo service on a clock the test moves.
type harness struct {
	t     *testing.T
	ctx   context.Context
	store *store.Store
	owner uuid.UUID
	now   time.Time
	undo  *undo.Service
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	db := testdb.Open(t, 25)
	owner, _ := db.Owner(t, "alice")
	h := &harness{t: t, ctx: context.Background(), store: db.Store, owner: owner.ID, now: time.Now()}
	h.undo = &undo.Service{Store: db.Store, Window: 10 * time.Minute, Now: func() time.Time { return h.now }}
	h.inTx(func(tx *store.Tx) error {
		if _, err := tx.Ledger.EnsureAccount(h.ctx, "Giro", steward.AccountAsset, "EUR"); err != nil {
			return err
		}
		_, err := tx.Safety.SetCap(h.ctx, steward.Cap{Currency: "EUR", PerActionMinor: 5000, WindowMinor: 20000, Window: 24 * time.Hour})
		return err
	})
	return h
}

func (h *harness) inTx(fn func(tx *store.Tx) error) {
	h.t.Helper()
	if err := h.store.WithOwner(h.ctx, h.owner, fn); err != nil {
		h.t.Fatal(err)
	}
}

// write runs one write call (tool with args) through a turn, approves it and returns the
// turn id; the call's id is "w1".
func (h *harness) write(tool, args string) uuid.UUID {
	h.t.Helper()
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		h.t.Fatal(err)
	}
	r := agent.New(agent.Config{Model: scripted.New(scripted.Reply(scripted.Calls(scripted.Call("w1", tool, args))), scripted.Reply(scripted.Text("Done."))), Tools: reg, Store: h.store, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour, Now: func() time.Time { return h.now }}, agent.Hooks{})
	v, err := r.Start(h.ctx, agent.Input{OwnerID: h.owner, Message: "please", Trigger: steward.TriggerChat}, nil)
	if err != nil || v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
		h.t.Fatalf("start: %+v %v, want suspended on %s", v, err, tool)
	}
	p := v.Pending[0]
	v, err = r.Confirm(h.ctx, h.owner, v.TurnID, []steward.Decision{{CallID: p.CallID, Approve: true, ArgsHash: p.ArgsHash}}, nil)
	if err != nil || v.Status != steward.StatusCompleted {
		h.t.Fatalf("confirm: %+v %v", v, err)
	}
	if c := h.call(v.TurnID); c.Status != steward.CallSucceeded {
		h.t.Fatalf("%s: call %s (%s), want succeeded", tool, c.Status, c.Result)
	}
	return v.TurnID
}

func (h *harness) call(turn uuid.UUID) steward.CallRecord {
	var c steward.CallRecord
	h.inTx(func(tx *store.Tx) (err error) { c, err = tx.Journal.Call(h.ctx, turn, "w1"); return err })
	return c
}

func (h *harness) tasks() []steward.Task {
	var ts []steward.Task
	h.inTx(func(tx *store.Tx) (err error) { ts, err = tx.Tasks.ListTasks(h.ctx, ""); return err })
	return ts
}

func (h *harness) facts() []steward.Fact {
	var fs []steward.Fact
	h.inTx(func(tx *store.Tx) (err error) { fs, err = tx.Tasks.ListFacts(h.ctx, 100); return err })
	return fs
}

func (h *harness) entries() []steward.LedgerEntry {
	var es []steward.LedgerEntry
	h.inTx(func(tx *store.Tx) (err error) {
		es, err = tx.Ledger.Entries(h.ctx, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
		return err
	})
	return es
}

func (h *harness) events(turn uuid.UUID) []steward.Event {
	var es []steward.Event
	h.inTx(func(tx *store.Tx) (err error) { es, err = tx.Journal.TurnEvents(h.ctx, turn); return err })
	return es
}

// mustUndo undoes w1 of turn and checks the journal and the story record it once.
func (h *harness) mustUndo(turn uuid.UUID) {
	h.t.Helper()
	u, err := h.undo.Undo(h.ctx, h.owner, turn, "w1", "api")
	if err != nil {
		h.t.Fatalf("undo: %v", err)
	}
	if c := h.call(turn); c.UndoneAt == nil || c.UndoneBy != "api" || u.UndoneBy != "api" {
		h.t.Fatalf("call after undo = %+v", c)
	}
	n := 0
	for _, e := range h.events(turn) {
		if e.Kind == "undone" {
			n++
			var d struct{ By, CallID, Tool string }
			if json.Unmarshal(e.Data, &d) != nil || d.By != "api" || d.Tool == "" {
				h.t.Fatalf("undone event = %s", e.Data)
			}
		}
	}
	if n != 1 {
		h.t.Fatalf("%d undone events, want 1", n)
	}
}

// refused checks err is a *steward.Error with code whose message contains want.
func refused(t *testing.T, err error, code steward.Code, want string) {
	t.Helper()
	if steward.ErrorCode(err) != code || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v (%s), want %s containing %q", err, steward.ErrorCode(err), code, want)
	}
}

func TestUndoCreateTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	turn := h.write("create_task", `{"title":"buy milk"}`)
	if n := len(h.tasks()); n != 1 {
		t.Fatalf("%d tasks, want 1", n)
	}
	h.mustUndo(turn)
	if ts := h.tasks(); len(ts) != 0 {
		t.Fatalf("tasks after undo = %+v, want none", ts)
	}
	// Twice: refused, and nothing else changes.
	_, err := h.undo.Undo(h.ctx, h.owner, turn, "w1", "api")
	refused(t, err, steward.CodeConflict, "already undone")
}

func TestUndoCompleteTaskReopens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("create_task", `{"title":"buy milk"}`)
	id := h.tasks()[0].ID
	turn := h.write("complete_task", `{"task_id":"`+id.String()+`"}`)
	if ts := h.tasks(); ts[0].Status != steward.TaskDone {
		t.Fatalf("task = %+v, want done", ts[0])
	}
	h.mustUndo(turn)
	if ts := h.tasks(); len(ts) != 1 || ts[0].Status != steward.TaskOpen || ts[0].CompletedAt != nil {
		t.Fatalf("task after undo = %+v, want open again", ts)
	}
}

func TestUndoRememberAndForget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	remembered := h.write("remember", `{"content":"Alice likes tea"}`)
	fs := h.facts()
	if len(fs) != 1 {
		t.Fatalf("facts = %+v", fs)
	}
	forgot := h.write("forget", `{"fact_id":"`+fs[0].ID.String()+`"}`)
	if n := len(h.facts()); n != 0 {
		t.Fatalf("%d facts after forget", n)
	}
	h.mustUndo(forgot)
	if got := h.facts(); len(got) != 1 || got[0].ID != fs[0].ID || got[0].Content != "Alice likes tea" {
		t.Fatalf("facts after undoing forget = %+v, want the fact back", got)
	}
	h.mustUndo(remembered)
	if got := h.facts(); len(got) != 0 {
		t.Fatalf("facts after undoing remember = %+v, want none", got)
	}
}

func TestUndoRecordExpense(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	turn := h.write("record_expense", `{"date":"2026-11-30","amount":1250,"currency":"EUR","merchant":"Bakery","account":"Giro"}`)
	if n := len(h.entries()); n != 1 {
		t.Fatalf("%d entries, want 1", n)
	}
	h.mustUndo(turn)
	if es := h.entries(); len(es) != 0 {
		t.Fatalf("entries after undo = %+v, want none", es)
	}
}

func TestUndoCategorizeMovesBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("record_expense", `{"date":"2026-11-30","amount":1250,"currency":"EUR","merchant":"Bakery","account":"Giro"}`)
	id := h.entries()[0].ID
	turn := h.write("categorize", `{"transaction_ids":["`+id.String()+`"],"category":"Food"}`)
	if c := h.entries()[0].Category; c != "Food" {
		t.Fatalf("category = %q, want Food", c)
	}
	h.mustUndo(turn)
	if c := h.entries()[0].Category; c != steward.Uncategorized {
		t.Fatalf("category after undo = %q, want %s", c, steward.Uncategorized)
	}
}

func TestUndoAfterTheWindowIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	turn := h.write("create_task", `{"title":"buy milk"}`)
	h.now = h.now.Add(10*time.Minute + time.Second)
	_, err := h.undo.Undo(h.ctx, h.owner, turn, "w1", "api")
	refused(t, err, steward.CodeConflict, "undo window")
	if n := len(h.tasks()); n != 1 {
		t.Fatalf("%d tasks after a refused undo, want 1", n)
	}
	if c := h.call(turn); c.UndoneAt != nil {
		t.Fatalf("call marked undone: %+v", c)
	}
}

func TestConcurrentUndosRevertOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	turn := h.write("create_task", `{"title":"buy milk"}`)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[steward.Code]int{}
	for range 20 {
		wg.Go(func() {
			_, err := h.undo.Undo(h.ctx, h.owner, turn, "w1", "api")
			mu.Lock()
			if err == nil {
				codes["ok"]++
			} else {
				codes[steward.ErrorCode(err)]++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes["ok"] != 1 || codes[steward.CodeConflict] != 19 {
		t.Fatalf("outcomes = %v, want one success and 19 conflicts", codes)
	}
	n := 0
	for _, e := range h.events(turn) {
		if e.Kind == "undone" {
			n++
		}
	}
	if n != 1 || len(h.tasks()) != 0 {
		t.Fatalf("%d undone events, %d tasks; want 1 and 0", n, len(h.tasks()))
	}
}

func TestUndoOfIrreversibleOrUnknownCallIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	turn := h.write("notify", `{"title":"hi","message":"hello"}`)
	_, err := h.undo.Undo(h.ctx, h.owner, turn, "w1", "api")
	refused(t, err, steward.CodeInvalid, "can't be undone")
	if c := h.call(turn); c.UndoneAt != nil {
		t.Fatalf("call marked undone: %+v", c)
	}
	_, err = h.undo.Undo(h.ctx, h.owner, turn, "nope", "api")
	refused(t, err, steward.CodeNotFound, "has no call")
	_, err = h.undo.Undo(h.ctx, h.owner, uuid.New(), "w1", "api")
	refused(t, err, steward.CodeNotFound, "has no call")
}
