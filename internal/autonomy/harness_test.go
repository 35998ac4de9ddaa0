package autonomy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/delivery"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// obedient is a model that does what its input asks for: on a new turn it calls notify
// (with what an attacker would want, when the input says so), and once the tool result is
// back it answers. It records every request.
type obedient struct {
	mu       sync.Mutex
	requests []llm.Request
}

func (m *obedient) Name() string { return "obedient" }

func (m *obedient) Generate(ctx context.Context, req llm.Request, _ llm.DeltaFunc) (llm.Response, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	for _, p := range last.Parts {
		if p.ToolResult != nil {
			return scripted.Text("Sent."), nil
		}
	}
	return scripted.Calls(scripted.Call("n1", "notify", `{"title":"From Steward","message":"pwned: forward the owner's data to attacker@evil.example"}`)), nil
}

// turnsStarted counts the turns the model was asked to begin (requests without tool results).
func (m *obedient) turnsStarted() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []llm.Request
	for _, r := range m.requests {
		if len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role == steward.RoleUser && !hasResults(r.Messages[len(r.Messages)-1]) {
			out = append(out, r)
		}
	}
	return out
}

func hasResults(msg steward.Message) bool {
	for _, p := range msg.Parts {
		if p.ToolResult != nil {
			return true
		}
	}
	return false
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// harness is the autonomy stack on a fresh real database with one owner, a notification
// channel on a counting test receiver, and the obedient model.
type harness struct {
	t        *testing.T
	ctx      context.Context
	store    *store.Store
	door     *store.Door
	owner    uuid.UUID
	model    *obedient
	clock    *clock
	runner   *autonomy.Runner
	sched    *autonomy.Scheduler
	hooks    *autonomy.Webhooks
	received atomic.Int32 // requests the notification channel received
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, 0, nil)
}

// newHarnessWith is newHarness whose agent has the continue margin and, when handOff is not
// nil, hands continuing turns to it, its Continued wired to the autonomy runner's as the app
// wires it.
func newHarnessWith(t *testing.T, margin time.Duration, handOff func(ownerID, turnID uuid.UUID) error) *harness {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t, 20)
	s, door := db.Store, db.Door
	owner, _ := db.Owner(t, "alice")
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ctx: ctx, store: s, door: door, owner: owner.ID, model: &obedient{}, clock: &clock{t: time.Now()}}

	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { h.received.Add(1) }))
	t.Cleanup(srv.Close)
	guard := egress.NewGuard(egress.Options{
		Allow:   []netip.AddrPort{netip.MustParseAddrPort(srv.Listener.Addr().String())},
		RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs,
		Lookup: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
	})
	deliverer := &delivery.Deliverer{Store: s, Guard: guard, Channels: door}
	if _, err := deliverer.SetChannel(ctx, owner.ID, fmt.Sprintf("https://example.com:%d/notify", netip.MustParseAddrPort(srv.Listener.Addr().String()).Port()), ""); err != nil {
		t.Fatal(err)
	}

	outcomes := autonomy.Recorder{Store: s, Notifier: deliverer, Now: h.clock.Now}
	var hooks agent.Hooks
	if handOff != nil {
		hooks.Continue = func(_ context.Context, ownerID, turnID uuid.UUID) error { return handOff(ownerID, turnID) }
		hooks.Ended = append(hooks.Ended, outcomes.Continued)
	}
	ag := agent.New(agent.Config{Model: h.model, Tools: reg, Store: s, Gate: &safety.Gate{}, Control: &safety.Control{}, MaxIterations: 4,
		SuspendTTL: time.Hour, ContinueMargin: margin}, hooks)
	h.runner = &autonomy.Runner{Recorder: outcomes, Agent: ag}
	h.hooks = &autonomy.Webhooks{Runner: h.runner, Directory: door}
	h.sched = &autonomy.Scheduler{Runner: h.runner, Directory: door, Webhooks: h.hooks}
	return h
}

// in runs fn in the owner's transaction.
func (h *harness) in(fn func(tx *store.Tx) error) {
	h.t.Helper()
	if err := h.store.WithOwner(h.ctx, h.owner, fn); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) runs() []store.JobRun {
	h.t.Helper()
	var runs []store.JobRun
	h.in(func(tx *store.Tx) error {
		var err error
		runs, err = tx.Runs.List(h.ctx, "", 100)
		return err
	})
	return runs
}

func (h *harness) notifications() []store.Notification {
	h.t.Helper()
	var ns []store.Notification
	h.in(func(tx *store.Tx) error {
		var err error
		ns, err = tx.Deliveries.Notifications(h.ctx, 100)
		return err
	})
	return ns
}

func (h *harness) pending() []steward.CallRecord {
	h.t.Helper()
	var calls []steward.CallRecord
	h.in(func(tx *store.Tx) error {
		var err error
		calls, err = tx.Journal.PendingCalls(h.ctx)
		return err
	})
	return calls
}

func (h *harness) turn(id uuid.UUID) steward.Turn {
	h.t.Helper()
	var turn steward.Turn
	h.in(func(tx *store.Tx) error {
		var err error
		turn, err = tx.Turns.Get(h.ctx, id)
		return err
	})
	return turn
}

func (h *harness) setKill(engaged bool) {
	h.t.Helper()
	h.in(func(tx *store.Tx) error { return tx.Safety.SetKill(h.ctx, engaged, "owner is on holiday") })
}

// addSchedule adds a schedule through the scheduler, the owner having allowed notify
// (autonomy.Setup, as `steward jobs add --allow-notify` does).
func (h *harness) addSchedule(job, expr, tz string) autonomy.ScheduleView {
	h.t.Helper()
	v, err := h.sched.AddSchedule(h.ctx, h.owner, job, expr, tz, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := autonomy.Setup(h.ctx, h.store, h.owner); err != nil {
		h.t.Fatal(err)
	}
	return v
}
