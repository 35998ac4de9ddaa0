package httpapi_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// cancel posts POST /v1/turns/{id}/cancel as key.
func (e *env) cancel(id, key string) response {
	e.t.Helper()
	return e.do(request{method: "POST", path: "/v1/turns/" + id + "/cancel", key: key})
}

// streamEvents posts body to path as alice with Accept: text/event-stream and calls fn with
// each event as it arrives; it returns them all once the stream ends. It may run on another
// goroutine (it reports with t.Errorf).
func (e *env) streamEvents(path, body string, fn func(sseEvent)) []sseEvent {
	r, err := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Error(err)
		return nil
	}
	r.Header.Set("Authorization", "Bearer "+e.key)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		e.t.Error(err)
		return nil
	}
	defer resp.Body.Close()
	var events []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		switch line := sc.Text(); {
		case line == "":
			events = append(events, cur)
			fn(cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		}
	}
	return events
}

// streamChat starts a streamed POST /v1/chat of body as alice and returns the turn its
// started event names, and the channel its whole stream arrives on once it ends.
func (e *env) streamChat(body string) (steward.View, <-chan []sseEvent) {
	e.t.Helper()
	started := make(chan steward.View, 1)
	done := make(chan []sseEvent, 1)
	go func() {
		done <- e.streamEvents("/v1/chat", body, func(ev sseEvent) {
			if ev.typ == "started" {
				var v steward.View
				_ = json.Unmarshal(ev.data, &v)
				started <- v
			}
		})
	}()
	select {
	case v := <-started:
		return v, done
	case <-time.After(10 * time.Second):
		e.t.Fatal("no started event")
		return steward.View{}, nil
	}
}

// pendingCount is GET /v1/approvals/count as alice.
func (e *env) pendingCount() (writes, turns int) {
	e.t.Helper()
	resp := e.do(request{method: "GET", path: "/v1/approvals/count", key: e.key})
	if resp.status != http.StatusOK {
		e.t.Fatalf("GET /v1/approvals/count: %d %s", resp.status, resp.body)
	}
	var c struct{ Writes, Turns int }
	if err := json.Unmarshal(resp.body, &c); err != nil {
		e.t.Fatal(err)
	}
	return c.Writes, c.Turns
}

// A suspended turn that is cancelled is cancelled at once, and its pending write never runs:
// a later confirm is a 409 in words, the inbox and the badge no longer count it, a second
// cancel answers the same, and only alice can cancel it.
func TestCancelSuspendedTurnNeverRunsItsWrite(t *testing.T) {
	e := newEnv(t, nil,
		scripted.Reply(scripted.Calls(scripted.Call("c1", "create_task", `{"title":"buy milk"}`), scripted.Call("c2", "create_task", `{"title":"buy eggs"}`))),
		scripted.Reply(scripted.Text("Done.")))
	v := e.chat("add milk and eggs")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 2 {
		t.Fatalf("chat: %s with %d pending, want suspended with 2", v.Status, len(v.Pending))
	}
	if w, n := e.pendingCount(); w != 2 || n != 1 {
		t.Fatalf("count before cancel = %d writes in %d turns, want 2 in 1", w, n)
	}

	bob := e.addOwner("bob")
	errorOf(t, e.cancel(v.TurnID.String(), bob), http.StatusNotFound, "not_found")
	errorOf(t, e.cancel("not-a-uuid", e.key), http.StatusNotFound, "not_found")
	errorOf(t, e.cancel(uuid.NewString(), e.key), http.StatusNotFound, "not_found")

	c := viewOf(t, e.cancel(v.TurnID.String(), e.key))
	if c.Status != steward.StatusCancelled || len(c.Pending) != 0 || c.Error != steward.CancelledNote {
		t.Fatalf("cancel: %+v, want cancelled with no pending and %q", c, steward.CancelledNote)
	}
	again := viewOf(t, e.cancel(v.TurnID.String(), e.key))
	if again.Status != steward.StatusCancelled {
		t.Fatalf("second cancel: %s, want cancelled (idempotent)", again.Status)
	}

	msg := errorOf(t, e.confirm(v.TurnID, approveAll(v)), http.StatusConflict, "conflict").Error.Message
	if !strings.Contains(msg, "cancelled") {
		t.Errorf("confirm of a cancelled turn says %q, want it to say it was cancelled", msg)
	}
	if n := len(e.tasks()); n != 0 {
		t.Fatalf("%d tasks exist after the cancelled turn's confirm, want 0", n)
	}
	if w, n := e.pendingCount(); w != 0 || n != 0 {
		t.Errorf("count after cancel = %d writes in %d turns, want 0", w, n)
	}
	resp := e.do(request{method: "GET", path: "/v1/approvals", key: e.key})
	if strings.Contains(string(resp.body), v.TurnID.String()) {
		t.Errorf("the approvals inbox still lists the cancelled turn: %s", resp.body)
	}
	got := viewOf(t, e.do(request{method: "GET", path: "/v1/turns/" + v.TurnID.String(), key: e.key}))
	if got.Status != steward.StatusCancelled {
		t.Errorf("GET turn: %s, want cancelled", got.Status)
	}
	var calls []steward.CallRecord
	if err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		var err error
		calls, err = tx.Journal.Calls(e.ctx, v.TurnID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if c.Status != steward.CallDenied {
			t.Errorf("call %s journaled %s after the cancel, want denied", c.CallID, c.Status)
		}
	}
}

// A turn that ended cannot be cancelled: 409 in words, and it stays as it was.
func TestCancelEndedTurnIsConflict(t *testing.T) {
	e := newEnv(t, nil, scripted.Reply(scripted.Text("Hello.")))
	v := e.chat("hi")
	if v.Status != steward.StatusCompleted {
		t.Fatalf("chat: %s", v.Status)
	}
	msg := errorOf(t, e.cancel(v.TurnID.String(), e.key), http.StatusConflict, "conflict").Error.Message
	if !strings.Contains(msg, "already completed") {
		t.Errorf("cancel of a completed turn says %q", msg)
	}
	got := viewOf(t, e.do(request{method: "GET", path: "/v1/turns/" + v.TurnID.String(), key: e.key}))
	if got.Status != steward.StatusCompleted || got.CancelRequested {
		t.Errorf("after the refused cancel: %s (cancel_requested %v), want completed", got.Status, got.CancelRequested)
	}
}

// A running turn — here in another request, as it would be in another process — that is
// cancelled while its model call is in flight ends cancelled at the next step boundary: the
// write the model asked for (allowed by a standing rule, so it would run at once) never runs,
// the model is not called again, and the turn is never left running.
func TestCancelRunningTurnStopsBeforeItsNextStep(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	e := newEnv(t, nil, func(llm.Request) (llm.Response, error) {
		close(entered)
		<-release
		return scripted.Calls(scripted.Call("c1", "create_task", `{"title":"buy milk"}`)), nil
	}, scripted.Reply(scripted.Text("Done.")))
	if err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		_, err := tx.Rules.Create(e.ctx, steward.Rule{Tool: "create_task", Match: steward.MatchPattern, Effect: "allow", Source: "api"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The stream's first event names the turn, before the model call.
	v, done := e.streamChat(`{"message":"add milk"}`)
	<-entered
	if v.Status != steward.StatusRunning || v.TurnID == uuid.Nil {
		t.Fatalf("started event: %+v, want a running turn", v)
	}
	c := viewOf(t, e.cancel(v.TurnID.String(), e.key))
	if c.Status != steward.StatusRunning || !c.CancelRequested {
		t.Fatalf("cancel of a running turn: %s (cancel_requested %v), want running with cancel_requested", c.Status, c.CancelRequested)
	}
	close(release)
	var events []sseEvent
	select {
	case events = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled turn's stream did not end")
	}
	last := events[len(events)-1]
	if last.typ != "error" || !strings.Contains(string(last.data), `"status":"cancelled"`) {
		t.Fatalf("last event %s %s, want error with status cancelled", last.typ, last.data)
	}
	got := viewOf(t, e.do(request{method: "GET", path: "/v1/turns/" + v.TurnID.String(), key: e.key}))
	if got.Status != steward.StatusCancelled || got.Error != steward.CancelledNote {
		t.Fatalf("GET turn: %s %q, want cancelled", got.Status, got.Error)
	}
	if n := len(e.tasks()); n != 0 {
		t.Errorf("%d tasks after the cancel, want 0: the write ran", n)
	}
	if n := len(e.model.Requests()); n != 1 {
		t.Errorf("the model was called %d times, want once (nothing after the cancel)", n)
	}
	again := viewOf(t, e.cancel(v.TurnID.String(), e.key))
	if again.Status != steward.StatusCancelled {
		t.Errorf("cancel after the end: %s, want cancelled (idempotent)", again.Status)
	}
}

// A running turn whose model call hangs is not awaited when its owner cancels it: the call is
// abandoned within a few seconds, the turn ends cancelled, the stream says so, and the model's
// late answer (a write) never runs.
func TestCancelAbandonsAModelCallInFlight(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	e := newEnv(t, nil, func(llm.Request) (llm.Response, error) {
		close(entered)
		<-release // a model that does not answer until the test ends
		return scripted.Calls(scripted.Call("c1", "create_task", `{"title":"buy milk"}`)), nil
	})
	t.Cleanup(func() { close(release) }) // before the server's close, which waits for the turn
	v, done := e.streamChat(`{"message":"add milk"}`)
	<-entered
	asked := time.Now()
	viewOf(t, e.cancel(v.TurnID.String(), e.key))
	var events []sseEvent
	select {
	case events = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn still waits on its model 10 s after the cancel")
	}
	if took := time.Since(asked); took > 5*time.Second {
		t.Errorf("the cancel took %v to end the turn, want within a few seconds", took)
	}
	last := events[len(events)-1]
	if last.typ != "error" || !strings.Contains(string(last.data), `"status":"cancelled"`) {
		t.Fatalf("last event %s %s, want error with status cancelled", last.typ, last.data)
	}
	got := viewOf(t, e.do(request{method: "GET", path: "/v1/turns/" + v.TurnID.String(), key: e.key}))
	if got.Status != steward.StatusCancelled || got.Error != steward.CancelledNote {
		t.Fatalf("GET turn: %s %q, want cancelled", got.Status, got.Error)
	}
	if n := len(e.tasks()); n != 0 {
		t.Errorf("%d tasks after the cancel, want 0", n)
	}
}
