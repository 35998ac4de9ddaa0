package delivery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/delivery"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// receiver is a channel endpoint that answers from a script of status codes (then 200) and
// records what it received.
type receiver struct {
	*egresstest.Server
	mu       sync.Mutex
	statuses []int
	keys     []string
	bodies   []delivery.Payload
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.Server = egresstest.NewTLSServer(t, func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var p delivery.Payload
		if err := json.Unmarshal(b, &p); err != nil || req.Header.Get("Content-Type") != "application/json" {
			t.Errorf("delivery body %q: %v", b, err)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.keys = append(r.keys, req.Header.Get("Idempotency-Key"))
		r.bodies = append(r.bodies, p)
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		w.WriteHeader(status)
	})
	return r
}

type env struct {
	ctx   context.Context
	store *store.Store
	owner uuid.UUID
	clock *clock
	d     *delivery.Deliverer
}

func newEnv(t *testing.T, rcv *receiver) *env {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t, 10)
	s, door := db.Store, db.Door
	owner, _ := db.Owner(t, "alice")
	c := &clock{t: time.Now().Add(5 * time.Second)}
	e := &env{ctx: ctx, store: s, owner: owner.ID, clock: c, d: &delivery.Deliverer{Store: s, Guard: guardFor(rcv.Server, t),
		Channels: door, Now: c.Now, Backoff: func(n int) time.Duration { return time.Duration(n) * time.Minute }}}
	return e
}

func (e *env) notify(t *testing.T, title, msg string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		n, err := tx.Tasks.CreateNotification(e.ctx, "", title, msg)
		id = n.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (e *env) notifications(t *testing.T) map[uuid.UUID]store.Notification {
	t.Helper()
	out := map[uuid.UUID]store.Notification{}
	err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		ns, err := tx.Deliveries.Notifications(e.ctx, 100)
		for _, n := range ns {
			out[n.ID] = n
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) flush(t *testing.T) {
	t.Helper()
	if err := e.d.Flush(e.ctx, e.owner); err != nil {
		t.Fatal(err)
	}
}

// TestDeliveryRetriedAndIdempotent: a failing channel is retried with backoff until it
// answers 2xx, always with the notification's id as Idempotency-Key; a delivered
// notification is never sent again, and concurrent flushes send it once.
func TestDeliveryRetriedAndIdempotent(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, 500, 503)
	e := newEnv(t, rcv)
	before := e.notify(t, "", "made before the channel existed")
	url := fmt.Sprintf("https://example.com:%d/hook", rcv.Addr().Port())
	if _, err := e.d.SetChannel(e.ctx, e.owner, url, "steward"); err != nil {
		t.Fatal(err)
	}
	id := e.notify(t, "Morning briefing", "Two tasks are due today.")

	e.flush(t) // attempt 1: 500
	e.flush(t) // not due yet: nothing sent
	if got := rcv.Hits.Load(); got != 1 {
		t.Fatalf("after two flushes within the backoff: %d requests, want 1", got)
	}
	n := e.notifications(t)[id]
	if n.DeliveryAttempts != 1 || n.DeliveredAt != nil || n.NextDeliveryAt == nil || n.DeliveryError == "" {
		t.Fatalf("after a failed attempt: %+v", n)
	}
	e.clock.Add(61 * time.Second)
	e.flush(t) // attempt 2: 503
	e.clock.Add(121 * time.Second)
	var wg sync.WaitGroup
	for range 5 { // attempt 3, from five concurrent flushes: 200, once
		wg.Go(func() { e.flush(t) })
	}
	wg.Wait()
	e.clock.Add(time.Hour)
	e.flush(t)

	if got := rcv.Hits.Load(); got != 3 {
		t.Fatalf("%d requests, want 3 (two failures, one success)", got)
	}
	for _, k := range rcv.keys {
		if k != id.String() {
			t.Fatalf("Idempotency-Key %q, want the notification id %s", k, id)
		}
	}
	p := rcv.bodies[2]
	if p.Text != "Morning briefing\nTwo tasks are due today." || p.Title != "Morning briefing" ||
		p.Message != "Two tasks are due today." || p.Topic != "steward" || p.NotificationID != id {
		t.Fatalf("payload %+v", p)
	}
	ns := e.notifications(t)
	if n := ns[id]; n.DeliveredAt == nil || n.DeliveryAttempts != 3 || n.NextDeliveryAt != nil || n.DeliveryError != "" {
		t.Fatalf("delivered notification: %+v", n)
	}
	if n := ns[before]; n.DeliveredAt != nil || n.DeliveryAttempts != 0 {
		t.Fatalf("a notification older than the channel was sent: %+v", n)
	}
}

// TestDeliveryGivesUp: a 4xx answer is final; repeated failures stop at MaxAttempts.
func TestDeliveryGivesUp(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, 404, 500, 500, 500, 500)
	e := newEnv(t, rcv)
	e.d.MaxAttempts = 2
	if _, err := e.d.SetChannel(e.ctx, e.owner, fmt.Sprintf("https://example.com:%d/hook", rcv.Addr().Port()), ""); err != nil {
		t.Fatal(err)
	}
	gone := e.notify(t, "", "the channel says 404")
	e.flush(t)
	retried := e.notify(t, "", "the channel fails twice")
	for range 4 {
		e.flush(t)
		e.clock.Add(time.Hour)
	}
	ns := e.notifications(t)
	if n := ns[gone]; n.DeliveryAttempts != 1 || n.NextDeliveryAt != nil || n.DeliveredAt != nil {
		t.Fatalf("after a 404: %+v, want one attempt and no retry", n)
	}
	if n := ns[retried]; n.DeliveryAttempts != 2 || n.NextDeliveryAt != nil || n.DeliveredAt != nil {
		t.Fatalf("after failures: %+v, want MaxAttempts=2 attempts then none", n)
	}
	if got := rcv.Hits.Load(); got != 3 {
		t.Fatalf("%d requests, want 3", got)
	}
}

// TestSetChannelRefusesUnsafeURLs: the channel URL passes the guard when it is set.
func TestSetChannelRefusesUnsafeURLs(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	e := newEnv(t, rcv)
	for _, u := range []string{"http://example.com/hook", "https://127.0.0.1/hook", "https://169.254.169.254/", "https://0x7f000001/", "not a url"} {
		if _, err := e.d.SetChannel(e.ctx, e.owner, u, ""); err == nil {
			t.Errorf("SetChannel(%q) accepted", u)
		}
	}
	if err := e.d.Flush(e.ctx, e.owner); err != nil {
		t.Fatalf("flush without a channel: %v", err)
	}
}
