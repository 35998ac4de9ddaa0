package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/store"
)

// This is a stand-in: the full router of internal/httpapi replaces it.

const serveUsage = `Usage: steward serve

Runs the HTTP server on STEWARD_ADDR (default 127.0.0.1:8080), connected as APP_DATABASE_URL.
For now it serves only GET /healthz: {"status":"ok","database":"ok"}, or 503 when the
database is unreachable. SIGINT or SIGTERM shut it down gracefully.
`

// shutdownGrace is how long in-flight requests get to finish on shutdown.
const shutdownGrace = 10 * time.Second

func runServe(ctx context.Context, e env, cfg config.Config, args []string) error {
	if _, err := parseFlags(flag.NewFlagSet("serve", flag.ContinueOnError), args, serveUsage, 0, 0); err != nil {
		return err
	}
	if err := cfg.Require("APP_DATABASE_URL"); err != nil {
		return err
	}
	log := zerolog.Ctx(ctx)
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	s, err := store.Open(octx, cfg.AppDatabaseURL, cfg.DBMaxConns)
	cancel()
	if err != nil {
		return fmt.Errorf("open database: %w", store.VectorError(err))
	}
	defer s.Close()

	mux := http.NewServeMux()
	mux.Handle("GET /healthz", healthz(s))
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on STEWARD_ADDR %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info().Str("addr", ln.Addr().String()).Msg("listening")
	fmt.Fprintf(e.stdout, "Steward listening on http://%s (GET /healthz). Ctrl-C stops it.\n", ln.Addr())

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info().Msg("stopped")
	return nil
}

// pinger is the part of the store the health check needs.
type pinger interface {
	Ping(ctx context.Context) error
}

// healthz reports liveness and database reachability, without authentication and without
// internal detail: the reason a ping failed goes to the log only.
func healthz(db pinger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		type health struct {
			Status   string `json:"status"`
			Database string `json:"database"`
		}
		status, body := http.StatusOK, health{"ok", "ok"}
		if err := db.Ping(ctx); err != nil {
			zerolog.Ctx(r.Context()).Warn().Err(err).Msg("healthz: database unreachable")
			status, body = http.StatusServiceUnavailable, health{"unavailable", "unreachable"}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body) //nolint:errcheck // the client went away
	})
}
