package webapp_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestPagesWhileTheDatabaseIsDown: a signed-in owner opening pages while the database is
// stopped reads, in words, that Steward cannot reach it (503 with Retry-After), not "something
// went wrong"; once it is back the same pages load, without a restart and still signed in.
func TestPagesWhileTheDatabaseIsDown(t *testing.T) {
	out := testdb.NewOutage(t, os.Getenv("APP_DATABASE_URL"))
	e := apptest.New(t, apptest.Options{MaxConns: 4, Through: out.Through})
	_, key := e.DB.Owner(t, "alice")
	c := newClient()
	if a := signInAs(t, c, e.Server.URL, key); !a.session() {
		t.Fatalf("sign-in: %d %s", a.status, a.body)
	}
	get := func(path string) *answer {
		req, _ := http.NewRequest("GET", e.Server.URL+path, nil)
		return roundTrip(t, c, req)
	}
	out.Down()
	for _, path := range []string{"/", "/approvals", "/conversations", "/settings"} {
		a := get(path)
		if a.status != http.StatusServiceUnavailable || !strings.Contains(a.body, "cannot reach its database") || a.header.Get("Retry-After") == "" {
			t.Errorf("GET %s with the database down: %d Retry-After=%q\n%s", path, a.status, a.header.Get("Retry-After"), a.body)
		}
	}
	out.Up()
	for _, path := range []string{"/", "/approvals"} {
		if a := get(path); a.status != http.StatusOK {
			t.Errorf("GET %s once the database is back: %d", path, a.status)
		}
	}
}
