package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/stewardhq/steward/internal/trace"
)

// readiness is the database check (App.check) of a Lambda cold start. The cold start begins
// it and goes on building the App, so init does not wait for PostgreSQL's connections and
// role checks; every invocation waits for it instead (App.Ready), and nothing is served
// before it passed. A failed check is not kept: the next invocation checks again, as
// Lambda would re-run a failed init.
type readiness struct {
	check func(context.Context) error
	mu    sync.Mutex
	cur   *attempt // nil before the first attempt and after a failed one
}

// attempt is one run of the check; err is set before done closes.
type attempt struct {
	done chan struct{}
	err  error
}

// start begins an attempt unless one is running or has passed, and returns it.
func (r *readiness) start() *attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		at := &attempt{done: make(chan struct{})}
		r.cur = at
		go func() {
			// Not the invocation's context: a client going away must not fail the check for
			// the invocations after it.
			ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
			defer cancel()
			at.err = r.check(ctx)
			close(at.done)
		}()
	}
	return r.cur
}

// wait returns the attempt's result once it is known, or ctx's error first.
func (r *readiness) wait(ctx context.Context) error {
	at := r.start()
	select {
	case <-at.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if at.err != nil {
		r.mu.Lock()
		if r.cur == at {
			r.cur = nil
		}
		r.mu.Unlock()
	}
	return at.err
}

// Ready waits for the database check of a Lambda cold start and returns its error (nil
// when New built the App: it checked before returning).
func (a *App) Ready(ctx context.Context) error {
	if a.ready == nil {
		return nil
	}
	if err := a.ready.wait(ctx); err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	return nil
}

// unreadyBody is the response to a request refused because the database check failed.
const unreadyBody = `{"error":{"code":"internal","message":"the service cannot use its database; see its log"}}` + "\n"

// gate makes h wait for Ready; a failed check is logged and answered 503, and h never runs.
func (a *App) gate(h http.Handler) http.Handler {
	if a.ready == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.Ready(r.Context()); err != nil {
			a.Logger.Error().Str("error", trace.Redact(err.Error())).Str("path", r.URL.Path).Msg("request refused: the database check failed")
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, unreadyBody) //nolint:errcheck // the client went away; nothing to do
			return
		}
		h.ServeHTTP(w, r)
	})
}
