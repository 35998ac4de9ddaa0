package main

import (
	"context"
	"errors"
	"expvar"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/store"
)

const serveUsage = `Usage: steward serve

Runs Steward as one HTTP server on STEWARD_ADDR (default 127.0.0.1:8080): every route of the
API (see docs/API.md), the scheduler tick every minute (jobs, queued webhook runs, memory
ingestion, notification delivery, expiry of old suspended turns) and webhook runs right
after their 202. Connects as APP_DATABASE_URL (steward_app) and DOOR_DATABASE_URL
(steward_door: API-key lookups, the scheduler's scans, webhook routing), never as
DATABASE_URL, and refuses to start if either role owns the tables.
SIGINT or SIGTERM shut it down gracefully: no new request is taken, requests in flight get
half of STEWARD_SHUTDOWN_GRACE (10s) to finish, then running turns are saved to continue in
the next process, which takes them as it starts.
`

func runServe(ctx context.Context, e env, cfg config.Config, args []string) error {
	if _, err := parseFlags(flag.NewFlagSet("serve", flag.ContinueOnError), args, serveUsage, 0, 0); err != nil {
		return err
	}
	if err := cfg.Require("APP_DATABASE_URL", "DOOR_DATABASE_URL"); err != nil {
		return err
	}
	log := zerolog.Ctx(ctx)
	a, err := app.NewServer(ctx, cfg)
	if errors.Is(err, app.ErrUnpriced) {
		return err
	}
	if err != nil {
		return fmt.Errorf("open database: %w", store.VectorError(err))
	}
	defer a.Close()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on STEWARD_ADDR %s: %w", cfg.Addr, err)
	}
	// Slow or silent clients cannot hold connections: turn routes replace WriteTimeout by
	// their own per-write deadline (internal/httpapi), since a turn may run longer.
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if cfg.DebugAddr != "" {
		debug, err := debugServer(cfg.DebugAddr)
		if err != nil {
			return err
		}
		defer debug.Close()
	}
	// The background work (scheduler ticks, memory worker, webhook runs) is one errgroup:
	// stopBackground cancels it and waits until all of it returned. It runs before the
	// deferred a.Close on every path, so no goroutine uses a closed pool (ARCHITECTURE.md §10).
	bgCtx, cancelBackground := context.WithCancel(ctx)
	background := make(chan error, 1)
	go func() { background <- a.RunBackground(bgCtx) }()
	stopBackground := func() error {
		cancelBackground()
		return <-background
	}
	log.Info().Str("addr", ln.Addr().String()).Msg("listening")
	fmt.Fprintf(e.stdout, "Steward listening on http://%s (model: %s). Ctrl-C stops it.\n", ln.Addr(), a.Runner.Model.Name())

	select {
	case err = <-serveErr:
		return errors.Join(fmt.Errorf("serve: %w", err), stopBackground())
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down")
	// In-flight requests finish first (one may hand a webhook run to the background group),
	// then the background stops; the pools close last (deferred).
	// Half the grace is the requests' to finish; then the turns still running are stopped
	// at their next step and saved continuing, for the next process (agent.Runner.Stop).
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownGrace)
	defer cancel()
	stopTurns := time.AfterFunc(cfg.ShutdownGrace/2, a.Runner.Stop)
	defer stopTurns.Stop()
	shutdownErr := srv.Shutdown(sctx)
	a.Runner.Stop() // the background's turns (webhook runs, jobs) too
	if err := stopBackground(); err != nil {
		return fmt.Errorf("background: %w", err)
	}
	if shutdownErr != nil {
		return fmt.Errorf("shutdown: %w", shutdownErr)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info().Msg("stopped")
	return nil
}

// debugServer serves the process's runtime counters (expvar: memstats, with Mallocs, and the
// command line) as JSON on GET /debug/vars, and Go's profiles on /debug/pprof/, at addr, STEWARD_DEBUG_ADDR: the cycle benchmark
// (cmd/benchcycle) reads a run's allocations from it. No owner data; off unless set. It lives
// here, not in internal/app, so the Lambda functions do not link expvar.
func debugServer(addr string) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on STEWARD_DEBUG_ADDR %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /debug/vars", expvar.Handler())
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: ln.Addr().String(), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	return srv, nil
}
