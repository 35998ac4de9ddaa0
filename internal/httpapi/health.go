package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/store"
)

// healthTimeout bounds the database check of GET /healthz.
const healthTimeout = 2 * time.Second

// errNoHealthCheck: the API was built with neither Deps.Health nor Deps.Store.
var errNoHealthCheck = errors.New("no database health check configured")

// healthz reports liveness and database reachability, without authentication:
// 200 {"status":"ok","database":"ok"}, or 503 {"status":"unavailable","database":"unreachable"},
// or "read_only" when the database answers but accepts no writes (store.ErrReadOnly). Why
// the check failed goes to the log only.
func (a *api) healthz(w http.ResponseWriter, r *http.Request) {
	status, body := http.StatusOK, map[string]string{"status": "ok", "database": "ok"}
	err := errNoHealthCheck
	if a.d.Health != nil {
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		err = a.d.Health(ctx)
		cancel()
	}
	switch {
	case errors.Is(err, store.ErrReadOnly):
		zerolog.Ctx(r.Context()).Warn().Err(err).Msg("healthz: database read-only")
		status, body = http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "read_only"}
	case err != nil:
		zerolog.Ctx(r.Context()).Warn().Err(err).Msg("healthz: database unreachable")
		status, body = http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"}
	}
	writeJSON(w, status, body)
}
