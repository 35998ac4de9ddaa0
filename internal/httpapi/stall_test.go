package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/openaiapi"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// slowListener gives every accepted connection a small send buffer, like a slow network:
// a client that stops reading blocks the server's writes after a few kilobytes.
type slowListener struct{ net.Listener }

func (l slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// TestNonReadingStreamsDoNotFreezeOtherOwners is issue 10, item 1: owner A opens 20 SSE chats
// whose model calls a tool with large arguments, and never reads the responses. Owner B's
// requests keep answering promptly (within 1 s on an idle machine; the bound is 2 s so that a
// loaded test machine does not fail it: before the fix they never answered), and no database connection stays idle in
// transaction: events are written to clients between transactions, each write has a deadline,
// and an owner runs at most a few turns at once.
func TestNonReadingStreamsDoNotFreezeOtherOwners(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t, 10)
	alice, keyA := db.Owner(t, "alice")
	_, keyB := db.Owner(t, "bob")
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1<<20)
	step := func(req llm.Request) (llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		for _, p := range last.Parts {
			if p.ToolResult != nil {
				return scripted.Text("done"), nil
			}
		}
		return scripted.Calls(scripted.Call("c1", "list_tasks", fmt.Sprintf(`{"note":%q}`, big))), nil
	}
	steps := make([]scripted.Step, 100)
	for i := range steps {
		steps[i] = step
	}
	runner := agent.New(agent.Config{Model: scripted.New(steps...), Tools: reg, Store: db.Store, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour, Control: &safety.Control{GlobalCost: db.Door.GlobalCostToday}}, agent.Hooks{})
	srv := httptest.NewUnstartedServer(httpapi.New(withServices(httpapi.Deps{Runner: runner, Store: db.Store, Auth: db.Door, OpenAI: &openaiapi.Service{Runner: runner, Conversations: &activity.Service{Store: db.Store}},
		Logger: zerolog.Nop(), StreamWriteTimeout: time.Second})))
	srv.Listener = slowListener{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)

	// Owner A: 20 streamed chats on raw connections that are never read.
	body := `{"message":"list my tasks"}`
	for i := 0; i < 20; i++ {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST /v1/chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Accept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", keyA, len(body), body)
	}

	super, err := pgx.Connect(ctx, db.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(ctx)
	var stuck atomic.Int64
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/approvals", nil)
		req.Header.Set("Authorization", "Bearer "+keyB)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("owner B's request failed while A's streams stall: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || time.Since(start) > 2*time.Second {
			t.Fatalf("owner B's request: status %d after %v", resp.StatusCode, time.Since(start))
		}
		var n int64
		// The stream write deadline is 1 s: nothing may wait in a transaction longer.
		if err := super.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND state LIKE 'idle in transaction%' AND now() - state_change > interval '1500 milliseconds'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > stuck.Load() {
			stuck.Store(n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := stuck.Load(); n > 0 {
		t.Fatalf("%d connections stayed idle in transaction past the write deadline", n)
	}
	// A's admitted turns lost their streams, not their work: each one ends completed.
	var statuses []steward.Status
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		statuses = statuses[:0]
		err := db.Store.WithOwner(ctx, alice.ID, func(tx *store.Tx) error {
			turns, err := tx.Turns.List(ctx, "", 100)
			for _, tr := range turns {
				statuses = append(statuses, tr.Status)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(statuses) > 0 && !slices.ContainsFunc(statuses, func(s steward.Status) bool { return s != steward.StatusCompleted }) {
			return
		}
	}
	t.Fatalf("owner A's turns are %v, want all completed", statuses)
}

// TestTurnsPerOwnerCapped: an owner runs at most DefaultMaxTurnsPerOwner turns at once; one
// more is refused 429 rate_limited, while another owner's turn still starts, and the running
// turns all finish.
func TestTurnsPerOwnerCapped(t *testing.T) {
	entered, release := make(chan struct{}, 10), make(chan struct{})
	step := func(llm.Request) (llm.Response, error) {
		entered <- struct{}{}
		<-release
		return scripted.Text("done"), nil
	}
	e := newEnv(t, nil, step, step, step, step, step, step)
	keyB := e.addOwner("bob")
	chat := func(key string) response {
		return e.do(request{method: "POST", path: "/v1/chat", key: key, body: `{"message":"hi"}`})
	}
	n := httpapi.DefaultMaxTurnsPerOwner
	done := make(chan response, n+1)
	for i := 0; i < n; i++ {
		go func() { done <- chat(e.key) }()
	}
	for i := 0; i < n; i++ {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d turns started", i, n)
		}
	}
	over := make(chan response, 1)
	go func() { over <- chat(e.key) }()
	select {
	case resp := <-over:
		errorOf(t, resp, http.StatusTooManyRequests, "rate_limited")
		if resp.header.Get("Retry-After") == "" {
			t.Error("the per-owner 429 has no Retry-After")
		}
	case <-entered:
		close(release)
		t.Fatalf("turn %d of one owner started; want 429 rate_limited", n+1)
	}
	go func() { done <- chat(keyB) }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("another owner's turn did not start")
	}
	close(release)
	for i := 0; i < n+1; i++ {
		if v := viewOf(t, <-done); v.Status != steward.StatusCompleted {
			t.Errorf("turn %s is %s, want completed", v.TurnID, v.Status)
		}
	}
}

// TestOpenAIChatSharesTheTurnLimit: the OpenAI-compatible face starts turns too, so it takes
// the same per-owner slots: with the owner's DefaultMaxTurnsPerOwner turns running through
// /v1/chat, a chat completion is refused 429 rate_limit_error in OpenAI's shape and starts no
// turn.
func TestOpenAIChatSharesTheTurnLimit(t *testing.T) {
	entered, release := make(chan struct{}, 10), make(chan struct{})
	step := func(llm.Request) (llm.Response, error) {
		entered <- struct{}{}
		<-release
		return scripted.Text("done"), nil
	}
	n := httpapi.DefaultMaxTurnsPerOwner
	steps := make([]scripted.Step, n+1)
	for i := range steps {
		steps[i] = step
	}
	e := newEnv(t, nil, steps...)
	done := make(chan response, n)
	for i := 0; i < n; i++ {
		go func() { done <- e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hi"}`}) }()
	}
	for i := 0; i < n; i++ {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d turns started", i, n)
		}
	}
	over := make(chan response, 1)
	go func() {
		over <- e.do(request{method: "POST", path: "/v1/chat/completions", key: e.key,
			body: `{"model":"steward","messages":[{"role":"user","content":"hi"}]}`})
	}()
	select {
	case resp := <-over:
		var body struct {
			Error struct{ Type, Code string } `json:"error"`
		}
		if err := json.Unmarshal(resp.body, &body); resp.status != http.StatusTooManyRequests || err != nil ||
			body.Error.Type != "rate_limit_error" || body.Error.Code != "rate_limited" {
			t.Errorf("chat completion over the limit = %d %s; want 429 rate_limit_error/rate_limited", resp.status, resp.body)
		}
		if resp.header.Get("Retry-After") == "" {
			t.Error("the OpenAI face's per-owner 429 has no Retry-After")
		}
	case <-entered:
		close(release)
		t.Fatalf("a chat completion started turn %d of one owner; want 429", n+1)
	}
	close(release)
	for i := 0; i < n; i++ {
		if v := viewOf(t, <-done); v.Status != steward.StatusCompleted {
			t.Errorf("turn %s is %s, want completed", v.TurnID, v.Status)
		}
	}
}
