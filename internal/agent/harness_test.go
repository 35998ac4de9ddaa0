package agent_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// harness is a Runner on a fresh real database with one owner.
type harness struct {
	t      testing.TB
	ctx    context.Context
	store  *store.Store
	door   *store.Door
	owner  uuid.UUID
	runner *agent.Runner
	// superURL connects as the superuser, which sees every session of the database; appURL
	// as steward_app, as store does.
	superURL, appURL string
	// clock is the runner's clock: tests advance it instead of sleeping past a lease or an
	// expiry (docs/ARCHITECTURE.md §9).
	clock *testClock
	// lookups counts runs of the "lookup" read tool; sends counts runs of "send_mail".
	lookups, sends atomic.Int32
}

func newHarness(t testing.TB, model llm.Model) *harness {
	t.Helper()
	db := testdb.Open(t, 20)
	owner, _ := db.Owner(t, "alice")
	h := &harness{t: t, ctx: context.Background(), store: db.Store, door: db.Door, owner: owner.ID, superURL: db.SuperURL, appURL: db.AppURL, clock: &testClock{}}
	type lookupArgs struct {
		Key string `json:"key"`
	}
	lookup := tools.New("lookup", "Look a key up.", steward.KindRead, func(_ context.Context, _ tools.Env, a lookupArgs) (any, error) {
		h.lookups.Add(1)
		return map[string]string{"key": a.Key, "value": "v-" + a.Key}, nil
	})
	type mailArgs struct {
		To string `json:"to"`
	}
	mail := tools.New("send_mail", "Send a mail.", steward.KindWrite, func(_ context.Context, _ tools.Env, a mailArgs) (any, error) {
		h.sends.Add(1)
		return map[string]string{"sent_to": a.To}, nil
	})
	mail.External = true
	reg, err := tools.NewRegistry(append(toolstest.Tools(), lookup, mail)...)
	if err != nil {
		t.Fatal(err)
	}
	h.runner = agent.New(agent.Config{Model: model, Tools: reg, Store: db.Store, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour, Now: h.clock.Now}, agent.Hooks{})
	return h
}

// testClock is the wall clock moved forward by what Advance added, so that rows the
// database stamps with now() (created_at, updated_at) stay in the clock's past.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock forward by d.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

func (h *harness) start(msg string) steward.View {
	h.t.Helper()
	v, err := h.runner.Start(h.ctx, agent.Input{OwnerID: h.owner, Message: msg}, nil)
	if err != nil {
		h.t.Fatalf("start: %v", err)
	}
	return v
}

// approveAll approves every pending call of v as shown.
func approveAll(v steward.View) []steward.Decision {
	var ds []steward.Decision
	for _, p := range v.Pending {
		ds = append(ds, steward.Decision{CallID: p.CallID, Approve: true, ArgsHash: p.ArgsHash})
	}
	return ds
}

func (h *harness) confirm(v steward.View, ds []steward.Decision) (steward.View, error) {
	return h.runner.Confirm(h.ctx, h.owner, v.TurnID, ds, nil)
}

// tasks lists the owner's tasks.
func (h *harness) tasks() []steward.Task {
	h.t.Helper()
	var out []steward.Task
	err := h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
		var err error
		out, err = tx.Tasks.ListTasks(h.ctx, "all")
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// journal lists a turn's tool-call journal.
func (h *harness) journal(turnID uuid.UUID) map[string]steward.CallRecord {
	h.t.Helper()
	out := map[string]steward.CallRecord{}
	err := h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
		calls, err := tx.Journal.Calls(h.ctx, turnID)
		for _, c := range calls {
			out[c.CallID] = c
		}
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// resultsOf returns the tool results of the last message of a request, in order.
func resultsOf(req llm.Request) []steward.ToolResult {
	var out []steward.ToolResult
	last := req.Messages[len(req.Messages)-1]
	for _, p := range last.Parts {
		if p.ToolResult != nil {
			out = append(out, *p.ToolResult)
		}
	}
	return out
}

func outputString(r steward.ToolResult) string {
	var s string
	if json.Unmarshal(r.Output, &s) == nil {
		return s
	}
	return string(r.Output)
}
