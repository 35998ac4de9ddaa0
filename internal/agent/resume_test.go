package agent_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/gemini"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

func suspendOne(t *testing.T, extra ...scripted.Step) (*harness, steward.View) {
	t.Helper()
	steps := append([]scripted.Step{scripted.Reply(scripted.Calls(scripted.Call("w1", "create_task", `{"title":"buy milk"}`)))}, extra...)
	h := newHarness(t, scripted.New(steps...))
	v := h.start("remind me to buy milk")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
		t.Fatalf("view = %+v, want suspended", v)
	}
	return h, v
}

func TestFiftyConcurrentConfirmsExecuteOnce(t *testing.T) {
	t.Parallel()
	h, v := suspendOne(t, scripted.Reply(scripted.Text("done")))
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[steward.Code]int{}
	ok := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := h.confirm(v, approveAll(v))
			mu.Lock()
			defer mu.Unlock()
			if err == nil && got.Status == steward.StatusCompleted {
				ok++
			} else {
				codes[steward.ErrorCode(err)]++
			}
		}()
	}
	wg.Wait()
	if ok != 1 || codes[steward.CodeConflict] != 49 {
		t.Fatalf("%d succeeded, errors by code %v: want 1 and 49 conflicts", ok, codes)
	}
	if n := len(h.tasks()); n != 1 {
		t.Fatalf("%d tasks, want exactly 1", n)
	}
	if j := h.journal(v.TurnID); j["w1"].Status != steward.CallSucceeded {
		t.Fatalf("journal = %+v", j)
	}
}

func TestConfirmRefusesBadDecisions(t *testing.T) {
	t.Parallel()
	h, v := suspendOne(t, scripted.Reply(scripted.Text("done")))
	p := v.Pending[0]
	other, _, err := h.door.CreateOwner(h.ctx, "mallory")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		ds   []steward.Decision
		run  func([]steward.Decision) error
		want steward.Code
	}{
		{"stale args_hash", []steward.Decision{{CallID: p.CallID, Approve: true, ArgsHash: strings.Repeat("0", 64)}}, nil, steward.CodeConflict},
		{"missing decision", nil, nil, steward.CodeInvalid},
		{"unknown call id", []steward.Decision{{CallID: "nope", Approve: true, ArgsHash: p.ArgsHash}, {CallID: p.CallID, Approve: true, ArgsHash: p.ArgsHash}}, nil, steward.CodeInvalid},
		{"duplicate decision", []steward.Decision{{CallID: p.CallID, Approve: true, ArgsHash: p.ArgsHash}, {CallID: p.CallID, Approve: false, ArgsHash: p.ArgsHash}}, nil, steward.CodeInvalid},
		{"another owner's turn", approveAll(v), func(ds []steward.Decision) error {
			_, err := h.runner.Confirm(h.ctx, other.ID, v.TurnID, ds, nil)
			return err
		}, steward.CodeNotFound},
	}
	for _, tc := range cases {
		run := tc.run
		if run == nil {
			run = func(ds []steward.Decision) error { _, err := h.confirm(v, ds); return err }
		}
		if err := run(tc.ds); steward.ErrorCode(err) != tc.want {
			t.Errorf("%s: err = %v, want %s", tc.name, err, tc.want)
		}
	}
	if n := len(h.tasks()); n != 0 {
		t.Fatalf("refused confirms executed %d writes", n)
	}
	if got, err := h.runner.Turn(h.ctx, h.owner, v.TurnID); err != nil || got.Status != steward.StatusSuspended {
		t.Fatalf("turn after refused confirms: %+v, %v (want still suspended)", got, err)
	}
	// A correct confirm still works afterwards.
	if got, err := h.confirm(v, approveAll(v)); err != nil || got.Status != steward.StatusCompleted {
		t.Fatalf("confirm: %+v, %v", got, err)
	}
}

func TestCrashBetweenExecutingAndResultIsUnknown(t *testing.T) {
	t.Parallel()
	var told llm.Request
	m := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("m1", "send_mail", `{"to":"bob@example.com"}`))),
		func(req llm.Request) (llm.Response, error) {
			told = req
			return scripted.Text("I am not sure it was sent."), nil
		},
	)
	h := newHarness(t, m)
	h.runner.Lease = 200 * time.Millisecond
	v := h.start("mail bob")
	// The process "dies" right after the call was journaled executing.
	h.runner.SetAfterExecuting(func(string) error { runtime.Goexit(); return nil })
	done := make(chan struct{})
	go func() { defer close(done); h.confirm(v, approveAll(v)) }()
	<-done
	if j := h.journal(v.TurnID); j["m1"].Status != steward.CallExecuting {
		t.Fatalf("journal after crash = %+v", j["m1"])
	}
	h.runner.SetAfterExecuting(nil)
	h.clock.Advance(300 * time.Millisecond) // the dead resume's lease lapses
	got, err := h.confirm(v, approveAll(v))
	if err != nil || got.Status != steward.StatusCompleted {
		t.Fatalf("recovery confirm: %+v, %v", got, err)
	}
	if h.sends.Load() != 0 {
		t.Fatalf("the interrupted call ran %d times on recovery, want 0", h.sends.Load())
	}
	if j := h.journal(v.TurnID); j["m1"].Status != steward.CallUnknown {
		t.Fatalf("journal = %+v, want unknown", j["m1"])
	}
	res := resultsOf(told)
	if len(res) != 1 || !strings.Contains(outputString(res[0]), "outcome unknown") {
		t.Fatalf("model was told %+v", res)
	}
}

func TestAlwaysStoresARuleAndResumedTurnCanSuspendAgain(t *testing.T) {
	t.Parallel()
	h, v := suspendOne(t,
		scripted.Reply(scripted.Calls(scripted.Call("w2", "notify", `{"message":"milk added"}`))),
		scripted.Reply(scripted.Text("done")),
		scripted.Reply(scripted.Calls(scripted.Call("w3", "create_task", `{"title":"buy bread"}`))),
		scripted.Reply(scripted.Text("added bread")),
	)
	ds := approveAll(v)
	ds[0].Always = steward.AlwaysTool
	v2, err := h.confirm(v, ds)
	if err != nil || v2.Status != steward.StatusSuspended || v2.TurnID != v.TurnID || v2.Pending[0].Tool != "notify" {
		t.Fatalf("resumed turn: %+v, %v; want it suspended again on notify", v2, err)
	}
	v3, err := h.confirm(v2, approveAll(v2))
	if err != nil || v3.Status != steward.StatusCompleted {
		t.Fatalf("second confirm: %+v, %v", v3, err)
	}
	// The standing rule from "always" lets the next create_task run without asking.
	v4 := h.start("and bread")
	if v4.Status != steward.StatusCompleted || len(h.tasks()) != 2 {
		t.Fatalf("with an allow rule: %+v, %d tasks", v4, len(h.tasks()))
	}
	if j := h.journal(v4.TurnID); !strings.HasPrefix(j["w3"].DecidedBy, "rule:") {
		t.Fatalf("journal = %+v, want decided by the rule", j["w3"])
	}
}

func TestSuspendedTurnExpires(t *testing.T) {
	t.Parallel()
	h := newHarness(t, scripted.New(scripted.Reply(scripted.Calls(scripted.Call("w1", "create_task", `{"title":"milk"}`)))))
	h.runner.SuspendTTL = time.Minute
	v := h.start("milk")
	h.clock.Advance(time.Minute)
	_, err := h.confirm(v, approveAll(v))
	if steward.ErrorCode(err) != steward.CodeConflict || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("err = %v, want conflict: expired", err)
	}
	err = h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
		n, err := tx.Sweep.Expire(h.ctx, h.clock.Now())
		if n != 1 {
			t.Errorf("swept %d turns, want 1", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := h.runner.Turn(h.ctx, h.owner, v.TurnID); got.Status != steward.StatusExpired || len(h.tasks()) != 0 {
		t.Fatalf("turn = %+v, tasks %d", got, len(h.tasks()))
	}
}

func TestProviderMetadataSurvivesSuspension(t *testing.T) {
	t.Parallel()
	sig := []byte{0xff, 0x00, 'x', 0x80, '"', '\\'}
	call := scripted.Calls(scripted.Call("w1", "create_task", `{"title":"milk"}`))
	call.Message.Parts[0].ProviderMeta = sig
	var resumed llm.Request
	h := newHarness(t, scripted.New(scripted.Reply(call), func(req llm.Request) (llm.Response, error) {
		resumed = req
		return scripted.Text("ok"), nil
	}))
	v := h.start("milk")
	if _, err := h.confirm(v, approveAll(v)); err != nil {
		t.Fatal(err)
	}
	got := resumed.Messages[len(resumed.Messages)-2].Parts[0]
	if got.ToolCall == nil || !bytes.Equal(got.ProviderMeta, sig) {
		t.Fatalf("part after resume = %+v, want signature %x", got, sig)
	}
}

// TestGeminiThoughtSignatureRoundTrip runs the real Gemini adapter against a fake of the REST
// API: the signature of the function call comes back on the request after suspend → jsonb →
// resume, and the minted id is never sent.
func TestGeminiThoughtSignatureRoundTrip(t *testing.T) {
	t.Parallel()
	const sig = "c2lnbmF0dXJlLW9wYXF1ZS1ieXRlcw=="
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(b, &body)
		mu.Lock()
		bodies = append(bodies, body)
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"create_task","args":{"title":"milk"}},"thoughtSignature":"`+sig+`"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5}}`)
			return
		}
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Added."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":2,"cachedContentTokenCount":8}}`)
	}))
	defer srv.Close()
	model, err := gemini.New(t.Context(), gemini.Config{APIKey: "test-key", BaseURL: srv.URL, Model: "gemini-test"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, model)
	v := h.start("add milk")
	if v.Status != steward.StatusSuspended {
		t.Fatalf("view = %+v", v)
	}
	v, err = h.confirm(v, approveAll(v))
	if err != nil || v.Status != steward.StatusCompleted || v.Answer != "Added." {
		t.Fatalf("confirm: %+v, %v", v, err)
	}
	if v.Usage.InputTokens != 30 || v.Usage.CachedTokens != 8 {
		t.Fatalf("usage across suspension = %+v, want summed", v.Usage)
	}
	contents := bodies[1]["contents"].([]any)
	modelTurn := contents[1].(map[string]any)["parts"].([]any)[0].(map[string]any)
	if modelTurn["thoughtSignature"] != sig {
		t.Fatalf("signature sent back = %v, want %s", modelTurn["thoughtSignature"], sig)
	}
	if _, hasID := modelTurn["functionCall"].(map[string]any)["id"]; hasID {
		t.Fatalf("a minted call id was sent to Gemini: %v", modelTurn)
	}
	resp := contents[2].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionResponse"].(map[string]any)
	if _, hasID := resp["id"]; hasID || resp["name"] != "create_task" {
		t.Fatalf("function response = %v", resp)
	}
}

// TestStaleRunningTurnIsFailed: a turn whose process died while it was running (no suspend,
// no finish) is failed by the sweep, not left running forever.
func TestStaleRunningTurnIsFailed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, scripted.New())
	var turn steward.Turn
	err := h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
		conv, err := tx.Conversations.Create(h.ctx, "x")
		if err != nil {
			return err
		}
		turn, err = tx.Turns.Create(h.ctx, conv.ID, steward.TriggerChat, "m", time.Now(), time.Hour)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sweep := func(olderThan time.Duration) int64 {
		var n int64
		if err := h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
			var err error
			n, err = tx.Sweep.FailStale(h.ctx, h.clock.Now(), h.clock.Now().Add(-olderThan))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := sweep(time.Hour); n != 0 {
		t.Fatalf("a fresh running turn was swept (%d)", n)
	}
	h.clock.Advance(2 * time.Hour)
	if n := sweep(time.Hour); n != 1 {
		t.Fatalf("swept %d turns, want 1", n)
	}
	got, err := h.runner.Turn(h.ctx, h.owner, turn.ID)
	if err != nil || got.Status != steward.StatusFailed || !strings.Contains(got.Error, "interrupted") {
		t.Fatalf("turn = %+v, %v", got, err)
	}
}

// TestLocalWriteJournaledInTwoMoves: a confirmed database-local write moves its journal row
// twice in the confirm's transaction — pending → approved (the decision), then approved →
// succeeded with its result — not through "executing", which nothing outside that
// transaction could ever see. The task exists once and the call is succeeded.
func TestLocalWriteJournaledInTwoMoves(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &benchModel{tool: "create_task", args: `{"title":"buy milk"}`})
	u, _, trace := testdb.Counted(t, h.appURL)
	s, err := store.Open(h.ctx, u, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	h.runner.Store = s
	v := h.start("remind me to buy milk")
	before := len(trace.String())
	got, err := h.confirm(v, approveAll(v))
	if err != nil || got.Status != steward.StatusCompleted {
		t.Fatalf("confirm: %+v, %v", got, err)
	}
	// The proxy writes a connection's round trip when its next one starts or the connection
	// closes: closed, every round trip of the confirm is in the trace once it stops growing.
	s.Close()
	confirm := settled(trace)[before:]
	if n := strings.Count(confirm, "UpdateToolCall") - strings.Count(confirm, "prepare UpdateToolCall"); n != 2 {
		t.Errorf("the confirm moved the journal %d times, want 2 (decision, result):\n%s", n, confirm)
	}
	if tasks := h.tasks(); len(tasks) != 1 || tasks[0].Title != "buy milk" {
		t.Errorf("tasks = %+v, want buy milk once", tasks)
	}
	for id, c := range h.journal(v.TurnID) {
		if c.Status != steward.CallSucceeded || !strings.Contains(string(c.Result), "buy milk") {
			t.Errorf("call %s: %s %s, want succeeded with the task", id, c.Status, c.Result)
		}
	}
}

// settled is trace once it has not grown for 200 ms (at most 10 s): the proxy writes a closed
// connection's last round trip from its own goroutine.
func settled(trace *testdb.Buffer) string {
	last := trace.String()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		now := trace.String()
		if now == last {
			return now
		}
		last = now
	}
	return last
}
