package work_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/work"
)

// env is a spine over a fresh database, its door the runtime's role (steward_door), with a
// clock the test moves and two owners.
type env struct {
	t              *testing.T
	ctx            context.Context
	store          *store.Store
	spine          *work.Spine
	alice, bob     uuid.UUID
	mu             sync.Mutex
	now            time.Time
	runs           map[string]int // worker runs per owner/key
	fail           atomic.Bool    // the worker fails while set
	block, entered chan struct{}  // when not nil: the worker signals entered, then waits for block
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	o := testdb.Open(t, 8)
	door, err := store.OpenDoor(ctx, o.DoorURL) // the runtime's door role, not the admin's
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	alice, _ := o.Owner(t, "alice")
	bob, _ := o.Owner(t, "bob")
	e := &env{t: t, ctx: ctx, store: o.Store, alice: alice.ID, bob: bob.ID, now: time.Now().Truncate(time.Second), runs: map[string]int{}}
	e.spine = &work.Spine{Store: o.Store, Door: door, Now: e.clock}
	e.spine.Register(work.Kind{Name: "probe", Grace: time.Minute, MaxAttempts: 3, Lease: 5 * time.Minute, Inline: true, Work: e.worker})
	return e
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	e.now = e.now.Add(d)
	e.mu.Unlock()
}

func (e *env) worker(_ context.Context, owner uuid.UUID, key string) error {
	if e.entered != nil {
		e.entered <- struct{}{}
		<-e.block
	}
	e.mu.Lock()
	e.runs[owner.String()+"/"+key]++
	e.mu.Unlock()
	if e.fail.Load() {
		return errors.New("the outside service is down")
	}
	return nil
}

func (e *env) ran(owner uuid.UUID, key string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[owner.String()+"/"+key]
}

// enqueue commits an item of owner's, due now.
func (e *env) enqueue(owner uuid.UUID, key string) {
	e.t.Helper()
	err := e.store.WithOwner(e.ctx, owner, func(tx *store.Tx) error {
		return work.Enqueue(e.ctx, tx, "probe", owner, key, e.clock())
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// item reads owner's item; ok is false when it is gone (done).
func (e *env) item(owner uuid.UUID, key string) (store.WorkItem, bool) {
	e.t.Helper()
	var w store.WorkItem
	err := e.store.WithOwner(e.ctx, owner, func(tx *store.Tx) error {
		var err error
		w, err = tx.Work.Get(e.ctx, "probe", key)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return w, false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return w, true
}

// TestEnqueueAndHandRunsOnce: an item enqueued and handed (no serve, no queue: inline) runs
// once and is gone; handed again, a redelivery, or drained, it runs no more.
func TestEnqueueAndHandRunsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.enqueue(e.alice, "a")
	e.spine.Hand(e.ctx, "probe", e.alice, "a")
	if n := e.ran(e.alice, "a"); n != 1 {
		t.Fatalf("worker ran %d times, want 1", n)
	}
	if w, ok := e.item(e.alice, "a"); ok {
		t.Fatalf("item left after it ran: %+v", w)
	}
	e.spine.Hand(e.ctx, "probe", e.alice, "a")
	e.advance(time.Hour)
	if err := e.spine.Drain(e.ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.ran(e.alice, "a"); n != 1 {
		t.Fatalf("worker ran %d times after a second hand and a drain, want 1", n)
	}
	// Enqueue is idempotent per key: twice in one transaction is one item.
	err := e.store.WithOwner(e.ctx, e.alice, func(tx *store.Tx) error {
		for range 2 {
			if err := work.Enqueue(e.ctx, tx, "probe", e.alice, "b", e.clock()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.spine.Drain(e.ctx); err != nil { // due, but within its grace: the hand-off's
		t.Fatal(err)
	}
	if n := e.ran(e.alice, "b"); n != 0 {
		t.Fatalf("the drain took an item within its grace (%d runs)", n)
	}
	e.advance(time.Minute)
	if err := e.spine.Drain(e.ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.ran(e.alice, "b"); n != 1 {
		t.Fatalf("worker ran %d times for an item enqueued twice, want 1", n)
	}
}

// TestEnqueueRollsBackWithItsTransaction: an item enqueued in a transaction that rolls back
// is not there; one enqueued in another owner's transaction is refused.
func TestEnqueueRollsBackWithItsTransaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	boom := errors.New("the domain write failed")
	err := e.store.WithOwner(e.ctx, e.alice, func(tx *store.Tx) error {
		if err := work.Enqueue(e.ctx, tx, "probe", e.alice, "a", e.clock()); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if w, ok := e.item(e.alice, "a"); ok {
		t.Fatalf("item of a rolled back transaction: %+v", w)
	}
	err = e.store.WithOwner(e.ctx, e.bob, func(tx *store.Tx) error {
		return work.Enqueue(e.ctx, tx, "probe", e.alice, "a", e.clock())
	})
	if err == nil {
		t.Fatal("alice's item enqueued in bob's transaction")
	}
}

// TestConcurrentDoRunsOnce: while one Do holds an item, another Do of it runs nothing; many
// at once run the worker once.
func TestConcurrentDoRunsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.enqueue(e.alice, "a")
	e.entered, e.block = make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() { first <- e.spine.Do(e.ctx, "probe", e.alice, "a") }()
	<-e.entered // the first holds the item
	if err := e.spine.Do(e.ctx, "probe", e.alice, "a"); err != nil {
		t.Fatal(err)
	}
	close(e.block)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := e.ran(e.alice, "a"); n != 1 {
		t.Fatalf("worker ran %d times, want 1", n)
	}

	e.entered, e.block = nil, nil
	e.enqueue(e.alice, "b")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := e.spine.Do(e.ctx, "probe", e.alice, "b"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := e.ran(e.alice, "b"); n != 1 {
		t.Fatalf("8 concurrent Do's ran the worker %d times, want 1", n)
	}
}

// TestFailingWorkerBacksOffThenFails: a failing item waits its backoff before it runs again
// (a Do or a drain before then runs nothing), and after MaxAttempts it is kept failed, with
// its error, and no drain runs it again.
func TestFailingWorkerBacksOffThenFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fail.Store(true)
	e.enqueue(e.alice, "a")
	for attempt := 1; attempt <= 3; attempt++ {
		if err := e.spine.Do(e.ctx, "probe", e.alice, "a"); err == nil {
			t.Fatalf("attempt %d: Do = nil, want the worker's error", attempt)
		}
		w, ok := e.item(e.alice, "a")
		if !ok || w.Attempts != attempt || w.LastError != "the outside service is down" {
			t.Fatalf("after attempt %d: %+v (kept %v)", attempt, w, ok)
		}
		if attempt < 3 {
			if w.State != "queued" || !w.RunAfter.After(e.clock()) {
				t.Fatalf("after attempt %d: %+v, want queued for later", attempt, w)
			}
			if err := e.spine.Do(e.ctx, "probe", e.alice, "a"); err != nil || e.ran(e.alice, "a") != attempt {
				t.Fatalf("a Do within the backoff ran it (%d runs, %v)", e.ran(e.alice, "a"), err)
			}
			e.advance(w.RunAfter.Sub(e.clock()))
		} else if w.State != "failed" {
			t.Fatalf("after MaxAttempts: %+v, want failed", w)
		}
	}
	e.fail.Store(false)
	e.advance(24 * time.Hour)
	if err := e.spine.Drain(e.ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.spine.Do(e.ctx, "probe", e.alice, "a"); err != nil {
		t.Fatal(err)
	}
	if n := e.ran(e.alice, "a"); n != 3 {
		t.Fatalf("a failed item ran again: %d runs, want 3", n)
	}
	// Enqueued again (the domain made the work anew), it runs.
	e.enqueue(e.alice, "a")
	if err := e.spine.Do(e.ctx, "probe", e.alice, "a"); err != nil || e.ran(e.alice, "a") != 4 {
		t.Fatalf("re-enqueued failed item: %d runs, %v", e.ran(e.alice, "a"), err)
	}
}

// TestDrainRescuesALapsedLease: an item claimed by a worker that died stays running until
// its lease lapses; then the drain's rescuer runs it, once.
func TestDrainRescuesALapsedLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.enqueue(e.alice, "a")
	err := e.store.WithOwner(e.ctx, e.alice, func(tx *store.Tx) error { // a worker claims, then dies
		_, ok, err := tx.Work.Claim(e.ctx, "probe", "a", e.clock(), e.clock().Add(5*time.Minute))
		if !ok && err == nil {
			err = errors.New("not claimed")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.advance(4 * time.Minute)
	if err := e.spine.Drain(e.ctx); err != nil || e.ran(e.alice, "a") != 0 {
		t.Fatalf("drained a held item (%d runs, %v)", e.ran(e.alice, "a"), err)
	}
	e.advance(time.Minute)
	if err := e.spine.Drain(e.ctx); err != nil || e.ran(e.alice, "a") != 1 {
		t.Fatalf("lapsed lease: %d runs, %v; want the rescuer to run it once", e.ran(e.alice, "a"), err)
	}
	if w, ok := e.item(e.alice, "a"); ok {
		t.Fatalf("rescued item left: %+v", w)
	}
}

// TestOwnersWorkIsTheirs: bob's Do of alice's item, or his Hand, runs nothing and leaves it;
// the drain finds both owners' items and runs each as its owner.
func TestOwnersWorkIsTheirs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.enqueue(e.alice, "a")
	if err := e.spine.Do(e.ctx, "probe", e.bob, "a"); err != nil {
		t.Fatal(err)
	}
	e.spine.Hand(e.ctx, "probe", e.bob, "a")
	if n := e.ran(e.bob, "a") + e.ran(e.alice, "a"); n != 0 {
		t.Fatalf("bob's Do ran alice's item (%d runs)", n)
	}
	if w, ok := e.item(e.alice, "a"); !ok || w.State != "queued" || w.Attempts != 0 {
		t.Fatalf("alice's item after bob: %+v (%v)", w, ok)
	}
	if _, ok := e.item(e.bob, "a"); ok {
		t.Fatal("bob sees an item under alice's key")
	}
	e.enqueue(e.bob, "b")
	e.advance(time.Minute)
	if err := e.spine.Drain(e.ctx); err != nil {
		t.Fatal(err)
	}
	if e.ran(e.alice, "a") != 1 || e.ran(e.bob, "b") != 1 {
		t.Fatalf("runs %v, want alice's and bob's item once each as their owner", e.runs)
	}
}

// TestHandleMessagesReportsBadRecords: a batch with malformed records, an unknown kind, no
// owner or no key reports exactly those in BatchItemFailures, runs the good one once, and
// does not panic; a failing worker's record is reported too.
func TestHandleMessagesReportsBadRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.enqueue(e.alice, "a")
	owner := e.alice.String()
	bodies := map[string]string{
		"good":      `{"owner_id":"` + owner + `","kind":"probe","key":"a"}`,
		"not json":  `{"owner_id": "not json`,
		"unknown":   `{"owner_id":"` + owner + `","kind":"nope","key":"a"}`,
		"no owner":  `{"kind":"probe","key":"a"}`,
		"no key":    `{"owner_id":"` + owner + `","kind":"probe"}`,
		"extra":     `{"owner_id":"` + owner + `","kind":"probe","key":"a","x":1}`,
		"two":       `{"owner_id":"` + owner + `","kind":"probe","key":"a"}{}`,
		"old shape": `{"owner_id":"` + owner + `","run_id":"` + uuid.NewString() + `"}`,
	}
	var ev events.SQSEvent
	for id, body := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: id, Body: body})
	}
	resp, err := e.spine.HandleMessages(e.ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for id := range bodies {
		if failed[id] == (id == "good") {
			t.Errorf("record %q: failed %v", id, failed[id])
		}
	}
	if n := e.ran(e.alice, "a"); n != 1 {
		t.Fatalf("good record ran %d times, want 1", n)
	}
	e.fail.Store(true)
	e.enqueue(e.alice, "b")
	resp, err = e.spine.HandleMessages(e.ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", Body: `{"owner_id":"` + owner + `","kind":"probe","key":"b"}`}}})
	if err != nil || len(resp.BatchItemFailures) != 1 {
		t.Fatalf("failing worker: %+v, %v; want its record reported", resp, err)
	}
}

// TestRunWaitsForItsItems: Run first takes what the last process left; under Run, Hand
// runs an item in this process and returns at once; Run returns only once that item returned.
func TestRunWaitsForItsItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.entered, e.block = make(chan struct{}), make(chan struct{})
	e.enqueue(e.alice, "left") // due now: the last process's, with no grace at start
	ctx, cancel := context.WithCancel(e.ctx)
	returned := make(chan error, 1)
	go func() { returned <- e.spine.Run(ctx) }()
	<-e.entered // Run's first drain took it: Run runs
	e.block <- struct{}{}
	e.enqueue(e.alice, "a")
	e.spine.Hand(e.ctx, "probe", e.alice, "a") // returns at once: the item runs under Run
	<-e.entered
	cancel()
	select {
	case <-returned:
		t.Fatal("Run returned while its item was still running")
	default:
	}
	e.block <- struct{}{}
	if err := <-returned; err != nil {
		t.Fatal(err)
	}
	if e.ran(e.alice, "left") != 1 || e.ran(e.alice, "a") != 1 {
		t.Fatalf("runs %v, want each item once", e.runs)
	}
}

// TestRegisterRefusesDuplicates: a kind registered twice, or malformed, is a panic at start.
func TestRegisterRefusesDuplicates(t *testing.T) {
	t.Parallel()
	for name, k := range map[string]work.Kind{
		"duplicate": {Name: "probe", Work: func(context.Context, uuid.UUID, string) error { return nil }},
		"bad name":  {Name: "Probe!", Work: func(context.Context, uuid.UUID, string) error { return nil }},
		"no worker": {Name: "other"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", name)
				}
			}()
			s := &work.Spine{}
			s.Register(work.Kind{Name: "probe", Work: func(context.Context, uuid.UUID, string) error { return nil }})
			s.Register(k)
		}()
	}
}
