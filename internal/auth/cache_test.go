package auth_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A key revoked in the database (by `steward keys revoke`, another process) stops working
// within auth.CacheTTL; a key never found is never cached.
func TestRevokedKeyStopsWorkingWithinTheCacheTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t, 2)
	owner, _ := db.Owner(t, "alice")
	key, k, err := db.Door.AddKey(ctx, owner.ID, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	lookups := 0
	c := &auth.Cache[store.Principal]{Now: clk.Now, Lookup: func(ctx context.Context, key string) (store.Principal, error) {
		lookups++
		return db.Door.Authenticate(ctx, key)
	}}
	for range 3 {
		p, err := c.Authenticate(ctx, key)
		if err != nil || p.OwnerID != owner.ID {
			t.Fatalf("authenticate = %+v, %v; want alice", p, err)
		}
	}
	if lookups != 1 {
		t.Fatalf("%d lookups for 3 requests, want 1", lookups)
	}
	if err := db.Door.RevokeKey(ctx, owner.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	clk.Add(auth.CacheTTL)
	if p, err := c.Authenticate(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoked key %s after the cache TTL = %+v, %v; want not found", auth.CacheTTL, p, err)
	}
	for range 2 {
		if _, err := c.Authenticate(ctx, "stw_unknown"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown key: %v, want not found", err)
		}
	}
	if lookups != 4 {
		t.Fatalf("%d lookups, want 4 (unknown keys are asked every time)", lookups)
	}
}
