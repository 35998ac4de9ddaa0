package auth

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

// CacheTTL is how long a key found by a lookup is trusted without asking the database again:
// the longest a revoked key keeps working in a running process (docs/API.md;
// docs/ARCHITECTURE.md §6).
const CacheTTL = 30 * time.Second

// cacheMax bounds the keys a Cache holds; when full, it starts over.
const cacheMax = 4096

// Cache remembers the principals of keys Lookup found, for at most TTL, so a busy key costs
// no database round trip per request. Only found keys are kept (an unknown key is asked every
// time, and cannot fill the cache), by their SHA-256, never the key itself. A revoked key is
// refused once its entry is older than TTL.
type Cache[P any] struct {
	// Lookup finds a key's principal (store.Door.Authenticate).
	Lookup func(ctx context.Context, key string) (P, error)
	// TTL is how long an entry is trusted; 0 means CacheTTL.
	TTL time.Duration
	// Now is the clock (nil: the system clock).
	Now steward.Clock

	mu      sync.Mutex
	entries map[[sha256.Size]byte]cached[P]
}

type cached[P any] struct {
	p       P
	expires time.Time
}

// Authenticate returns key's principal, from the cache while its entry is fresh.
func (c *Cache[P]) Authenticate(ctx context.Context, key string) (P, error) {
	h := sha256.Sum256([]byte(key))
	now := c.Now.Now()
	c.mu.Lock()
	e, ok := c.entries[h]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.p, nil
	}
	p, err := c.Lookup(ctx, key)
	if err != nil {
		var zero P
		return zero, err
	}
	ttl := c.TTL
	if ttl <= 0 {
		ttl = CacheTTL
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= cacheMax {
		c.entries = make(map[[sha256.Size]byte]cached[P])
	}
	c.entries[h] = cached[P]{p: p, expires: now.Add(ttl)}
	c.mu.Unlock()
	return p, nil
}
