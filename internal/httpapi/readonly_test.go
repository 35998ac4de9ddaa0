package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
)

// readOnly makes the test's database refuse writes for every session that starts from now
// (default_transaction_read_only, as a failover's old primary or a storage-full database
// answers), or accept them again; the sessions already open keep what they started with.
func (e *env) readOnly(on bool) {
	e.t.Helper()
	conn := testdb.Connect(e.t, e.db.SuperURL)
	if _, err := conn.Exec(context.Background(), "SET default_transaction_read_only = off"); err != nil {
		e.t.Fatal(err)
	}
	stmt := "ALTER DATABASE " + pgx.Identifier{e.db.Name}.Sanitize() + " RESET default_transaction_read_only"
	if on {
		stmt = "ALTER DATABASE " + pgx.Identifier{e.db.Name}.Sanitize() + " SET default_transaction_read_only = on"
	}
	if _, err := conn.Exec(context.Background(), stmt); err != nil {
		e.t.Fatal(err)
	}
}

// TestReadOnlyDatabase: the database turns read-only and its connections are ended (a
// failover to a server that accepts no writes). A chat answers 503 with Retry-After and words,
// never a 500, and /healthz says the database is read-only. Once it accepts writes again,
// the next chat works without a restart and without ending any connection: no session that
// began read-only is kept in the pools.
func TestReadOnlyDatabase(t *testing.T) {
	e := appEnv(t, apptest.Options{Model: scripted.New(text("one"), text("two"), text("three"), text("four"))})
	if v := e.chat("before"); v.Status != steward.StatusCompleted {
		t.Fatalf("chat before: %s %q", v.Status, v.Error)
	}
	t.Cleanup(func() { e.readOnly(false) })
	e.readOnly(true)
	e.terminate()
	for i := range 2 {
		resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"while read-only"}`})
		if resp.status != http.StatusServiceUnavailable || resp.header.Get("Retry-After") == "" ||
			!strings.Contains(string(resp.body), `"code":"unavailable"`) {
			t.Errorf("chat %d while read-only: %d, Retry-After %q: %s", i, resp.status, resp.header.Get("Retry-After"), resp.body)
		}
	}
	if resp := e.do(request{method: "GET", path: "/healthz"}); resp.status != http.StatusServiceUnavailable ||
		!strings.Contains(string(resp.body), `"database":"read_only"`) {
		t.Errorf("/healthz while read-only: %d %s", resp.status, resp.body)
	}

	e.readOnly(false)
	if resp := e.do(request{method: "GET", path: "/healthz"}); resp.status != http.StatusOK {
		t.Errorf("/healthz once writable: %d %s", resp.status, resp.body)
	}
	for i := range 2 {
		resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"after"}`})
		if resp.status != http.StatusOK {
			t.Fatalf("chat %d once writable: %d %s", i, resp.status, resp.body)
		}
		if v := viewOf(t, resp); v.Status != steward.StatusCompleted {
			t.Fatalf("chat %d once writable: %s %q", i, v.Status, v.Error)
		}
	}
}
