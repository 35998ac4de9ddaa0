package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/store"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
)

// terminate ends every connection Steward's runtime roles hold to the test's database, as a
// failover, a restart or maintenance of a managed PostgreSQL does (SQLSTATE 57P01 on each).
func (e *env) terminate() int {
	e.t.Helper()
	conn := testdb.Connect(e.t, e.db.SuperURL)
	var n int
	err := conn.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND usename IN ('steward_app', 'steward_door', 'steward_owner')`).Scan(&n)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// warm fills the pools with idle connections: n requests at once.
func (e *env) warm(n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { e.do(request{method: "GET", path: "/v1/memory/facts", key: e.key}) })
	}
	wg.Wait()
}

// TestConnectionLossIsRetried: every connection dies while a turn waits on its model (a
// managed database's failover). The turn's next statements, and every other request's, go
// to dead pooled connections: each is sent again once on a fresh one, so no request fails,
// and the turn completes, then suspends and runs its approved write exactly once.
func TestConnectionLossIsRetried(t *testing.T) {
	for run := range 3 {
		entered, release := make(chan struct{}), make(chan struct{})
		e := newEnv(t, nil, func(llm.Request) (llm.Response, error) {
			close(entered)
			<-release
			return scripted.Calls(scripted.Call("c1", "create_task", `{"title":"buy milk"}`)), nil
		}, text("Added it."))
		e.warm(6)
		chat := make(chan response, 1)
		go func() {
			chat <- e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"add milk"}`})
		}()
		<-entered
		if n := e.terminate(); n == 0 {
			t.Fatalf("run %d: no connection to terminate", run)
		}
		// Other requests meet the dead connections first.
		for _, path := range []string{"/v1/memory/facts", "/v1/memory/search?q=milk", "/v1/conversations", "/v1/approvals/count", "/v1/rules"} {
			if resp := e.do(request{method: "GET", path: path, key: e.key}); resp.status != http.StatusOK {
				t.Errorf("run %d: GET %s after the failover: %d %s", run, path, resp.status, resp.body)
			}
		}
		e.terminate() // and once more, while the turn's own connections are idle
		close(release)
		v := viewOf(t, <-chat)
		if v.Status != steward.StatusSuspended {
			t.Fatalf("run %d: chat after the failover: %s %q, want suspended", run, v.Status, v.Error)
		}
		e.terminate()
		done := viewOf(t, e.confirm(v.TurnID, approveAll(v)))
		if done.Status != steward.StatusCompleted || done.Answer != "Added it." {
			t.Fatalf("run %d: confirm after the failover: %s %q %q", run, done.Status, done.Answer, done.Error)
		}
		if n := len(e.tasks()); n != 1 {
			t.Errorf("run %d: %d tasks, want exactly 1", run, n)
		}
	}
}

// TestDatabaseOutage: the database is stopped (its proxy refuses connections and cut the
// open ones) with a turn suspended. Every request answers 503 with Retry-After and an error
// in words within the connect timeout — never a hang, never a 500 — and /healthz says the
// database is down. When it is back, everything works without a restart, and the suspended
// turn is approved and runs its write exactly once.
func TestDatabaseOutage(t *testing.T) {
	out := testdb.NewOutage(t, os.Getenv("APP_DATABASE_URL"))
	e := appEnv(t, apptest.Options{Model: scripted.New(createTask("c1", "buy milk"), text("Added it.")), Through: out.Through})
	v := e.chat("add milk")
	if v.Status != steward.StatusSuspended {
		t.Fatalf("chat: %s, want suspended", v.Status)
	}

	out.Down()
	requests := []request{
		{method: "GET", path: "/v1/conversations", key: e.key},
		{method: "GET", path: "/v1/memory/facts", key: e.key},
		{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hello"}`},
		{method: "POST", path: "/v1/turns/" + v.TurnID.String() + "/confirm", key: e.key, body: jsonOf(t, map[string]any{"decisions": approveAll(v)})},
	}
	for _, req := range requests {
		start := time.Now()
		resp := e.do(req)
		if took := time.Since(start); took > store.ConnectTimeout+2*time.Second {
			t.Errorf("%s %s took %v with the database down", req.method, req.path, took)
		}
		errorOf(t, resp, http.StatusServiceUnavailable, "unavailable")
		if resp.header.Get("Retry-After") == "" {
			t.Errorf("%s %s: 503 without Retry-After", req.method, req.path)
		}
	}
	if resp := e.do(request{method: "GET", path: "/healthz"}); resp.status != http.StatusServiceUnavailable ||
		!strings.Contains(string(resp.body), `"database":"unreachable"`) {
		t.Errorf("/healthz with the database down: %d %s", resp.status, resp.body)
	}

	out.Up()
	if resp := e.do(request{method: "GET", path: "/healthz"}); resp.status != http.StatusOK {
		t.Errorf("/healthz once the database is back: %d %s", resp.status, resp.body)
	}
	done := viewOf(t, e.confirm(v.TurnID, approveAll(v)))
	if done.Status != steward.StatusCompleted || done.Answer != "Added it." {
		t.Fatalf("confirm once the database is back: %s %q %q", done.Status, done.Answer, done.Error)
	}
	errorOf(t, e.confirm(v.TurnID, approveAll(v)), http.StatusConflict, "conflict")
	if n := len(e.tasks()); n != 1 {
		t.Errorf("%d tasks, want exactly 1", n)
	}
	if turns, _ := e.counts(); turns != 1 {
		t.Errorf("%d turns, want 1 (the chat refused during the outage started none)", turns)
	}
}
