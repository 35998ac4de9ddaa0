package memory

import (
	"sync"

	"github.com/google/uuid"
)

// queryCacheSize is how many recent messages' embeddings a Service keeps (about 3 KB each).
const queryCacheSize = 512

// queryCache remembers the embeddings of an owner's recent messages, so a message sent again
// (the same reminder every week, a scheduled job's prompt every morning) is recalled without
// another embedding call. It is keyed by owner and exact text: one owner cannot learn from
// a faster answer that another sent the same words (nor is a vector reused across
// embedders). The oldest entry makes room for the
// newest. Cached vectors are shared and only read.
type queryCache struct {
	mu    sync.Mutex
	m     map[queryKey][]float32
	order []queryKey // insertion ring; next is the oldest once full
	next  int
}

type queryKey struct {
	owner          uuid.UUID
	embedder, text string
}

func (c *queryCache) get(k queryKey) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *queryCache) put(k queryKey, v []float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[queryKey][]float32, queryCacheSize)
	}
	if _, ok := c.m[k]; ok {
		return
	}
	if len(c.order) < queryCacheSize {
		c.order = append(c.order, k)
	} else {
		delete(c.m, c.order[c.next])
		c.order[c.next] = k
		c.next = (c.next + 1) % queryCacheSize
	}
	c.m[k] = v
}
