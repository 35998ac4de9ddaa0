package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
)

func TestChatCompletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, text("Hello, Alice."), text("Hello again."))
	resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hi there"}`})
	if resp.header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id in the response")
	}
	v := viewOf(t, resp)
	if v.Status != steward.StatusCompleted || v.Answer != "Hello, Alice." || v.TurnID == uuid.Nil || v.ConversationID == uuid.Nil {
		t.Fatalf("view = %+v", v)
	}

	got := viewOf(t, e.do(request{method: "GET", path: "/v1/turns/" + v.TurnID.String(), key: e.key}))
	if got.TurnID != v.TurnID || got.Status != steward.StatusCompleted || got.Answer != v.Answer {
		t.Fatalf("GET turn = %+v", got)
	}

	var list struct {
		Conversations []steward.Conversation `json:"conversations"`
	}
	resp = e.do(request{method: "GET", path: "/v1/conversations", key: e.key})
	if err := json.Unmarshal(resp.body, &list); err != nil || resp.status != 200 || len(list.Conversations) != 1 ||
		list.Conversations[0].ID != v.ConversationID || list.Conversations[0].Title != "hi there" {
		t.Fatalf("conversations: %d %s", resp.status, resp.body)
	}

	var conv struct {
		ID       uuid.UUID `json:"id"`
		Messages []struct {
			Role string `json:"role"`
			Text string `json:"text"`
		} `json:"messages"`
		Turns []steward.View `json:"turns"`
	}
	resp = e.do(request{method: "GET", path: "/v1/conversations/" + v.ConversationID.String(), key: e.key})
	if err := json.Unmarshal(resp.body, &conv); err != nil || resp.status != 200 {
		t.Fatalf("conversation: %d %s", resp.status, resp.body)
	}
	if conv.ID != v.ConversationID || len(conv.Messages) != 2 || conv.Messages[0].Role != "user" || conv.Messages[0].Text != "hi there" ||
		conv.Messages[1].Role != "assistant" || conv.Messages[1].Text != "Hello, Alice." {
		t.Fatalf("conversation = %s", resp.body)
	}
	if len(conv.Turns) != 1 || conv.Turns[0].TurnID != v.TurnID || conv.Turns[0].Answer != "Hello, Alice." {
		t.Fatalf("conversation turns = %s", resp.body)
	}

	// The conversation continues.
	next := viewOf(t, e.do(request{method: "POST", path: "/v1/chat", key: e.key,
		body: jsonOf(t, map[string]string{"message": "again", "conversation_id": v.ConversationID.String()})}))
	if next.ConversationID != v.ConversationID || next.Answer != "Hello again." {
		t.Fatalf("continued turn = %+v", next)
	}
}

func TestChatSuspendsAndConfirmResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, createTask("w1", "buy milk"), text("Added it."))
	v := e.chat("remind me to buy milk")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 || v.Pending[0].Tool != "create_task" || v.Pending[0].ArgsHash == "" {
		t.Fatalf("view = %+v, want suspended on create_task", v)
	}
	if n := len(e.tasks()); n != 0 {
		t.Fatalf("%d tasks before approval", n)
	}

	var inbox struct {
		Approvals []struct {
			TurnID         uuid.UUID             `json:"turn_id"`
			ConversationID uuid.UUID             `json:"conversation_id"`
			CreatedAt      time.Time             `json:"created_at"`
			ExpiresAt      *time.Time            `json:"expires_at"`
			Pending        []steward.PendingCall `json:"pending"`
		} `json:"approvals"`
	}
	resp := e.do(request{method: "GET", path: "/v1/approvals", key: e.key})
	if err := json.Unmarshal(resp.body, &inbox); err != nil || resp.status != 200 {
		t.Fatalf("approvals: %d %s", resp.status, resp.body)
	}
	if len(inbox.Approvals) != 1 {
		t.Fatalf("approvals = %s", resp.body)
	}
	a := inbox.Approvals[0]
	if a.TurnID != v.TurnID || a.ConversationID != v.ConversationID || a.CreatedAt.IsZero() || a.ExpiresAt == nil ||
		len(a.Pending) != 1 || a.Pending[0].CallID != "w1" || a.Pending[0].ArgsHash != v.Pending[0].ArgsHash ||
		string(a.Pending[0].Args) != `{"title":"buy milk"}` {
		t.Fatalf("approval = %s", resp.body)
	}

	done := viewOf(t, e.confirm(v.TurnID, approveAll(v)))
	if done.TurnID != v.TurnID || done.Status != steward.StatusCompleted || done.Answer != "Added it." {
		t.Fatalf("confirmed view = %+v", done)
	}
	if ts := e.tasks(); len(ts) != 1 || ts[0].Title != "buy milk" {
		t.Fatalf("tasks = %+v, want exactly one", ts)
	}
	resp = e.do(request{method: "GET", path: "/v1/approvals", key: e.key})
	if resp.status != 200 || strings.TrimSpace(string(resp.body)) != `{"approvals":[]}` {
		t.Fatalf("approvals after confirm: %d %s", resp.status, resp.body)
	}
	// A second confirm is a conflict and runs nothing.
	errorOf(t, e.confirm(v.TurnID, approveAll(v)), http.StatusConflict, "conflict")
	if n := len(e.tasks()); n != 1 {
		t.Fatalf("%d tasks after a second confirm, want 1", n)
	}
}

func TestConcurrentConfirmsOverHTTPExecuteOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, createTask("w1", "buy milk"), text("Added it."))
	v := e.chat("remind me to buy milk")
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range 10 {
		wg.Go(func() {
			resp := e.confirm(v.TurnID, approveAll(v))
			mu.Lock()
			statuses[resp.status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[200] != 1 || statuses[409] != 9 {
		t.Fatalf("statuses = %v, want one 200 and nine 409", statuses)
	}
	if n := len(e.tasks()); n != 1 {
		t.Fatalf("%d tasks, want 1", n)
	}
}

func TestChatStreamsEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, text("Hello there, dear owner."))
	resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hi"}`,
		header: map[string]string{"Accept": "text/event-stream"}})
	if resp.status != 200 || !strings.HasPrefix(resp.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %q", resp.status, resp.header.Get("Content-Type"))
	}
	events := parseSSE(t, resp.body)
	if events[0].typ != "started" || !strings.Contains(string(events[0].data), `"status":"running"`) {
		t.Fatalf("first event %s %s, want started with the running turn", events[0].typ, events[0].data)
	}
	events = events[1:]
	var answer strings.Builder
	deltas := 0
	for _, ev := range events[:len(events)-1] {
		if ev.typ != "text" {
			t.Fatalf("event %q before the end, want only text: %s", ev.typ, resp.body)
		}
		var d struct{ Text string }
		if err := json.Unmarshal(ev.data, &d); err != nil {
			t.Fatal(err)
		}
		answer.WriteString(d.Text)
		deltas++
	}
	if deltas < 2 || answer.String() != "Hello there, dear owner." {
		t.Fatalf("%d deltas forming %q", deltas, answer.String())
	}
	last := events[len(events)-1]
	var v steward.View
	if err := json.Unmarshal(last.data, &v); err != nil || last.typ != "completed" || v.Status != steward.StatusCompleted || v.Answer != answer.String() {
		t.Fatalf("last event %s %s", last.typ, last.data)
	}
	if e.turnStatus(v.TurnID) != steward.StatusCompleted {
		t.Fatal("the stored turn is not completed")
	}
}

func TestStreamSuspendAndStreamedConfirm(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil,
		scripted.Reply(scripted.Calls(scripted.Call("r1", "calculate", `{"expression":"2+3"}`), scripted.Call("w1", "create_task", `{"title":"pay rent"}`))),
		text("Done."))
	sse := map[string]string{"Accept": "text/event-stream"}
	resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"add rent"}`, header: sse})
	types := func(evs []sseEvent) string {
		var s []string
		for _, ev := range evs {
			s = append(s, ev.typ)
		}
		return strings.Join(s, ",")
	}
	events := parseSSE(t, resp.body)
	if got := types(events); got != "started,tool_call,tool_result,tool_call,suspended" {
		t.Fatalf("events = %s\n%s", got, resp.body)
	}
	events = events[1:]
	var call struct {
		CallID string          `json:"call_id"`
		Tool   string          `json:"tool"`
		Args   json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(events[2].data, &call); err != nil || call.CallID != "w1" || call.Tool != "create_task" || string(call.Args) != `{"title":"pay rent"}` {
		t.Fatalf("tool_call = %s", events[2].data)
	}
	var v steward.View
	if err := json.Unmarshal(events[3].data, &v); err != nil || v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
		t.Fatalf("suspended = %s", events[3].data)
	}

	resp = e.do(request{method: "POST", path: "/v1/turns/" + v.TurnID.String() + "/confirm", key: e.key,
		body: jsonOf(t, map[string]any{"decisions": approveAll(v)}), header: sse})
	events = parseSSE(t, resp.body)
	if got := types(events); got != "tool_result,text,completed" {
		t.Fatalf("confirm events = %s\n%s", got, resp.body)
	}
	var res struct {
		CallID string `json:"call_id"`
		Tool   string `json:"tool"`
	}
	if err := json.Unmarshal(events[0].data, &res); err != nil || res.CallID != "w1" || res.Tool != "create_task" {
		t.Fatalf("tool_result = %s", events[0].data)
	}
	if n := len(e.tasks()); n != 1 {
		t.Fatalf("%d tasks, want 1", n)
	}
	// A refused streamed request is an ordinary JSON error with its status, not a stream.
	resp = e.do(request{method: "POST", path: "/v1/turns/" + v.TurnID.String() + "/confirm", key: e.key,
		body: jsonOf(t, map[string]any{"decisions": approveAll(v)}), header: sse})
	errorOf(t, resp, http.StatusConflict, "conflict")
}

func TestBadInputIsRefusedAndLeavesNoRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, text("never used"))
	big := `{"message":"` + strings.Repeat("a", 2<<20) + `"}`
	chat := func(body string) request { return request{method: "POST", path: "/v1/chat", key: e.key, body: body} }
	cases := []struct {
		name   string
		req    request
		status int
		code   string
	}{
		{"malformed JSON", chat(`{"message":`), 400, "invalid"},
		{"not JSON", chat(`message=hi`), 400, "invalid"},
		{"unknown field", chat(`{"message":"hi","temperature":2}`), 400, "invalid"},
		{"wrong JSON type", chat(`{"message":42}`), 400, "invalid"},
		{"two objects", chat(`{"message":"hi"}{"message":"again"}`), 400, "invalid"},
		{"JSON null", chat(`null`), 400, "invalid"},
		{"array body", chat(`[{"message":"hi"}]`), 400, "invalid"},
		{"empty body", chat(``), 400, "invalid"},
		{"2 MB body", chat(big), 413, "too_large"},
		{"2 MB body, chunked", request{method: "POST", path: "/v1/chat", key: e.key, body: big, chunked: true}, 413, "too_large"},
		{"empty message", chat(`{"message":"   "}`), 422, "invalid"},
		{"missing message", chat(`{}`), 422, "invalid"},
		{"too long message", chat(`{"message":"` + strings.Repeat("é", agent.MaxMessageRunes+1) + `"}`), 422, "invalid"},
		{"non-UUID conversation_id", chat(`{"message":"hi","conversation_id":"42"}`), 422, "invalid"},
		{"unknown conversation", chat(`{"message":"hi","conversation_id":"` + uuid.NewString() + `"}`), 404, "not_found"},
		{"form content type", request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hi"}`,
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, "invalid"},
		{"missing key", request{method: "POST", path: "/v1/chat", body: `{"message":"hi"}`}, 401, "unauthorized"},
		{"wrong key", request{method: "POST", path: "/v1/chat", key: "stw_wrong", body: `{"message":"hi"}`}, 401, "unauthorized"},
		{"not a steward key", request{method: "POST", path: "/v1/chat", key: "hello", body: `{"message":"hi"}`}, 401, "unauthorized"},
		{"basic auth", request{method: "POST", path: "/v1/chat", body: `{"message":"hi"}`, header: map[string]string{"Authorization": "Basic " + e.key}}, 401, "unauthorized"},
		{"bearer without key", request{method: "POST", path: "/v1/chat", body: `{"message":"hi"}`, header: map[string]string{"Authorization": "Bearer "}}, 401, "unauthorized"},
		{"non-UUID turn id", request{method: "GET", path: "/v1/turns/not-a-uuid", key: e.key}, 404, "not_found"},
		{"non-UUID turn id confirm", request{method: "POST", path: "/v1/turns/123/confirm", key: e.key, body: `{"decisions":[]}`}, 404, "not_found"},
		{"unknown turn", request{method: "GET", path: "/v1/turns/" + uuid.NewString(), key: e.key}, 404, "not_found"},
		{"unknown turn confirm", request{method: "POST", path: "/v1/turns/" + uuid.NewString() + "/confirm", key: e.key, body: `{"decisions":[]}`}, 404, "not_found"},
		{"non-UUID conversation id in path", request{method: "GET", path: "/v1/conversations/x", key: e.key}, 404, "not_found"},
		{"unknown conversation id in path", request{method: "GET", path: "/v1/conversations/" + uuid.NewString(), key: e.key}, 404, "not_found"},
		{"unknown route", request{method: "GET", path: "/v1/nothing", key: e.key}, 404, "not_found"},
		{"wrong method", request{method: "GET", path: "/v1/chat", key: e.key}, 405, "invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.do(tc.req)
			errorOf(t, resp, tc.status, tc.code)
			if tc.status == 401 && !strings.HasPrefix(resp.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate = %q", resp.header.Get("WWW-Authenticate"))
			}
			if tc.status == 405 && resp.header.Get("Allow") != "POST" {
				t.Errorf("Allow = %q", resp.header.Values("Allow"))
			}
			if resp.header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}
	if turns, convs := e.counts(); turns != 0 || convs != 0 {
		t.Fatalf("refused requests left %d turns and %d conversations", turns, convs)
	}
	if e.model.Remaining() != 1 {
		t.Fatal("a refused request reached the model")
	}
	if strings.Contains(e.logs.String(), e.key) {
		t.Fatal("the API key was logged")
	}
}

func TestConfirmRefusesBadDecisions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, createTask("w1", "buy milk"), text("Added it."))
	v := e.chat("remind me to buy milk")
	p := v.Pending[0]
	mallory := e.addOwner("mallory")
	decision := func(callID, hash string) map[string]any {
		return map[string]any{"call_id": callID, "approve": true, "args_hash": hash}
	}
	confirmAs := func(key string, body string) response {
		return e.do(request{method: "POST", path: "/v1/turns/" + v.TurnID.String() + "/confirm", key: key, body: body})
	}
	body := func(ds ...map[string]any) string { return jsonOf(t, map[string]any{"decisions": ds}) }
	cases := []struct {
		name   string
		resp   response
		status int
		code   string
	}{
		{"stale args_hash", confirmAs(e.key, body(decision(p.CallID, strings.Repeat("0", 64)))), 409, "conflict"},
		{"missing decision", confirmAs(e.key, body()), 422, "invalid"},
		{"no decisions field", confirmAs(e.key, `{}`), 422, "invalid"},
		{"unknown call id", confirmAs(e.key, body(decision("nope", p.ArgsHash), decision(p.CallID, p.ArgsHash))), 422, "invalid"},
		{"duplicate decision", confirmAs(e.key, body(decision(p.CallID, p.ArgsHash), decision(p.CallID, p.ArgsHash))), 422, "invalid"},
		{"missing approve", confirmAs(e.key, `{"decisions":[{"call_id":"w1","args_hash":"`+p.ArgsHash+`"}]}`), 422, "invalid"},
		{"missing args_hash", confirmAs(e.key, `{"decisions":[{"call_id":"w1","approve":true}]}`), 422, "invalid"},
		{"unknown decision field", confirmAs(e.key, `{"decisions":[{"call_id":"w1","approve":true,"args_hash":"`+p.ArgsHash+`","force":true}]}`), 400, "invalid"},
		{"approve not a boolean", confirmAs(e.key, `{"decisions":[{"call_id":"w1","approve":"yes","args_hash":"`+p.ArgsHash+`"}]}`), 400, "invalid"},
		{"another owner's turn: confirm", confirmAs(mallory, body(decision(p.CallID, p.ArgsHash))), 404, "not_found"},
		{"another owner's turn: GET", e.do(request{method: "GET", path: "/v1/turns/" + v.TurnID.String(), key: mallory}), 404, "not_found"},
		{"another owner's conversation", e.do(request{method: "GET", path: "/v1/conversations/" + v.ConversationID.String(), key: mallory}), 404, "not_found"},
		{"another owner's conversation: chat", e.do(request{method: "POST", path: "/v1/chat", key: mallory,
			body: jsonOf(t, map[string]string{"message": "hi", "conversation_id": v.ConversationID.String()})}), 404, "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { errorOf(t, tc.resp, tc.status, tc.code) })
	}
	if n := len(e.tasks()); n != 0 {
		t.Fatalf("refused confirms executed %d writes", n)
	}
	if st := e.turnStatus(v.TurnID); st != steward.StatusSuspended {
		t.Fatalf("turn is %s after refused confirms, want suspended", st)
	}
	// Mallory's inbox is empty; Alice's still holds the turn.
	if resp := e.do(request{method: "GET", path: "/v1/approvals", key: mallory}); strings.TrimSpace(string(resp.body)) != `{"approvals":[]}` {
		t.Fatalf("mallory's approvals = %s", resp.body)
	}
	// A correct confirm still works afterwards.
	if done := viewOf(t, e.confirm(v.TurnID, approveAll(v))); done.Status != steward.StatusCompleted {
		t.Fatalf("confirm = %+v", done)
	}
	if n := len(e.tasks()); n != 1 {
		t.Fatalf("%d tasks, want 1", n)
	}
}

func TestDenialCompletesWithoutWriting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, createTask("w1", "buy milk"), text("Understood, I did not add it."))
	v := e.chat("remind me to buy milk")
	done := viewOf(t, e.confirm(v.TurnID, []map[string]any{{"call_id": "w1", "approve": false, "args_hash": v.Pending[0].ArgsHash, "message": "not now"}}))
	if done.Status != steward.StatusCompleted || len(e.tasks()) != 0 {
		t.Fatalf("denied: %+v, %d tasks", done, len(e.tasks()))
	}
}

func TestModelFailureIsAFailedTurnWithoutDetail(t *testing.T) {
	t.Parallel()
	const secret = "upstream said: invalid key AIzaSECRET at 10.0.0.7"
	// The API's own logger alone: production's also holds the app's start-up lines and the
	// pricing's warnings, which are no request's.
	e := newEnvWith(t, nil, nil, scripted.Fail(errors.New(secret)))
	resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"my private message"}`,
		header: map[string]string{"X-Request-Id": "req-model-failure"}})
	v := viewOf(t, resp)
	if v.Status != steward.StatusFailed || v.Error == "" || strings.Contains(string(resp.body), "AIza") {
		t.Fatalf("view = %s", resp.body)
	}
	if e.turnStatus(v.TurnID) != steward.StatusFailed {
		t.Fatal("stored turn is not failed")
	}
	// The detail is in the log, under the request id; every line carries the request id.
	lines := e.logs.lines(t)
	var sawDetail, sawAccess bool
	for _, l := range lines {
		if l["request_id"] != "req-model-failure" {
			t.Errorf("log line without the request id: %v", l)
		}
		if strings.Contains(jsonOf(t, l), "AIzaSECRET") {
			sawDetail = true
		}
		if l["message"] == "request" {
			sawAccess = true
			if l["route"] != "/v1/chat" || l["status"] != float64(200) || l["owner_id"] != e.owner.String() || l["turn_id"] != v.TurnID.String() {
				t.Errorf("access log line = %v", l)
			}
		}
	}
	if !sawDetail || !sawAccess {
		t.Fatalf("want the failure detail and an access line in the log:\n%s", e.logs)
	}
	if strings.Contains(e.logs.String(), "my private message") || strings.Contains(e.logs.String(), e.key) {
		t.Fatal("the log holds the message body or the key")
	}
}

func TestStreamedModelFailureEndsWithErrorEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, scripted.Fail(errors.New("boom at 10.0.0.7")))
	resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hi"}`,
		header: map[string]string{"Accept": "text/event-stream"}})
	events := parseSSE(t, resp.body)
	last := events[len(events)-1]
	var v steward.View
	if err := json.Unmarshal(last.data, &v); err != nil || last.typ != "error" || v.Status != steward.StatusFailed || v.Error == "" ||
		strings.Contains(string(resp.body), "10.0.0.7") {
		t.Fatalf("stream = %s", resp.body)
	}
}

// A client that goes away does not cancel its turn: the turn still ends in a written state.
func TestClientDisconnectDoesNotCancelTheTurn(t *testing.T) {
	t.Parallel()
	entered, gone := make(chan struct{}), make(chan struct{})
	var once sync.Once
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/chat" {
				go func() { <-r.Context().Done(); once.Do(func() { close(gone) }) }()
			}
			h.ServeHTTP(w, r)
		})
	}
	slow := func(req llm.Request) (llm.Response, error) {
		close(entered)
		<-gone // the model answers only after the client has gone
		return scripted.Calls(scripted.Call("w1", "create_task", `{"title":"buy milk"}`)), nil
	}
	e := newEnv(t, wrap, slow)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		r, _ := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/v1/chat", strings.NewReader(`{"message":"remind me to buy milk"}`))
		r.Header.Set("Authorization", "Bearer "+e.key)
		r.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(r)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-entered
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the request was not cancelled")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if turns := e.turns(); len(turns) == 1 && turns[0].Status == steward.StatusSuspended {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn never suspended after the client left: %+v\n%s", e.turns(), e.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
