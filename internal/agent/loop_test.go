package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/store"
)

func TestReadOnlyTurnCompletes(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("c1", "lookup", `{"key":"a"}`))),
		scripted.Reply(scripted.Text("a is v-a")),
	)
	h := newHarness(t, m)
	v := h.start("what is a?")
	if v.Status != steward.StatusCompleted || v.Answer != "a is v-a" {
		t.Fatalf("view = %+v", v)
	}
	res := resultsOf(m.Requests()[1])
	if len(res) != 1 || res[0].IsError || !strings.Contains(string(res[0].Output), "v-a") {
		t.Fatalf("results sent back = %+v", res)
	}
	// The conversation keeps the whole turn; the next turn sees it as history.
	m2 := scripted.New(scripted.Reply(scripted.Text("ok")))
	h.runner.Model = m2
	v2, err := h.runner.Start(h.ctx, agent.Input{OwnerID: h.owner, ConversationID: &v.ConversationID, Message: "thanks"}, nil)
	if err != nil || v2.Status != steward.StatusCompleted {
		t.Fatalf("second turn: %+v, %v", v2, err)
	}
	if got := len(m2.Requests()[0].Messages); got != 5 {
		t.Fatalf("second turn sent %d messages, want 4 of history + 1", got)
	}
}

func TestMixedBatchSuspendsAndResumesInCallOrder(t *testing.T) {
	t.Parallel()
	var resumed llm.Request
	batch := scripted.Calls(
		scripted.Call("r1", "lookup", `{"key":"a"}`),
		scripted.Call("w1", "create_task", `{"title":"buy milk"}`),
		scripted.Call("r2", "lookup", `{"key":"b"}`),
		scripted.Call("w2", "create_task", `{"title":"call mum"}`),
	)
	batch.Usage = steward.Usage{InputTokens: 1000, OutputTokens: 40, CachedTokens: 200}
	m := scripted.New(
		scripted.Reply(batch),
		func(req llm.Request) (llm.Response, error) {
			resumed = req
			done := scripted.Text("done")
			done.Usage = steward.Usage{InputTokens: 1500, OutputTokens: 10}
			return done, nil
		},
	)
	h := newHarness(t, m)
	// A price of 1 micro-dollar per input token and 10 per output token.
	h.runner.Price = func(_ string, u steward.Usage) int64 { return u.InputTokens + 10*u.OutputTokens }
	v := h.start("do things")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 2 {
		t.Fatalf("view = %+v, want suspended with 2 pending writes", v)
	}
	if h.lookups.Load() != 2 {
		t.Fatalf("reads ran %d times before suspension, want 2", h.lookups.Load())
	}
	if n := len(h.tasks()); n != 0 {
		t.Fatalf("%d tasks exist before approval", n)
	}
	ds := approveAll(v)
	ds[1].Approve, ds[1].Message = false, "not today"
	v, err := h.confirm(v, ds)
	if err != nil || v.Status != steward.StatusCompleted {
		t.Fatalf("confirm: %+v, %v", v, err)
	}
	if h.lookups.Load() != 2 {
		t.Fatalf("reads re-ran on resume: %d runs", h.lookups.Load())
	}
	res := resultsOf(resumed)
	var ids []string
	for _, r := range res {
		ids = append(ids, r.CallID)
	}
	if strings.Join(ids, ",") != "r1,w1,r2,w2" {
		t.Fatalf("results order = %v, want the model's call order", ids)
	}
	if res[1].IsError || !res[3].IsError || !strings.Contains(string(res[3].Output), "not today") {
		t.Fatalf("approved/denied results = %s / %s", res[1].Output, res[3].Output)
	}
	tasks := h.tasks()
	if len(tasks) != 1 || tasks[0].Title != "buy milk" {
		t.Fatalf("tasks = %+v, want only the approved one", tasks)
	}
	j := h.journal(v.TurnID)
	if j["w1"].Status != steward.CallSucceeded || j["w2"].Status != steward.CallDenied || j["r1"].Status != steward.CallSucceeded {
		t.Fatalf("journal = %+v", j)
	}
	// Both model calls, before and after the suspension, are counted and priced:
	// 2500 input, 50 output, 200 cached tokens; (1000+400) + (1500+100) micro-dollars.
	if want := (steward.UsageView{InputTokens: 2500, OutputTokens: 50, CachedTokens: 200, CostUSD: 0.003}); v.Usage != want {
		t.Fatalf("usage = %+v, want %+v", v.Usage, want)
	}
}

func TestInvalidArgumentsAreCorrected(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("c1", "create_task", `{"name":"milk"}`))),
		func(req llm.Request) (llm.Response, error) {
			res := resultsOf(req)
			if len(res) != 1 || !res[0].IsError || !strings.Contains(outputString(res[0]), "title") {
				return llm.Response{}, errors.New("the model was not told what was wrong")
			}
			return scripted.Calls(scripted.Call("c2", "create_task", `{"title":"milk"}`)), nil
		},
	)
	h := newHarness(t, m)
	v := h.start("add milk")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 || v.Pending[0].CallID != "c2" {
		t.Fatalf("view = %+v, want the corrected call pending", v)
	}
}

func TestUnknownToolBecomesAResult(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("c1", "delete_everything", `{}`))),
		func(req llm.Request) (llm.Response, error) {
			res := resultsOf(req)
			if len(res) != 1 || !res[0].IsError || !strings.Contains(outputString(res[0]), "create_task") {
				return llm.Response{}, errors.New("unknown tool not reported with the available tools")
			}
			return scripted.Text("I cannot do that."), nil
		},
	)
	h := newHarness(t, m)
	if v := h.start("delete everything"); v.Status != steward.StatusCompleted {
		t.Fatalf("view = %+v", v)
	}
}

func TestIterationCapEndsWithToolFreeAnswer(t *testing.T) {
	t.Parallel()
	loop := scripted.Reply(scripted.Calls(scripted.Call("", "get_current_time", `{}`)))
	var final llm.Request
	m := scripted.New(loop, loop, loop, loop, func(req llm.Request) (llm.Response, error) {
		final = req
		return scripted.Text("It is late."), nil
	})
	h := newHarness(t, m)
	v := h.start("time, forever")
	if v.Status != steward.StatusCompleted || v.Answer != "It is late." || !v.IterationLimit {
		t.Fatalf("view = %+v, want completed at the iteration limit", v)
	}
	if len(m.Requests()) != 5 || len(final.Tools) != len(m.Requests()[0].Tools) || !final.NoToolCalls {
		t.Fatalf("%d calls, final tools %v (calls forbidden: %v): want 4 with tools + 1 declaring the same tools with calls forbidden",
			len(m.Requests()), final.Tools, final.NoToolCalls)
	}
}

func TestBlockedAndRefusedAreSurfaced(t *testing.T) {
	t.Parallel()
	for _, finish := range []llm.Finish{llm.FinishBlocked, llm.FinishRefused, llm.FinishMaxTokens} {
		t.Run(string(finish), func(t *testing.T) {
			t.Parallel()
			resp := scripted.Text("half an ans")
			resp.Finish, resp.FinishDetail = finish, "SAFETY"
			h := newHarness(t, scripted.New(scripted.Reply(resp)))
			v := h.start("something")
			if v.Status != steward.StatusFailed || v.Answer != "" || v.Error == "" {
				t.Fatalf("view = %+v, want failed with a reason and no half answer", v)
			}
		})
	}
}

func TestModelErrorFailsTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, scripted.New(scripted.Fail(errors.New("upstream 500 with secret detail"))))
	v := h.start("hi")
	if v.Status != steward.StatusFailed || strings.Contains(v.Error, "secret") {
		t.Fatalf("view = %+v", v)
	}
}

func TestBadInputLeavesNoRow(t *testing.T) {
	t.Parallel()
	h := newHarness(t, scripted.New())
	for _, msg := range []string{"", "   ", strings.Repeat("x", agent.MaxMessageRunes+1)} {
		_, err := h.runner.Start(h.ctx, agent.Input{OwnerID: h.owner, Message: msg}, nil)
		if steward.ErrorCode(err) != steward.CodeInvalid {
			t.Fatalf("message of %d bytes: err = %v, want invalid", len(msg), err)
		}
	}
	missing := steward.Task{}.ID
	_, err := h.runner.Start(h.ctx, agent.Input{OwnerID: h.owner, Message: "hi", ConversationID: &missing}, nil)
	if steward.ErrorCode(err) != steward.CodeNotFound {
		t.Fatalf("unknown conversation: err = %v", err)
	}
	var turns []steward.Turn
	h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
		turns, err = tx.Turns.List(h.ctx, "", 10)
		return err
	})
	if len(turns) != 0 {
		t.Fatalf("bad input left %d turns", len(turns))
	}
}
