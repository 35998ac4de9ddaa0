// Package ratelimit counts attempts per key (a client, an approval link's token, an API
// key's prefix) in memory, and finds the client a request came from — the one helper every
// limiter of Steward uses (docs/CONFIGURATION.md: STEWARD_TRUSTED_PROXY_HEADER).
//
// The counts are per process. Under `steward serve` that is the deployment; on Lambda each
// warm instance counts alone, so a deployment-wide limit needs a WAF rate rule or API
// Gateway throttling in front (docs/ARCHITECTURE.md §12).
package ratelimit

import (
	"crypto/sha256"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

// DefaultMaxKeys is Limiter.MaxKeys when zero.
const DefaultMaxKeys = 10000

// Limiter allows Max attempts per key in a window that starts with the key's first attempt.
// A stranger chooses the keys, so memory is bounded: keys are kept as their SHA-256, an
// entry is dropped once its window has passed, and at most MaxKeys are tracked — a key
// arriving when the table is full of live windows is not counted (allowed), so a flood of
// fresh keys can neither grow the table nor block anyone else's key. The zero value
// (with Max and Window set) is ready to use.
type Limiter struct {
	// Max is the attempts allowed per key and window.
	Max    int
	Window time.Duration
	// MaxKeys caps the keys tracked at once; 0 means DefaultMaxKeys.
	MaxKeys int
	// Now is the clock (nil: the system clock).
	Now steward.Clock

	mu      sync.Mutex
	windows map[[sha256.Size]byte]*window
	// sweepAt is when the oldest window ends: a full table has nothing to drop before.
	sweepAt time.Time
}

type window struct {
	start time.Time
	n     int
}

// Add counts an attempt for key. It returns 0 while key is within Max attempts in its
// window, else how long until the window ends.
func (l *Limiter) Add(key string) time.Duration {
	now := l.Now.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.window(key, now, true)
	if w == nil { // not tracked: the table is full
		return 0
	}
	if w.n++; w.n <= l.Max {
		return 0
	}
	return w.start.Add(l.Window).Sub(now)
}

// Wait is how long key must wait before its next attempt: 0 while it has had fewer than Max
// attempts in its window. It counts nothing.
func (l *Limiter) Wait(key string) time.Duration {
	now := l.Now.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.window(key, now, false)
	if w == nil || w.n < l.Max {
		return 0
	}
	return w.start.Add(l.Window).Sub(now)
}

// window is key's live window; a new one when add is set and there is room, else nil.
func (l *Limiter) window(key string, now time.Time, add bool) *window {
	h := sha256.Sum256([]byte(key))
	w := l.windows[h]
	if w != nil && l.passed(w, now) {
		delete(l.windows, h)
		w = nil
	}
	if w == nil && add && l.room(now) {
		w = &window{start: now}
		l.windows[h] = w
	}
	return w
}

func (l *Limiter) passed(w *window, now time.Time) bool {
	return now.Sub(w.start) >= l.Window || now.Before(w.start)
}

// Seconds is a wait in whole seconds, rounded up (a Retry-After value).
func Seconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

// room makes room for one more key if it can: when the table is full, windows that have
// passed are dropped (at most once until the oldest live one ends).
func (l *Limiter) room(now time.Time) bool {
	max := l.MaxKeys
	if max <= 0 {
		max = DefaultMaxKeys
	}
	if l.windows == nil {
		l.windows = make(map[[sha256.Size]byte]*window)
	}
	if len(l.windows) < max {
		return true
	}
	if now.Before(l.sweepAt) {
		return false
	}
	oldest := now
	for h, w := range l.windows {
		switch {
		case l.passed(w, now):
			delete(l.windows, h)
		case w.start.Before(oldest):
			oldest = w.start
		}
	}
	l.sweepAt = oldest.Add(l.Window)
	return len(l.windows) < max
}

// Client is the client a request came from, as limiters count it: an IP address (an IPv6
// client by its /64, the block one subscriber gets). With trustedHeader empty that is
// RemoteAddr — the TCP peer under `steward serve`, API Gateway's source IP on Lambda (the
// adapter sets RemoteAddr from the request context). Behind a proxy, trustedHeader names the
// header it adds the peer's address to (X-Forwarded-For): the right-most address in it,
// the one the trusted proxy wrote — everything to its left came from the client and is not
// believed. A request without a usable address there (one that bypassed the proxy) counts
// by RemoteAddr.
func Client(r *http.Request, trustedHeader string) string {
	if trustedHeader != "" {
		if v := r.Header.Values(trustedHeader); len(v) > 0 {
			last := v[len(v)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if a, ok := parseAddr(last); ok {
				return key(a)
			}
		}
	}
	if a, ok := parseAddr(r.RemoteAddr); ok {
		return key(a)
	}
	return r.RemoteAddr
}

// parseAddr reads an IP address, with or without a port ("203.0.113.7", "[2001:db8::1]:443").
func parseAddr(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return a.Unmap().WithZone(""), err == nil
}

func key(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
