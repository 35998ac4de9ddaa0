package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestAPIKeyFailuresAreSlowedDown (issue 27 §5): after 10 unknown API keys in a minute from
// one client (as the trusted proxy's X-Forwarded-For names it), that client gets 429
// rate_limited with Retry-After and a message in words, whatever key it sends next; another
// client's key still works. Ten unknown keys sharing a real key's prefix slow down further
// unknown keys with that prefix, never the real key.
func TestAPIKeyFailuresAreSlowedDown(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 4)
	_, key := db.Owner(t, "alice")
	srv := httptest.NewServer(httpapi.New(withServices(httpapi.Deps{Store: db.Store, Auth: db.Door, Logger: zerolog.Nop(), TrustedProxyHeader: "X-Forwarded-For"})))
	t.Cleanup(srv.Close)
	get := func(key, client string) response {
		return doHTTP(t, srv.URL, request{method: "GET", path: "/v1/approvals", key: key, header: map[string]string{"X-Forwarded-For": client}})
	}
	limited := func(what string, resp response, words string) {
		t.Helper()
		e := errorOf(t, resp, http.StatusTooManyRequests, "rate_limited")
		if s, err := strconv.Atoi(resp.header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
			t.Errorf("%s: Retry-After = %q; want 1 to 60 seconds", what, resp.header.Get("Retry-After"))
		}
		if !strings.Contains(e.Error.Message, words) || !strings.Contains(e.Error.Message, "try again in") {
			t.Errorf("%s: message %q; want it to say %q and how long to wait", what, e.Error.Message, words)
		}
	}

	for i := range 10 {
		errorOf(t, get("stw_wrong"+strconv.Itoa(i), "203.0.113.9"), http.StatusUnauthorized, "unauthorized")
	}
	limited("11th unknown key from the client", get("stw_wrong10", "203.0.113.9"), "too many failed API-key attempts from your address")
	limited("the right key from the slowed-down client", get(key, "203.0.113.9"), "too many failed API-key attempts from your address")
	if resp := get(key, "198.51.100.4"); resp.status != http.StatusOK {
		t.Fatalf("alice's key from another client = %d %s; want 200", resp.status, resp.body)
	}

	prefix := auth.Display(key)
	for i := range 10 {
		errorOf(t, get(prefix+"guess"+strconv.Itoa(i), "192.0.2."+strconv.Itoa(10+i)), http.StatusUnauthorized, "unauthorized")
	}
	limited("11th unknown key with the prefix", get(prefix+"guess-eleven", "192.0.2.99"), "too many failed API-key attempts with keys starting "+prefix)
	if resp := get(key, "192.0.2.100"); resp.status != http.StatusOK {
		t.Fatalf("alice's own key after guesses at its prefix = %d %s; want 200", resp.status, resp.body)
	}
}
