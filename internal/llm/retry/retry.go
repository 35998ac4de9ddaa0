// Package retry is the one retry policy for calls to a model API (chat, background model
// calls and embeddings), whatever the provider: a few attempts when the API is rate limited or
// unavailable, waiting what the server asks for (Retry-After, or a wait the provider names in
// its error) or else an exponential backoff with jitter, and giving up at once rather than
// waiting past a cap or past the context's deadline, so that a turn still ends in time.
//
// It imports no SDK: each adapter (internal/llm/gemini, internal/llm/openai) says which of its
// SDK's errors are worth another attempt (Policy.Retryable) and where its errors name a wait
// (Policy.Delay). SDKs turn an error response into an error value that keeps the status and
// body but not the headers: Transport reads Retry-After on the way through and leaves it for
// Do in the request's context, so each call learns only its own server's answer.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Defaults of a zero Policy.
const (
	DefaultAttempts = 3
	DefaultBackoff  = time.Second
	DefaultMaxWait  = 10 * time.Second
)

// Policy bounds the retries of one call. The zero value is DefaultAttempts attempts waiting
// from DefaultBackoff up to DefaultMaxWait.
type Policy struct {
	// Attempts caps the requests of one call, the first included; DefaultAttempts when 0.
	Attempts int
	// Backoff is the wait before the first retry when the server names none (DefaultBackoff
	// when 0); it doubles on each retry, with jitter, up to MaxWait.
	Backoff time.Duration
	// MaxWait is the longest wait between two attempts (DefaultMaxWait when 0). A longer wait
	// named by the server is not waited: the call fails at once, as it does when the wait
	// would pass the context's deadline.
	MaxWait time.Duration
	// Retryable classifies an error of the adapter's SDK: its status, and whether it is worth
	// another attempt. Each adapter sets its own; when nil, no error is retried.
	Retryable func(error) (int, bool)
	// Delay is the wait an error itself names (Gemini's google.rpc.RetryInfo), used when the
	// response had no Retry-After; nil or 0 when it names none.
	Delay func(error) time.Duration
}

func (p Policy) withDefaults() Policy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultAttempts
	}
	if p.Backoff <= 0 {
		p.Backoff = DefaultBackoff
	}
	if p.MaxWait <= 0 {
		p.MaxWait = DefaultMaxWait
	}
	return p
}

// Do runs call until it succeeds, fails with an error that is not worth another attempt
// (Policy.Retryable, or wrapped by Permanent), or the policy is spent. call gets a context that Transport leaves the
// server's Retry-After in; it must make its requests with it.
func (p Policy) Do(ctx context.Context, call func(ctx context.Context) error) error {
	p = p.withDefaults()
	for attempt := 1; ; attempt++ {
		h := new(hint)
		err := call(context.WithValue(ctx, hintKey{}, h))
		if err == nil {
			return nil
		}
		status, ok := p.classify(err)
		if !ok {
			return err
		}
		if attempt >= p.Attempts {
			return fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		}
		wait, named := h.get(), true
		if wait <= 0 && p.Delay != nil {
			wait = p.Delay(err)
		}
		if wait <= 0 {
			wait, named = p.backoff(attempt), false
		}
		if named && wait > p.MaxWait {
			return fmt.Errorf("the server asks to retry in %s, longer than %s: %w", wait, p.MaxWait, err)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return fmt.Errorf("a retry in %s would pass the deadline: %w", wait, err)
		}
		zerolog.Ctx(ctx).Warn().Int("status", status).Int("attempt", attempt).Dur("wait", wait).
			Bool("server_named", named).Msg("model call failed; retrying")
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (waiting to retry after: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// backoff is the wait before retry number attempt when the server named none: Backoff
// doubled per attempt, capped at MaxWait, with its upper half random.
func (p Policy) backoff(attempt int) time.Duration {
	d := p.MaxWait
	if attempt-1 < 32 {
		d = min(p.Backoff<<(attempt-1), p.MaxWait)
	}
	return d/2 + rand.N(d/2+1)
}

// classify is Retryable's answer for err, except that an error wrapped by Permanent is never
// worth another attempt.
func (p Policy) classify(err error) (int, bool) {
	var perm permanent
	if errors.As(err, &perm) || p.Retryable == nil {
		return 0, false
	}
	return p.Retryable(err)
}

// Retries reports whether Do would retry err (were the policy not spent): a model adapter
// marks such an error llm.Unavailable once the retries are spent.
func (p Policy) Retries(err error) bool {
	_, ok := p.classify(err)
	return ok
}

// Permanent marks err as not worth another attempt whatever it wraps: a stream that already
// delivered text must not start over. errors.As and errors.Is still see what it wraps.
func Permanent(err error) error { return permanent{err} }

type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// hintKey is the context key of a call's *hint.
type hintKey struct{}

// hint is the wait a server asked for, if any.
type hint struct {
	mu    sync.Mutex
	after time.Duration
}

func (h *hint) set(d time.Duration) {
	h.mu.Lock()
	h.after = d
	h.mu.Unlock()
}

func (h *hint) get() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.after
}

// Client returns a copy of c (a new client when c is nil) whose transport is wrapped by
// Transport. c itself is not changed.
func Client(c *http.Client) *http.Client {
	hc := &http.Client{}
	if c != nil {
		cp := *c
		hc = &cp
	}
	hc.Transport = Transport{Base: hc.Transport}
	return hc
}

// Transport records the Retry-After of 429 and 503 responses for the Do that made the
// request.
type Transport struct {
	// Base sends the requests; http.DefaultTransport when nil.
	Base http.RoundTripper
}

// RoundTrip sends req with the base transport.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return resp, err
	}
	if h, ok := req.Context().Value(hintKey{}).(*hint); ok {
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			h.set(d)
		}
	}
	return resp, err
}

// ParseRetryAfter reads a Retry-After value: delay-seconds or an HTTP date.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 || secs > 24*3600 {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
