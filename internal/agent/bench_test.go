package agent_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/store"
)

// benchModel answers with zero delay: first it calls one tool, then, seeing the result, it
// answers. It records when it was last called, to time resume → first model call.
type benchModel struct {
	tool, args string
	lastCall   time.Time
}

func (m *benchModel) Name() string { return "bench" }

func (m *benchModel) Generate(_ context.Context, req llm.Request, _ llm.DeltaFunc) (llm.Response, error) {
	m.lastCall = time.Now()
	last := req.Messages[len(req.Messages)-1]
	if last.Parts[0].ToolResult != nil {
		return scripted.Text("done"), nil
	}
	return scripted.Calls(scripted.Call("c1", m.tool, m.args)), nil
}

// p50 reports the median of durations in milliseconds.
func p50(b *testing.B, ds []time.Duration, unit string) {
	slices.Sort(ds)
	if len(ds) > 0 {
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, unit)
	}
}

// BenchmarkTurnOneRead: the framework's overhead for one completed turn with one read tool
// (two model calls of zero delay), on real Postgres, with the kill switch and budgets on.
func BenchmarkTurnOneRead(b *testing.B) {
	h := newHarness(b, &benchModel{tool: "lookup", args: `{"key":"a"}`})
	withBudgets(b, h)
	var ds []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if v := h.start("what is a?"); v.Status != steward.StatusCompleted {
			b.Fatalf("view = %+v", v)
		}
		ds = append(ds, time.Since(start))
	}
	p50(b, ds, "p50-ms")
}

// BenchmarkSuspend: a turn whose one write suspends it, from message in to state stored.
func BenchmarkSuspend(b *testing.B) {
	h := newHarness(b, &benchModel{tool: "create_task", args: `{"title":"buy milk"}`})
	withBudgets(b, h)
	var ds []time.Duration
	var last steward.View
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		last = h.start("remind me to buy milk")
		ds = append(ds, time.Since(start))
	}
	p50(b, ds, "p50-ms")
	var size int
	err := h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
		var err error
		size, err = tx.Turns.StateSize(h.ctx, last.TurnID)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(size), "state-bytes")
}

// BenchmarkResume: confirm of a suspended turn, from request in to the first model call
// (claim + decisions + history read), and to the end of the resumed turn.
func BenchmarkResume(b *testing.B) {
	m := &benchModel{tool: "create_task", args: `{"title":"buy milk"}`}
	h := newHarness(b, m)
	withBudgets(b, h)
	views := make([]steward.View, 0, 1000)
	var toModel, total []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if len(views) == 0 {
			for range 200 {
				views = append(views, h.start("remind me to buy milk"))
			}
		}
		v := views[len(views)-1]
		views = views[:len(views)-1]
		b.StartTimer()
		start := time.Now()
		got, err := h.confirm(v, approveAll(v))
		if err != nil || got.Status != steward.StatusCompleted {
			b.Fatalf("confirm: %+v, %v", got, err)
		}
		total = append(total, time.Since(start))
		toModel = append(toModel, m.lastCall.Sub(start))
	}
	p50(b, toModel, "p50-to-model-ms")
	p50(b, total, "p50-ms")
}

// withBudgets turns the kill switch and budgets on, as in production (the deployment's cost
// figures reused for 10 s), with quotas high enough for the benchmark's thousands of turns.
func withBudgets(b *testing.B, h *harness) {
	h.runner.Control = &safety.Control{GlobalCost: h.door.GlobalCostToday, GlobalCostTTL: 10 * time.Second}
	if err := h.door.SetDailyLimits(h.ctx, h.owner, 1_000_000, 1_000_000_000); err != nil {
		b.Fatal(err)
	}
}
