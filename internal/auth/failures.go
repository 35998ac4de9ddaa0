package auth

import (
	"fmt"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/ratelimit"

	"github.com/stewardhq/steward/internal/steward"
)

// FailureLimit unknown keys a minute, per client and per key prefix, before sign-in and the
// API's key check slow down (docs/SECURITY.md, "Failed keys slow down";
// docs/ARCHITECTURE.md §12).
const (
	FailureLimit  = 10
	FailureWindow = time.Minute
)

// Failures slows down API-key guessing, at sign-in and on the API alike (one Failures serves
// both). A client (ratelimit.Client) with FailureLimit unknown keys in its window is refused
// before any lookup, whatever key it sends, until the window ends. Unknown keys sharing a
// display prefix (Display) are counted too, from any client: past the limit a further
// unknown key with that prefix is refused instead of answered "unknown" — but a valid key is
// never refused for its prefix, so nobody can lock an owner out by guessing at it. A valid
// key counts nothing. Counts are per process (ratelimit). The zero value is ready to use.
type Failures struct {
	// Now is the clock; nil means time.Now.
	Now steward.Clock

	once              sync.Once
	clients, prefixes ratelimit.Limiter
}

func (f *Failures) init() {
	f.once.Do(func() {
		for _, l := range []*ratelimit.Limiter{&f.clients, &f.prefixes} {
			l.Max, l.Window, l.Now = FailureLimit, FailureWindow, f.Now
		}
	})
}

// Refusal is why an attempt is refused: too many failures from the client (Prefix empty) or
// with keys starting Prefix, and how long until it may try again.
type Refusal struct {
	Prefix     string
	RetryAfter time.Duration
}

// Check refuses a client that has had FailureLimit failures in its window; call it before
// the lookup.
func (f *Failures) Check(client string) *Refusal {
	f.init()
	if d := f.clients.Wait(client); d > 0 {
		return &Refusal{RetryAfter: d}
	}
	return nil
}

// Failed counts a lookup of key from client that found nothing; past the limit for key's
// prefix, the answer is the refusal instead of "unknown key".
func (f *Failures) Failed(client, key string) *Refusal {
	f.init()
	f.clients.Add(client)
	p := Display(key)
	if d := f.prefixes.Add(p); d > 0 {
		return &Refusal{Prefix: p, RetryAfter: d}
	}
	return nil
}

// FailedAttempt counts a failed sign-in that carried no key (a passkey that did not sign in)
// against client alone.
func (f *Failures) FailedAttempt(client string) {
	f.init()
	f.clients.Add(client)
}

// Seconds is RetryAfter in whole seconds, rounded up: the Retry-After header.
func (r *Refusal) Seconds() int { return ratelimit.Seconds(r.RetryAfter) }

// Why says in words what was refused and for how long, after "too many failed …":
// "from your address; try again in 42 seconds".
func (r *Refusal) Why() string {
	from := "from your address"
	if r.Prefix != "" {
		from = "with keys starting " + r.Prefix
	}
	unit := "seconds"
	if r.Seconds() == 1 {
		unit = "second"
	}
	return fmt.Sprintf("%s; try again in %d %s", from, r.Seconds(), unit)
}
