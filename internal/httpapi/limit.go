package httpapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/stewardhq/steward/internal/steward"
)

// DefaultMaxTurnsPerOwner is Deps.MaxTurnsPerOwner when zero.
const DefaultMaxTurnsPerOwner = 4

// turnWait is how long a turn request waits for one of its owner's slots before 429.
const turnWait = 2 * time.Second

// turnLimit caps each owner's turns running at once in this process, so that one owner (one
// key) cannot occupy every database connection and every worker with turns.
type turnLimit struct {
	max    int
	mu     sync.Mutex
	owners map[uuid.UUID]*slots
}

// slots is one owner's semaphore and how many requests hold or wait for it.
type slots struct {
	ch    chan struct{}
	users int
}

// admit takes one of owner's turn slots for a turn started by any face (/v1, the
// OpenAI-compatible API): a rate_limited error when the owner still runs the maximum, which
// says to retry after turnWait (Retry-After) and names its knob.
func (a *api) admit(ctx context.Context, owner uuid.UUID) (release func(), err error) {
	if !a.turns.acquire(ctx, owner) {
		return nil, &steward.Error{Code: steward.CodeRateLimited, RetryAfter: turnWait, Message: fmt.Sprintf(
			"%d turns are already running for this owner (STEWARD_MAX_TURNS_PER_OWNER); retry when one has finished", a.d.MaxTurnsPerOwner)}
	}
	return func() { a.turns.release(owner) }, nil
}

// acquire takes a slot for owner, waiting up to turnWait (or until ctx ends); false means the
// owner still ran max turns.
func (l *turnLimit) acquire(ctx context.Context, owner uuid.UUID) bool {
	l.mu.Lock()
	if l.owners == nil {
		l.owners = map[uuid.UUID]*slots{}
	}
	s := l.owners[owner]
	if s == nil {
		s = &slots{ch: make(chan struct{}, l.max)}
		l.owners[owner] = s
	}
	s.users++
	l.mu.Unlock()
	t := time.NewTimer(turnWait)
	defer t.Stop()
	select {
	case s.ch <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	l.leave(owner, s)
	return false
}

// release gives back a slot taken by acquire.
func (l *turnLimit) release(owner uuid.UUID) {
	l.mu.Lock()
	s := l.owners[owner]
	l.mu.Unlock()
	<-s.ch
	l.leave(owner, s)
}

// leave forgets an owner nobody holds or waits for.
func (l *turnLimit) leave(owner uuid.UUID, s *slots) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.users--; s.users == 0 {
		delete(l.owners, owner)
	}
}
