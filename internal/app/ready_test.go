package app

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stewardhq/steward/internal/testdb"
)

// lazyBuild builds the App as a Lambda cold start does: the database check in the background.
func lazyBuild(t *testing.T, env map[string]string) (*App, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	a, err := build(context.Background(), loadConfig(t, env), settings{logOut: &logs, lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a, &logs
}

// get sends GET path to h and returns the status and body.
func get(h http.Handler, path string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// TestLambdaServesNothingBeforeTheDatabaseCheck: a cold start no longer waits for the pools
// and role checks, but no request or invocation runs before they passed. With either runtime
// URL connecting as the table owner, or a database nobody listens on, every request is
// refused 503 and every invocation fails, the log naming the reason; the handler never runs.
func TestLambdaServesNothingBeforeTheDatabaseCheck(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	closed := "postgres://steward_app:x@127.0.0.1:" + port + "/steward?sslmode=disable"
	for _, c := range []struct {
		name, variable, url string
		want                []string
	}{
		{"door as owner", "DOOR_DATABASE_URL", db.OwnerURL, []string{"DOOR_DATABASE_URL connects as steward_owner", "owns api_keys"}},
		{"app as owner", "APP_DATABASE_URL", db.OwnerURL, []string{"APP_DATABASE_URL connects as steward_owner", "owns api_keys"}},
		{"nobody listening", "APP_DATABASE_URL", closed, []string{"open APP_DATABASE_URL: connect to 127.0.0.1:" + port + " as steward_app"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"APP_DATABASE_URL": db.AppURL, "DOOR_DATABASE_URL": db.DoorURL}
			env[c.variable] = c.url
			a, logs := lazyBuild(t, env)
			for _, path := range []string{"/healthz", "/v1/turns"} {
				status, body := get(a.Handler(), path)
				if status != http.StatusServiceUnavailable || !strings.Contains(body, `"code":"internal"`) {
					t.Errorf("GET %s = %d %s, want 503", path, status, body)
				}
			}
			for _, want := range c.want {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("the log does not say %q:\n%s", want, logs.String())
				}
			}
			var ran atomic.Bool
			_, err := Invocation(a, func(context.Context, struct{}) (int, error) { ran.Store(true); return 1, nil })(context.Background(), struct{}{})
			if err == nil || !strings.Contains(err.Error(), c.want[0]) || ran.Load() {
				t.Errorf("invocation: err = %v, handler ran: %v; want the check's error and no run", err, ran.Load())
			}
		})
	}
}

// TestLambdaServesOnceTheDatabaseCheckPassed: with the runtime roles, the lazily checked App
// serves, and an invocation runs its handler.
func TestLambdaServesOnceTheDatabaseCheckPassed(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	a, logs := lazyBuild(t, map[string]string{"APP_DATABASE_URL": db.AppURL, "DOOR_DATABASE_URL": db.DoorURL})
	if status, body := get(a.Handler(), "/healthz"); status != http.StatusOK {
		t.Fatalf("GET /healthz = %d %s\n%s", status, body, logs)
	}
	n, err := Invocation(a, func(context.Context, struct{}) (int, error) { return 7, nil })(context.Background(), struct{}{})
	if err != nil || n != 7 {
		t.Fatalf("invocation = %d, %v", n, err)
	}
}

// TestReadinessRetriesAFailedCheck: a failed check is not kept — the next wait checks
// again, as Lambda re-runs a failed init — and a passed one is not repeated.
func TestReadinessRetriesAFailedCheck(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	r := &readiness{check: func(context.Context) error {
		if calls.Add(1) == 1 {
			return errors.New("database down")
		}
		return nil
	}}
	ctx := context.Background()
	if err := r.wait(ctx); err == nil || err.Error() != "database down" {
		t.Fatalf("first wait = %v", err)
	}
	for range 3 {
		if err := r.wait(ctx); err != nil {
			t.Fatalf("wait after the database came back = %v", err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the check ran %d times, want 2", n)
	}
}
