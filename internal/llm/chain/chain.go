// Package chain is an llm.Model over an ordered list of models (STEWARD_MODELS): a call goes
// to the first model whose circuit breaker is closed; when that model is rate limited, failing
// or unreachable (llm.IsUnavailable) or its attempt times out, the call moves to the next.
// Any other error (a malformed request, a stream that already delivered text) ends the call:
// another model would not do better, and the client must not see text twice.
//
// Each model has a circuit breaker: after Threshold consecutive unavailable failures it is
// skipped for Cooldown, then one call probes it (a success closes it, a failure opens it
// again). Every attempt that did not answer — failed or skipped — is reported in
// llm.Response.Attempts, on success and on failure, for the turn's story and its budgets.
//
// Provider metadata: only the first model (the chain's Name, which a turn records) is sent
// the messages' ProviderMeta. A fallback model is sent none, and the ProviderMeta of its
// answer is dropped, so a later call never sends one provider's thought signatures to another
// (docs/ARCHITECTURE.md §2).
package chain

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// Defaults of a zero Config.
const (
	DefaultThreshold = 3
	DefaultCooldown  = 30 * time.Second
)

// Config tunes a Chain.
type Config struct {
	// Threshold is how many consecutive unavailable failures open a model's breaker;
	// DefaultThreshold when 0.
	Threshold int
	// Cooldown is how long an open breaker skips its model; DefaultCooldown when 0.
	Cooldown time.Duration
	// AttemptTimeout bounds each model's attempt, so that a hanging provider leaves time for
	// the next; 0 leaves only the caller's deadline. The last model is not bounded by it.
	AttemptTimeout time.Duration
	// Now is the clock of the breakers; time.Now when nil.
	Now steward.Clock
}

// Chain is a fallback chain of models. It is safe for concurrent use; its breakers are shared
// by every call in the process.
type Chain struct {
	models   []llm.Model
	breakers []*breaker
	cfg      Config
}

var _ llm.Model = (*Chain)(nil)

// ErrAllOpen is the error of a call that found every model's breaker open.
var ErrAllOpen = errors.New("every model of the chain is cooling down after repeated failures")

// New returns a chain over models, first preferred.
func New(cfg Config, models ...llm.Model) (*Chain, error) {
	if len(models) == 0 {
		return nil, errors.New("chain: no models")
	}
	if cfg.Threshold <= 0 {
		cfg.Threshold = DefaultThreshold
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = DefaultCooldown
	}
	c := &Chain{models: models, cfg: cfg}
	for range models {
		c.breakers = append(c.breakers, &breaker{})
	}
	return c, nil
}

// Name is the first model's name: the model a turn records, and the one its messages' provider
// metadata belongs to.
func (c *Chain) Name() string { return c.models[0].Name() }

// Generate runs req on the first available model, moving on as the package describes. The
// Response's Model is the model that answered; its Attempts are the ones that did not.
func (c *Chain) Generate(ctx context.Context, req llm.Request, onDelta llm.DeltaFunc) (llm.Response, error) {
	var attempts []llm.Attempt
	var lastErr error
	for i, m := range c.models {
		b := c.breakers[i]
		if !b.allow(c.cfg.Now.Now()) {
			attempts = append(attempts, llm.Attempt{Model: m.Name(), Error: "circuit open", Skipped: true})
			continue
		}
		r := req
		if i > 0 {
			r.Messages = steward.WithoutProviderMeta(req.Messages)
		}
		delivered := false
		var delta llm.DeltaFunc
		if onDelta != nil {
			delta = func(text string) error { delivered = true; return onDelta(text) }
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if c.cfg.AttemptTimeout > 0 && i < len(c.models)-1 {
			actx, cancel = context.WithTimeout(ctx, c.cfg.AttemptTimeout)
		}
		start := time.Now()
		resp, err := m.Generate(actx, r, delta)
		cancel()
		if err == nil {
			b.succeed()
			if i > 0 {
				resp.Message = steward.WithoutProviderMeta([]steward.Message{resp.Message})[0]
			}
			resp.Attempts = append(attempts, resp.Attempts...)
			return resp, nil
		}
		timedOut := errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
		if delivered || !(llm.IsUnavailable(err) || timedOut) {
			b.release()
			resp.Attempts = append(attempts, resp.Attempts...)
			return resp, err // not the provider's outage: no other model would do better
		}
		b.fail(c.cfg.Now.Now(), c.cfg.Threshold, c.cfg.Cooldown)
		attempts = append(attempts, llm.Attempt{Model: m.Name(), Error: err.Error(), Usage: resp.Usage, Latency: time.Since(start)})
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	if lastErr == nil {
		lastErr = ErrAllOpen
	}
	return llm.Response{Attempts: attempts}, llm.Unavailable(fmt.Errorf("chain: no model answered (%d tried): %w", len(attempts), lastErr))
}

// breaker counts a model's consecutive unavailable failures.
type breaker struct {
	mu        sync.Mutex
	failures  int
	openUntil time.Time
	probing   bool
}

// allow reports whether the model may be called now: closed, or open past its cool-down with
// no other call probing it.
func (b *breaker) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() {
		return true
	}
	if now.Before(b.openUntil) || b.probing {
		return false
	}
	b.probing = true
	return true
}

func (b *breaker) succeed() {
	b.mu.Lock()
	b.failures, b.openUntil, b.probing = 0, time.Time{}, false
	b.mu.Unlock()
}

// release ends a probe that neither succeeded nor showed an outage.
func (b *breaker) release() {
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

func (b *breaker) fail(now time.Time, threshold int, cooldown time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures++
	if b.probing || b.failures >= threshold {
		b.openUntil, b.probing = now.Add(cooldown), false
	}
}
