package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// withSafety adds the kill switch, budgets and a money-moving "pay" tool to a harness.
func withSafety(h *harness) {
	h.runner.Control = &safety.Control{GlobalCost: h.door.GlobalCostToday}
	type payArgs struct {
		To       string `json:"to"`
		Amount   int64  `json:"amount_minor"`
		Currency string `json:"currency"`
	}
	pay := tools.New("pay", "Pay someone.", steward.KindWrite, func(_ context.Context, _ tools.Env, a payArgs) (any, error) {
		return map[string]any{"paid": a.Amount}, nil
	})
	pay.Money = &tools.MoneyArgs{Amount: "amount_minor", Currency: "currency"}
	reg, err := tools.NewRegistry(append(toolstest.Tools(), pay, mustTool(h, "lookup"))...)
	if err != nil {
		h.t.Fatal(err)
	}
	h.runner.Tools = reg
}

func mustTool(h *harness, name string) tools.Tool {
	t, ok := h.runner.Tools.Get(name)
	if !ok {
		h.t.Fatalf("no tool %s", name)
	}
	return t
}

func (h *harness) tx(fn func(tx *store.Tx) error) {
	h.t.Helper()
	if err := h.store.WithOwner(h.ctx, h.owner, fn); err != nil {
		h.t.Fatal(err)
	}
}

func TestKillSwitchFromAnotherConnectionAbortsBeforeNextModelCall(t *testing.T) {
	t.Parallel()
	var h *harness
	m := scripted.New(
		func(llm.Request) (llm.Response, error) {
			// While the turn runs, the owner hits stop from another request (another connection).
			if err := h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error { return tx.Safety.SetKill(h.ctx, true, "stop now") }); err != nil {
				return llm.Response{}, err
			}
			return scripted.Calls(scripted.Call("r1", "lookup", `{"key":"a"}`)), nil
		},
		scripted.Reply(scripted.Text("should never be asked")),
	)
	h = newHarness(t, m)
	withSafety(h)
	v := h.start("look a up")
	if v.Status != steward.StatusAborted || !strings.Contains(v.Error, "stop now") {
		t.Fatalf("view = %+v, want aborted with the reason", v)
	}
	if len(m.Requests()) != 1 || h.lookups.Load() != 0 {
		t.Fatalf("%d model calls, %d tool runs after the stop; want 1 and 0", len(m.Requests()), h.lookups.Load())
	}
	// A new turn is refused outright, with its reason, and leaves no turn behind.
	_, err := h.runner.Start(h.ctx, agent.Input{OwnerID: h.owner, Message: "hello"}, nil)
	var e *steward.Error
	if !errors.As(err, &e) || e.Code != steward.CodeKilled || e.Reason != steward.ReasonKilled {
		t.Fatalf("start while stopped: %v", err)
	}
	h.tx(func(tx *store.Tx) error {
		turns, err := tx.Turns.List(h.ctx, "", 10)
		if len(turns) != 1 {
			t.Errorf("%d turns, want only the aborted one", len(turns))
		}
		return err
	})
}

func TestGlobalKillSwitchRefusesConfirm(t *testing.T) {
	t.Parallel()
	h, v := suspendOne(t)
	withSafety(h)
	if err := h.door.SetGlobalKill(h.ctx, true, "maintenance"); err != nil {
		t.Fatal(err)
	}
	_, err := h.confirm(v, approveAll(v))
	if steward.ErrorCode(err) != steward.CodeKilled {
		t.Fatalf("confirm while the deployment is stopped: %v", err)
	}
	if got, _ := h.runner.Turn(h.ctx, h.owner, v.TurnID); got.Status != steward.StatusSuspended || len(h.tasks()) != 0 {
		t.Fatalf("turn = %s, %d tasks: want it still suspended, nothing run", got.Status, len(h.tasks()))
	}
}

func TestCapsBeatStandingAllowRules(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("p1", "pay", `{"to":"bob","amount_minor":5000,"currency":"EUR"}`))),
		func(req llm.Request) (llm.Response, error) {
			if res := resultsOf(req); len(res) != 1 || !strings.Contains(outputString(res[0]), "cap:per_action") {
				return llm.Response{}, errors.New("the model was not told the cap refused it")
			}
			return scripted.Text("Over your limit."), nil
		},
	)
	h := newHarness(t, m)
	withSafety(h)
	h.tx(func(tx *store.Tx) error {
		if _, err := tx.Rules.Create(h.ctx, steward.Rule{Tool: "pay", Match: steward.MatchPattern, Effect: "allow", Source: "api"}); err != nil {
			return err
		}
		_, err := tx.Safety.SetCap(h.ctx, steward.Cap{Currency: "EUR", PerActionMinor: 1000, WindowMinor: 3000, Window: time.Hour})
		return err
	})
	v := h.start("pay bob 50 euros")
	if v.Status != steward.StatusCompleted {
		t.Fatalf("view = %+v", v)
	}
	if j := h.journal(v.TurnID); j["p1"].Status != steward.CallDenied || j["p1"].DecidedBy != "cap:per_action" {
		t.Fatalf("journal = %+v, want denied by the cap before any rule or human", j["p1"])
	}
}

func TestRollingWindowSurvivesRestart(t *testing.T) {
	t.Parallel()
	pay := func(id string) scripted.Step {
		return scripted.Reply(scripted.Calls(scripted.Call(id, "pay", `{"to":"bob","amount_minor":800,"currency":"EUR"}`)))
	}
	m := scripted.New(pay("p1"), scripted.Reply(scripted.Text("paid")), pay("p2"), scripted.Reply(scripted.Text("paid")), pay("p3"), scripted.Reply(scripted.Text("refused")))
	h := newHarness(t, m)
	withSafety(h)
	h.tx(func(tx *store.Tx) error {
		_, err := tx.Safety.SetCap(h.ctx, steward.Cap{Currency: "EUR", PerActionMinor: 1000, WindowMinor: 2000, Window: time.Hour})
		return err
	})
	// No standing rule can allow a money tool: the owner approves each payment.
	approved := func(msg string) steward.View {
		v := h.start(msg)
		if _, err := h.confirm(v, approveAll(v)); err != nil {
			t.Fatalf("confirm %q: %v", msg, err)
		}
		return v
	}
	v1, v2 := approved("pay"), approved("pay again")
	// Restart: a new process, a new pool. The ledger is in Postgres, so the window remembers.
	s2, err := store.Open(h.ctx, h.store.URL(), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	h.runner.Store = s2
	v3 := h.start("and again")
	got := []steward.CallStatus{h.journal(v1.TurnID)["p1"].Status, h.journal(v2.TurnID)["p2"].Status, h.journal(v3.TurnID)["p3"].Status}
	if got[0] != steward.CallSucceeded || got[1] != steward.CallSucceeded || got[2] != steward.CallDenied {
		t.Fatalf("journal = %v, want succeeded, succeeded, denied (1600 + 800 > 2000)", got)
	}
	if by := h.journal(v3.TurnID)["p3"].DecidedBy; by != "cap:window" {
		t.Fatalf("third payment decided by %q", by)
	}
}

func TestBudgetRefusalsCarryReasonsAndResumeIsNotRefusedForQuota(t *testing.T) {
	t.Parallel()
	h, v := suspendOne(t, scripted.Reply(scripted.Text("done")))
	withSafety(h)
	if err := h.door.SetDailyLimits(h.ctx, h.owner, 1, 5_000_000); err != nil {
		t.Fatal(err)
	}
	// The suspended turn used today's one message; a new message is refused…
	_, err := h.runner.Start(h.ctx, agent.Input{OwnerID: h.owner, Message: "one more"}, nil)
	var e *steward.Error
	if !errors.As(err, &e) || e.Code != steward.CodeOverBudget || e.Reason != steward.ReasonOwnerQuota {
		t.Fatalf("over quota: %v", err)
	}
	// …but the resume of the suspended turn is not.
	if got, err := h.confirm(v, approveAll(v)); err != nil || got.Status != steward.StatusCompleted {
		t.Fatalf("resume over quota: %+v, %v", got, err)
	}
	// The deployment cap refuses with its own reason.
	if err := h.door.SetGlobalCostCap(h.ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := h.door.SetDailyLimits(h.ctx, h.owner, 100, 5_000_000); err != nil {
		t.Fatal(err)
	}
	_, err = h.runner.Start(h.ctx, agent.Input{OwnerID: h.owner, Message: "one more"}, nil)
	if !errors.As(err, &e) || e.Code != steward.CodeOverBudget || e.Reason != steward.ReasonDailyCap {
		t.Fatalf("over the deployment cap: %v", err)
	}
}

func TestAuditLogTellsOneContinuousStory(t *testing.T) {
	t.Parallel()
	resp := func(r llm.Response, in, out int64) scripted.Step {
		r.Usage = steward.Usage{InputTokens: in, OutputTokens: out}
		return scripted.Reply(r)
	}
	m := scripted.New(
		resp(scripted.Calls(scripted.Call("w1", "create_task", `{"title":"buy milk"}`)), 100, 10),
		resp(scripted.Text("Added."), 150, 5),
	)
	h := newHarness(t, m)
	withSafety(h)
	h.runner.Price = func(string, steward.Usage) int64 { return 7 }
	v := h.start("remind me to buy milk")
	v, err := h.confirm(v, approveAll(v))
	if err != nil || v.Status != steward.StatusCompleted {
		t.Fatalf("%+v, %v", v, err)
	}
	if v.Usage.InputTokens != 250 || v.Usage.OutputTokens != 15 || v.Usage.CostUSD != 14e-6 {
		t.Fatalf("usage = %+v, want summed across the suspension", v.Usage)
	}
	var events []steward.Event
	h.tx(func(tx *store.Tx) error {
		var err error
		events, err = tx.Journal.TurnEvents(h.ctx, v.TurnID)
		return err
	})
	var story []string
	for i, e := range events {
		if e.Seq != i+1 {
			t.Fatalf("event %d has seq %d: the sequence is not continuous", i, e.Seq)
		}
		kind := e.Kind
		if kind == "gate_decision" {
			var d struct{ By string }
			json.Unmarshal(e.Data, &d)
			kind += "(" + d.By + ")"
		}
		story = append(story, kind)
	}
	want := "turn_started model_call tool_requested gate_decision() turn_suspended turn_resumed gate_decision(human) tool_result model_call turn_completed"
	if strings.Join(story, " ") != want {
		t.Fatalf("story:\n got %s\nwant %s", strings.Join(story, " "), want)
	}
}

func TestSecretsNeverReachLogsOrTrace(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-very-secret"
	h := newHarness(t, scripted.New(scripted.Fail(errors.New("dial postgres://steward_app:"+secret+"@db:5432/x: Authorization: Bearer "+secret))))
	var logs strings.Builder
	ctx := zerolog.New(&logs).WithContext(h.ctx)
	v, err := h.runner.Start(ctx, agent.Input{OwnerID: h.owner, Message: "hi"}, nil)
	if err != nil || v.Status != steward.StatusFailed {
		t.Fatalf("%+v, %v", v, err)
	}
	if !strings.Contains(logs.String(), "model call failed") {
		t.Fatalf("the failure was not logged: %s", logs.String())
	}
	var events []steward.Event
	h.tx(func(tx *store.Tx) error {
		var err error
		events, err = tx.Journal.TurnEvents(h.ctx, v.TurnID)
		return err
	})
	trail, _ := json.Marshal(events)
	for where, text := range map[string]string{"log": logs.String(), "trace": string(trail), "turn": v.Error} {
		if strings.Contains(text, secret) {
			t.Errorf("the secret reached the %s", where) // never print it
		}
	}
}

// TestMoneyAndEgressToolsOfferNoAlways: a money tool and an egress tool are shown without
// "always", an approval with always is refused with nothing decided, and a standing allow
// rule (from the rules API) never runs them without asking.
func TestMoneyAndEgressToolsOfferNoAlways(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ tool, args string }{
		{"pay", `{"to":"bob","amount_minor":500,"currency":"EUR"}`},
		{"send_mail", `{"to":"bob@example.com"}`},
	} {
		m := scripted.New(scripted.Reply(scripted.Calls(scripted.Call("c1", tc.tool, tc.args))), scripted.Reply(scripted.Text("done")))
		h := newHarness(t, m) // its send_mail is External
		if tc.tool == "pay" {
			withSafety(h)
		}
		h.tx(func(tx *store.Tx) error {
			if _, err := tx.Rules.Create(h.ctx, steward.Rule{Tool: tc.tool, Match: steward.MatchPattern, Effect: "allow", Source: "api"}); err != nil {
				return err
			}
			_, err := tx.Safety.SetCap(h.ctx, steward.Cap{Currency: "EUR", PerActionMinor: 1000, WindowMinor: 3000, Window: time.Hour})
			return err
		})
		v := h.start("do it")
		if v.Status != steward.StatusSuspended || len(v.Pending) != 1 || v.Pending[0].AlwaysOffered {
			t.Fatalf("%s with a tool-wide allow rule: %+v; want it asked, without always offered", tc.tool, v)
		}
		for _, scope := range []steward.Always{steward.AlwaysArgs, steward.AlwaysTool} {
			ds := approveAll(v)
			ds[0].Always = scope
			_, err := h.confirm(v, ds)
			var e *steward.Error
			if !errors.As(err, &e) || e.Code != steward.CodeInvalid || !strings.Contains(e.Message, "always is not offered for "+tc.tool) {
				t.Fatalf("%s: confirm with always %q: %v", tc.tool, scope, err)
			}
		}
		if got, _ := h.runner.Turn(h.ctx, h.owner, v.TurnID); got.Status != steward.StatusSuspended || h.journal(v.TurnID)["c1"].Status != steward.CallPending {
			t.Fatalf("%s: after refused always: turn %s, call %s; want nothing decided", tc.tool, got.Status, h.journal(v.TurnID)["c1"].Status)
		}
		if got, err := h.confirm(v, approveAll(v)); err != nil || got.Status != steward.StatusCompleted {
			t.Fatalf("%s: plain approval: %+v, %v", tc.tool, got, err)
		}
	}
}
