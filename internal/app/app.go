// Package app is Steward's composition root: from one config.Config it builds, once per
// process (once per Lambda cold start), everything a request needs — secrets, database
// pools, the model, the tools, the gate, the agent runner — and hands functions/* and
// cmd/steward a single http.Handler from internal/httpapi. Nothing here runs per request.
package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/llm/gemini"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/trace"
)

// App is one process's wiring. Build it with New, serve Handler, Close it at the end.
type App struct {
	// Logger is the process logger (STEWARD_LOG_LEVEL, STEWARD_LOG_FORMAT), writing to stderr.
	Logger zerolog.Logger
	// Store is the application pool (APP_DATABASE_URL, the steward_app role, under RLS).
	Store *store.Store
	// Door is the owner-role pool for cross-owner reads: API-key lookup, the deployment's
	// daily cost (DATABASE_URL).
	Door *store.Door
	// Runner runs and resumes turns.
	Runner *agent.Runner

	handler http.Handler
}

// New builds the App for cfg: it reads the secrets named by cfg's *_SSM parameters from AWS
// Systems Manager (when set), connects both database pools, and picks the model — Gemini
// when a key is set, otherwise the offline demo model, announced by a warning in the log.
func New(ctx context.Context, cfg config.Config) (*App, error) {
	return build(ctx, cfg, settings{logOut: os.Stderr})
}

// settings are the seams tests use; New uses the real ones.
type settings struct {
	logOut io.Writer
	ssm    ssmSettings
}

// openTimeout bounds reading secrets and connecting at start, so a cold start facing an
// unreachable database or SSM endpoint fails with a reason instead of hanging to the timeout.
const openTimeout = 20 * time.Second

func build(ctx context.Context, cfg config.Config, s settings) (_ *App, err error) {
	log := NewLogger(cfg, s.logOut)
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	cfg, err = resolveSecrets(octx, cfg, s.ssm)
	if err != nil {
		return nil, err
	}
	if err := cfg.Require("APP_DATABASE_URL", "DATABASE_URL"); err != nil {
		return nil, err
	}
	a := &App{Logger: log}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.Store, err = store.Open(octx, cfg.AppDatabaseURL, cfg.DBMaxConns); err != nil {
		return nil, fmt.Errorf("open APP_DATABASE_URL: %w", err)
	}
	if a.Door, err = store.OpenDoor(octx, cfg.DatabaseURL); err != nil {
		return nil, fmt.Errorf("open DATABASE_URL: %w", err)
	}
	model, err := newModel(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	a.Runner = &agent.Runner{
		Model:         model,
		Tools:         tools.DefaultRegistry(),
		Store:         a.Store,
		Gate:          &safety.Gate{AllowAuto: cfg.AllowAutoMode},
		Control:       &safety.Control{GlobalCost: a.Door.GlobalCostToday},
		MaxIterations: cfg.MaxIterations,
		SuspendTTL:    cfg.SuspendTTL,
		Price:         trace.CostMicros,
	}
	a.handler = httpapi.New(httpapi.Deps{
		Runner:       a.Runner,
		Store:        a.Store,
		Auth:         a.Door,
		MaxBodyBytes: cfg.MaxBodyBytes,
		Logger:       log,
		Health:       a.Store.Ping,
	})
	return a, nil
}

// newModel returns Gemini when an API key is configured, else the demo model.
func newModel(ctx context.Context, cfg config.Config, log zerolog.Logger) (llm.Model, error) {
	if cfg.GeminiAPIKey == "" {
		log.Warn().Str("model", demo.Name).
			Msg("GEMINI_API_KEY is not set: answering with the offline demo model, not Gemini")
		return demo.New(), nil
	}
	m, err := gemini.New(ctx, gemini.Config{APIKey: cfg.GeminiAPIKey, BaseURL: cfg.GeminiBaseURL, Model: cfg.Model})
	if err != nil {
		return nil, err
	}
	ev := log.Info().Str("model", m.Name())
	if cfg.GeminiBaseURL != "" {
		ev = ev.Str("base_url", cfg.GeminiBaseURL)
	}
	ev.Msg("model: gemini")
	return m, nil
}

// Handler is every route of the API (internal/httpapi). Lambda mains wrap it in their
// adapter; `steward serve` listens with it.
func (a *App) Handler() http.Handler { return a.handler }

// Close closes both database pools. It is safe on a partly built App.
func (a *App) Close() {
	if a.Door != nil {
		a.Door.Close()
	}
	if a.Store != nil {
		a.Store.Close()
	}
}
