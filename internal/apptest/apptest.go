// Package apptest builds, for a test, the graph production runs: app.Build on a fresh test
// database (internal/testdb), with the test's model, clock and resolver as the only seams
// (docs/ARCHITECTURE.md §7). A test that wants the API or the web app serves Env.Handler (or
// Env.URL); one that wants a service takes it from Env.App — the same one the handler calls.
package apptest

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
)

// Options are a test's seams and settings; the zero value is production's graph with the
// demo model, the system clock and the system resolver.
type Options struct {
	// Model answers the turns; nil means the offline demo model (no GEMINI_API_KEY).
	Model llm.Model
	// Now is the one clock; nil means the system clock.
	Now steward.Clock
	// Lookup resolves host names for the notification channels, their delivery and the MCP
	// servers (egresstest.Lookup maps names to test addresses); nil means the system resolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Env sets configuration variables (as config.Load reads them) over the test's
	// database URLs and a fixed STEWARD_SECRET_KEY.
	Env map[string]string
	// Log receives the app's log; nil discards it.
	Log io.Writer
	// MaxConns is the test's own pools' size (DB.Store); zero means 10.
	MaxConns int32
	// Through, when not nil, rewrites the database URLs the app connects with (a proxy in
	// front of PostgreSQL: testdb.Outage).
	Through func(url string) string
	// Wrap, when not nil, wraps the handler Server serves (to observe requests from the
	// server side); App.Handler stays production's.
	Wrap func(http.Handler) http.Handler
}

// Env is one test's app: the production graph over its own database.
type Env struct {
	*app.App
	// DB is the test's database, opened as Steward opens it plus the owner door tests use to
	// create owners (DB.Owner) and households.
	DB testdb.Opened
	// Server serves App.Handler, closed when the test ends.
	Server *httptest.Server
}

// SecretKey is the STEWARD_SECRET_KEY every Env is built with.
var SecretKey = []byte("0123456789abcdef0123456789abcdef")

// New builds the App for t on a fresh database and serves its handler; both are closed when
// t ends. It is the graph production runs: a test that needs another one changes the
// configuration (Options.Env) or a seam, never the wiring.
func New(t testing.TB, o Options) *Env {
	t.Helper()
	if o.MaxConns == 0 {
		o.MaxConns = 10
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	db := testdb.Open(t, o.MaxConns)
	if o.Through == nil {
		o.Through = func(url string) string { return url }
	}
	env := map[string]string{
		"APP_DATABASE_URL":   o.Through(db.AppURL),
		"DOOR_DATABASE_URL":  o.Through(db.DoorURL),
		"STEWARD_SECRET_KEY": base64.StdEncoding.EncodeToString(SecretKey),
	}
	for k, v := range o.Env {
		env[k] = v
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("apptest: config: %v", err)
	}
	a, err := app.Build(context.Background(), cfg, app.Seams{LogOut: o.Log, Model: o.Model, Now: o.Now, Lookup: o.Lookup})
	if err != nil {
		t.Fatalf("apptest: build: %v", err)
	}
	t.Cleanup(a.Close)
	h := a.Handler()
	if o.Wrap != nil {
		h = o.Wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Env{App: a, DB: db, Server: srv}
}
