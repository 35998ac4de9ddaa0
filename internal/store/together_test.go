package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/benchcycle"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// counted opens a Store whose connections pass through a proxy that counts round trips
// (testdb.Counted), and returns it with the proxy and its trace.
func counted(t *testing.T) (testdb.Opened, *benchcycle.Proxy, *testdb.Buffer) {
	t.Helper()
	var proxy *benchcycle.Proxy
	var trace *testdb.Buffer
	o := testdb.OpenAs(t, 1, func(d testdb.DB) string {
		var u string
		u, proxy, trace = testdb.Counted(t, d.AppURL)
		return u
	})
	return o, proxy, trace
}

// roundTrips is how many round trips fn's transaction took, on a warm connection.
func roundTrips(t *testing.T, ctx context.Context, o testdb.Opened, p *benchcycle.Proxy, owner uuid.UUID, fn func(agent.Tx) error) int64 {
	t.Helper()
	var c benchcycle.Counts
	for range 2 { // the first run prepares the statements
		c0 := p.Counts()
		if err := o.Store.InOwner(ctx, owner, fn); err != nil {
			t.Fatal(err)
		}
		c = p.Counts().Sub(c0)
	}
	if c.Connections != 0 {
		t.Fatalf("the transaction opened %d connections on a warm pool", c.Connections)
	}
	return c.RoundTrips
}

// committedTitles are the titles of the owner's conversations, as committed.
func committedTitles(t *testing.T, ctx context.Context, o testdb.Opened, owner uuid.UUID) []string {
	t.Helper()
	var titles []string
	if err := o.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		convs, err := tx.Conversations.List(ctx, 10)
		for _, c := range convs {
			titles = append(titles, c.Title)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return titles
}

// TestTogetherSharesRoundTrips: three independent reads of the turn loop, and the read
// after the first of them, cost one round trip each when run one after the other, and two
// in all with Together — which answers each as if it had run alone. COMMIT is one more.
func TestTogetherSharesRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o, proxy, trace := counted(t)
	owner, _ := o.Owner(t, "together")
	var convID uuid.UUID
	if err := o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		c, err := tx.Conversations.Create(ctx, "kept")
		convID = c.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		conv  steward.Conversation
		msgs  []steward.StoredMessage
		ctl   steward.Controls
		rules []steward.Rule
	}
	reads := func(tx agent.Tx, s *seen) []func() error {
		return []func() error{
			func() error {
				var err error
				if s.conv, err = tx.Conversations.Get(ctx, convID); err != nil {
					return err
				}
				s.msgs, err = tx.Conversations.Messages(ctx, s.conv.ID) // after the first
				return err
			},
			func() error {
				var err error
				s.ctl, err = tx.Safety.Controls(ctx)
				return err
			},
			func() error {
				var err error
				s.rules, err = tx.Rules.For(ctx, "create_task")
				return err
			},
		}
	}
	var alone, together seen
	nAlone := roundTrips(t, ctx, o, proxy, owner.ID, func(tx agent.Tx) error {
		for _, fn := range reads(tx, &alone) {
			if err := fn(); err != nil {
				return err
			}
		}
		return nil
	})
	nTogether := roundTrips(t, ctx, o, proxy, owner.ID, func(tx agent.Tx) error {
		return tx.Together(ctx, reads(tx, &together)...)
	})
	if nAlone != 5 || nTogether != 3 {
		t.Errorf("round trips: %d one after the other, %d together; want 5 and 3 (with COMMIT)", nAlone, nTogether)
	}
	// No fn opens a savepoint of its own, so neither does the group (a subtransaction less).
	if strings.Contains(trace.String(), "Savepoint") {
		t.Errorf("a group without Try set a savepoint:\n%s", trace)
	}
	if together.conv.ID != convID || together.conv.Title != "kept" || together.msgs == nil || together.ctl != alone.ctl {
		t.Errorf("together read %+v; alone %+v", together, alone)
	}
}

// TestTogetherFailingReadFailsAlone: when one fn's read fails under Try, the batch it went
// in is undone and the fns run again one after the other: the other fns still get their
// rows, the failing read fails alone, and the transaction commits what came after it.
func TestTogetherFailingReadFailsAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 2)
	owner, _ := o.Owner(t, "tolerant")
	var conv steward.Conversation
	var tryErr error
	err := o.Store.InOwner(ctx, owner.ID, func(tx agent.Tx) error {
		err := tx.Together(ctx, func() error {
			tryErr = tx.Try(ctx, func() error {
				// A vector of the wrong dimension: the statement fails in the database.
				_, err := tx.Memory.NearestChunks(ctx, []float32{1, 2, 3}, 3)
				return err
			})
			return nil
		}, func() error {
			var err error
			conv, err = tx.Conversations.Create(ctx, "after the failed read")
			return err
		})
		if err != nil {
			return err
		}
		_, err = tx.Conversations.Create(ctx, "and after the group")
		return err
	})
	if err != nil {
		t.Fatalf("InOwner = %v, want the failing read to fail alone", err)
	}
	if tryErr == nil {
		t.Error("the read of a wrong-sized vector did not fail")
	}
	titles := committedTitles(t, ctx, o, owner.ID)
	if len(titles) != 2 || conv.Title != "after the failed read" {
		t.Errorf("committed conversations %q (group's %q); want the group's and the one after it, once each", titles, conv.Title)
	}
}

// TestTogetherTriesShareTheGroupSavepoint: in a group, the fns under Try set no savepoint of
// their own in the batch: the group's one stands for them all (a failing one still fails
// alone: TestTogetherFailingReadFailsAlone).
func TestTogetherTriesShareTheGroupSavepoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o, proxy, trace := counted(t)
	owner, _ := o.Owner(t, "tries")
	before := len(trace.String())
	n := roundTrips(t, ctx, o, proxy, owner.ID, func(tx agent.Tx) error {
		try := func(read func() error) func() error {
			return func() error { return tx.Try(ctx, read) }
		}
		return tx.Together(ctx, try(func() error {
			_, err := tx.Rules.For(ctx, "create_task")
			return err
		}), try(func() error {
			_, err := tx.Safety.Controls(ctx)
			return err
		}), func() error {
			_, err := tx.Conversations.Create(ctx, "beside the tries")
			return err
		})
	})
	got := trace.String()[before:]
	saves := 0 // SAVEPOINTs sent (not prepared)
	for _, line := range strings.Split(got, "\n") {
		_, stmts, _ := strings.Cut(line, ": ")
		for _, st := range strings.Split(stmts, ", ") {
			if st == "Savepoint" {
				saves++
			}
		}
	}
	if saves != 2 { // roundTrips runs the transaction twice
		t.Errorf("%d savepoints in two transactions, want one per transaction (the group's):\n%s", saves, got)
	}
	if n != 2 {
		t.Errorf("%d round trips, want 2 (the group's, then COMMIT with the release)", n)
	}
}

// TestTogetherRefusesDependentFns: a fn that runs another statement than it sent before
// (it read another fn's result) fails the group instead of being answered wrongly.
func TestTogetherRefusesDependentFns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 2)
	owner, _ := o.Owner(t, "dependent")
	err := o.Store.InOwner(ctx, owner.ID, func(tx agent.Tx) error {
		var conv steward.Conversation
		return tx.Together(ctx, func() error {
			var err error
			conv, err = tx.Conversations.Create(ctx, "first")
			return err
		}, func() error {
			_, err := tx.Conversations.Get(ctx, conv.ID) // conv is set by the other fn
			return err
		})
	})
	if err == nil || !strings.Contains(err.Error(), "depend") {
		t.Fatalf("InOwner = %v, want the group refused", err)
	}
}

// TestHouseholdFileTravelsWithTheNextRead: the turn loop's filing of a suspended turn is
// deferred and shares the round trip of the read after it.
func TestHouseholdFileTravelsWithTheNextRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o, proxy, trace := counted(t)
	owner, _ := o.Owner(t, "filer")
	n := roundTrips(t, ctx, o, proxy, owner.ID, func(tx agent.Tx) error {
		if err := tx.Household.File(ctx, uuid.New(), []steward.HouseholdCall{{CallID: "c1", ArgsHash: "h", Tool: "create_task"}}, time.Now().Add(time.Hour)); err != nil {
			return err
		}
		_, err := tx.Links.Notifiable(ctx)
		return err
	})
	if n != 2 {
		t.Errorf("file and read: %d round trips, want 2 (with COMMIT); trace:\n%s", n, trace)
	}
}

// TestNotifiableReadWithTheControlState: in the turn loop's transaction, whether a suspension
// notifies the owner comes with the gate's control state — no read of its own — and says
// what the owner's channels say.
func TestNotifiableReadWithTheControlState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o, proxy, trace := counted(t)
	owner, _ := o.Owner(t, "notified")
	for _, channel := range []bool{false, true} {
		if channel {
			if err := o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
				_, err := tx.Channels.SetWebhook(ctx, "https://hooks.example.com/notified", "")
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		var notifiable bool
		n := roundTrips(t, ctx, o, proxy, owner.ID, func(tx agent.Tx) error {
			if _, err := tx.Safety.Controls(ctx); err != nil {
				return err
			}
			var err error
			notifiable, err = tx.Links.Notifiable(ctx)
			return err
		})
		if notifiable != channel || n != 2 {
			t.Errorf("with a channel %v: notifiable %v in %d round trips, want %v in 2 (the control state, COMMIT); trace:\n%s", channel, notifiable, n, channel, trace)
		}
	}
}

// TestTogetherNestedJoinsTheRound: a group nested in a group's fn (memory recall's two reads
// in a turn's start) sends its fns' first statements in the outer group's first round.
func TestTogetherNestedJoinsTheRound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o, proxy, trace := counted(t)
	owner, _ := o.Owner(t, "nested")
	var ctl steward.Controls
	var rules []steward.Rule
	var facts []steward.MemoryFact
	n := roundTrips(t, ctx, o, proxy, owner.ID, func(tx agent.Tx) error {
		return tx.Together(ctx, func() error {
			return tx.Together(ctx, func() error {
				var err error
				rules, err = tx.Rules.For(ctx, "create_task")
				return err
			}, func() error {
				var err error
				facts, err = tx.Memory.MatchFacts(ctx, []string{"milk"}, 3)
				return err
			})
		}, func() error {
			var err error
			ctl, err = tx.Safety.Controls(ctx)
			return err
		})
	})
	if n != 2 {
		t.Errorf("three reads, two of them nested: %d round trips, want 2 (with COMMIT); trace:\n%s", n, trace)
	}
	if ctl.OwnerKilled || rules == nil || facts == nil {
		t.Errorf("nested reads: %+v %v %v", ctl, rules, facts)
	}
}

// TestFinishTravelsWithCommit: a turn's last save (Turns.Finish) and the writes after it
// reach the server with COMMIT in one round trip; when another save moved the turn's version
// on, COMMIT fails with ErrConflict and nothing of the transaction is kept.
func TestFinishTravelsWithCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o, proxy, trace := counted(t)
	owner, _ := o.Owner(t, "finisher")
	var turn steward.Turn
	if err := o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		c, err := tx.Conversations.Create(ctx, "finish")
		if err == nil {
			turn, err = tx.Turns.Create(ctx, c.ID, steward.TriggerChat, "m", time.Now(), time.Hour)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	finish := func(tx agent.Tx, v steward.Turn) error {
		v.Status, v.Answer = steward.StatusRunning, "still going"
		saved, err := tx.Turns.Finish(ctx, v)
		if err != nil {
			return err
		}
		turn = saved
		return tx.Conversations.Touch(ctx, v.ConversationID, "")
	}
	n := roundTrips(t, ctx, o, proxy, owner.ID, func(tx agent.Tx) error { return finish(tx, turn) })
	if n != 1 {
		t.Errorf("finish and touch: %d round trips, want 1 (with COMMIT); trace:\n%s", n, trace)
	}
	stale := turn
	stale.Version--
	err := o.Store.InOwner(ctx, owner.ID, func(tx agent.Tx) error {
		if err := finish(tx, stale); err != nil {
			return err
		}
		_, err := tx.Conversations.Create(ctx, "must not commit")
		return err
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("finish of a stale version = %v, want ErrConflict", err)
	}
	titles := committedTitles(t, ctx, o, owner.ID)
	if len(titles) != 1 {
		t.Errorf("conversations after the failed finish: %q, want only the first", titles)
	}
}

// TestVotesKeptUntilAVote: in the turn loop's transaction the household votes on a turn are
// read once (a confirm reads them with its turn, and the household's hold finds them), and
// read again after the transaction records a vote.
func TestVotesKeptUntilAVote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o, proxy, trace := counted(t)
	owner, _ := o.Owner(t, "voter")
	turn := uuid.New()
	reads := func(vote bool) func(agent.Tx) error {
		return func(tx agent.Tx) error {
			for range 2 {
				if _, err := tx.Household.Votes(ctx, turn); err != nil {
					return err
				}
			}
			if !vote {
				return nil
			}
			if err := tx.Household.DecideOwn(ctx, turn, "c1", true, "", time.Now()); err != nil {
				return err
			}
			_, err := tx.Household.Votes(ctx, turn)
			return err
		}
	}
	if n := roundTrips(t, ctx, o, proxy, owner.ID, reads(false)); n != 2 {
		t.Errorf("two reads of the votes: %d round trips, want 2 (one and COMMIT); trace:\n%s", n, trace)
	}
	// The vote's lock and update, then the read again, then COMMIT.
	if n := roundTrips(t, ctx, o, proxy, owner.ID, reads(true)); n != 5 {
		t.Errorf("reads, a vote, a read: %d round trips, want 5; trace:\n%s", n, trace)
	}
}

// TestTogetherFailingReadFailsTheTransaction: without Try, a read that fails in a group's
// batch fails the transaction, as it would have run alone, and nothing of it commits.
func TestTogetherFailingReadFailsTheTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 2)
	owner, _ := o.Owner(t, "intolerant")
	err := o.Store.InOwner(ctx, owner.ID, func(tx agent.Tx) error {
		return tx.Together(ctx, func() error {
			_, err := tx.Conversations.Create(ctx, "must not commit")
			return err
		}, func() error {
			_, err := tx.Memory.NearestChunks(ctx, []float32{1, 2, 3}, 3)
			return err
		})
	})
	if err == nil || !strings.Contains(err.Error(), "dimensions") {
		t.Fatalf("InOwner = %v, want the read's error", err)
	}
	if titles := committedTitles(t, ctx, o, owner.ID); len(titles) != 0 {
		t.Errorf("conversations committed: %q, want none", titles)
	}
}
