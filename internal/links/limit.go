package links

import (
	"sync"
	"time"
)

// Limiter counts attempts per key (an IP, a token) in fixed windows, in memory. Under
// `steward serve` that bounds guessing and hammering per process; on Lambda each warm
// instance counts alone (README "Approve from a notification": put a WAF rate rule or API
// Gateway throttling in front for a deployment-wide limit). Guessing a 256-bit token is
// hopeless anyway: the limit protects the database from floods.
type Limiter struct {
	// Max is the attempts allowed per key and window.
	Max    int
	Window time.Duration
	Now    func() time.Time

	mu    sync.Mutex
	start time.Time
	seen  map[string]int
}

// Allow counts an attempt for key and reports whether it is within the limit.
func (l *Limiter) Allow(key string) bool {
	now := time.Now()
	if l.Now != nil {
		now = l.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil || now.Sub(l.start) >= l.Window || now.Before(l.start) {
		l.start, l.seen = now, map[string]int{}
	}
	l.seen[key]++
	return l.seen[key] <= l.Max
}
