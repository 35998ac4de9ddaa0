package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/store"
)

// authFunc is an Authenticator from a function.
type authFunc func(ctx context.Context, key string) (store.Principal, error)

func (f authFunc) Authenticate(ctx context.Context, key string) (store.Principal, error) {
	return f(ctx, key)
}

// routerOnly serves the API with no database: for middleware behaviour.
func routerOnly(t *testing.T, auth authFunc, health func(context.Context) error) (string, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	// The process logger, as every main builds it: its redaction covers every line.
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Auth: auth, Health: health, Logger: app.NewLogger(config.Config{}, logs)}))
	t.Cleanup(srv.Close)
	return srv.URL, logs
}

func TestPanicIsAGeneric500(t *testing.T) {
	t.Parallel()
	const secret = "secret detail: password=hunter2"
	base, logs := routerOnly(t,
		func(context.Context, string) (store.Principal, error) { panic(secret) },
		func(context.Context) error { panic(secret) })
	for _, req := range []request{
		{method: "GET", path: "/v1/approvals", key: "stw_anything"},
		{method: "GET", path: "/healthz"},
	} {
		resp := doHTTP(t, base, req)
		errorOf(t, resp, http.StatusInternalServerError, "internal")
		if strings.Contains(string(resp.body), "hunter2") {
			t.Fatalf("%s: the panic leaked: %s", req.path, resp.body)
		}
		if resp.header.Get("X-Request-Id") == "" {
			t.Errorf("%s: no X-Request-Id", req.path)
		}
	}
	// The panic is logged, with the secret it carried redacted.
	if !strings.Contains(logs.String(), "handler panicked") || !strings.Contains(logs.String(), "secret detail: password=[REDACTED]") {
		t.Fatalf("the panic is not in the log, redacted:\n%s", logs)
	}
	if strings.Contains(logs.String(), "hunter2") {
		t.Fatalf("the log holds the panic's password:\n%s", logs)
	}
}

func TestAuthenticatorFailureIsAGeneric500(t *testing.T) {
	t.Parallel()
	base, logs := routerOnly(t, func(context.Context, string) (store.Principal, error) {
		return store.Principal{}, errors.New("dial tcp 10.1.2.3:5432: connection refused")
	}, nil)
	resp := doHTTP(t, base, request{method: "GET", path: "/v1/conversations", key: "stw_x"})
	e := errorOf(t, resp, http.StatusInternalServerError, "internal")
	if strings.Contains(e.Error.Message, "10.1.2.3") {
		t.Fatalf("detail leaked: %s", resp.body)
	}
	if !strings.Contains(logs.String(), "10.1.2.3") {
		t.Fatalf("the detail is not logged:\n%s", logs)
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	ok, _ := routerOnly(t, nil, func(context.Context) error { return nil })
	resp := doHTTP(t, ok, request{method: "GET", path: "/healthz"})
	if resp.status != 200 || strings.TrimSpace(string(resp.body)) != `{"database":"ok","status":"ok"}` {
		t.Fatalf("healthz: %d %s", resp.status, resp.body)
	}
	down, _ := routerOnly(t, nil, func(context.Context) error { return errors.New("connection refused at 10.1.2.3") })
	resp = doHTTP(t, down, request{method: "GET", path: "/healthz"})
	if resp.status != 503 || strings.Contains(string(resp.body), "10.1.2.3") || !strings.Contains(string(resp.body), `"database":"unreachable"`) {
		t.Fatalf("healthz down: %d %s", resp.status, resp.body)
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	base, logs := routerOnly(t, nil, func(context.Context) error { return nil })
	cases := []struct {
		name, in string
		kept     bool
	}{
		{"sane id is kept", "abc-123_X.y:z", true},
		{"none is minted", "", false},
		{"spaces are replaced", "a b", false},
		{"markup is replaced", "<script>", false},
		{"quotes are replaced", `a"b`, false},
		{"too long is replaced", strings.Repeat("a", 129), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := request{method: "GET", path: "/healthz"}
			if tc.in != "" {
				req.header = map[string]string{"X-Request-Id": tc.in}
			}
			got := doHTTP(t, base, req).header.Get("X-Request-Id")
			switch {
			case tc.kept && got != tc.in:
				t.Fatalf("X-Request-Id = %q, want %q kept", got, tc.in)
			case !tc.kept && (got == "" || got == tc.in):
				t.Fatalf("X-Request-Id = %q, want a minted id", got)
			}
			if !strings.Contains(logs.String(), `"request_id":"`+got+`"`) {
				t.Fatalf("request id %q not in the log:\n%s", got, logs)
			}
		})
	}
}

func TestUnauthenticatedRoutesUnderV1Are401(t *testing.T) {
	t.Parallel()
	called := false
	base, _ := routerOnly(t, func(context.Context, string) (store.Principal, error) {
		called = true
		return store.Principal{}, store.ErrNotFound
	}, nil)
	for _, path := range []string{"/v1/approvals", "/v1/conversations", "/v1/turns/x", "/v1/nothing"} {
		resp := doHTTP(t, base, request{method: "GET", path: path})
		errorOf(t, resp, http.StatusUnauthorized, "unauthorized")
		if resp.header.Get("WWW-Authenticate") != `Bearer realm="steward"` {
			t.Errorf("%s: WWW-Authenticate = %q", path, resp.header.Get("WWW-Authenticate"))
		}
	}
	if called {
		t.Fatal("a request without a key reached the authenticator")
	}
}

// TestUnconfiguredServicesAnswer404: the API builds no service (docs/ARCHITECTURE.md §7); a
// route whose service Deps leaves nil says so in words with a 404, as an optional feature's
// route does, instead of failing on a service it made up.
func TestUnconfiguredServicesAnswer404(t *testing.T) {
	t.Parallel()
	base, _ := routerOnly(t,
		func(context.Context, string) (store.Principal, error) {
			return store.Principal{OwnerID: uuid.New()}, nil
		},
		func(context.Context) error { return nil })
	id := uuid.NewString()
	for _, req := range []request{
		{method: "GET", path: "/v1/control"},
		{method: "POST", path: "/v1/control/stop", body: `{"reason":"x"}`},
		{method: "GET", path: "/v1/rules"},
		{method: "GET", path: "/v1/approvals"},
		{method: "GET", path: "/v1/conversations"},
		{method: "GET", path: "/v1/notifications"},
		{method: "GET", path: "/v1/household/approvals"},
		{method: "POST", path: "/v1/turns/" + id + "/calls/c1/undo"},
		{method: "GET", path: "/v1/accounts"},
		{method: "GET", path: "/v1/reminders"},
		{method: "POST", path: "/v1/automations", body: `{"instruction":"x","schedule":"every day at 9"}`},
		{method: "POST", path: "/v1/voice/transcribe", body: "RIFF"},
		{method: "POST", path: "/v1/voice/speak", body: `{"text":"hi"}`},
		{method: "POST", path: "/v1/chat", body: `{"message":"hi","speak":true}`},
	} {
		req.key = "stw_anything"
		e := errorOf(t, doHTTP(t, base, req), http.StatusNotFound, "not_found")
		if !strings.Contains(e.Error.Message, "not configured on this server") {
			t.Errorf("%s %s: %q, want it to say the service is not configured", req.method, req.path, e.Error.Message)
		}
	}
}
