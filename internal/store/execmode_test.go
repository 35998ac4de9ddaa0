package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// Every STEWARD_DB_EXEC_MODE runs an owner's transaction (RLS settings, typed parameters,
// JSON) and the door's key lookup; an owner still sees only its own rows.
func TestEveryExecModeServesOwners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, door := newDoor(t)
	alice, _, err := door.CreateOwner(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	bob, _, err := door.CreateOwner(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range append([]string{""}, config.DBExecModes...) {
		u, err := store.WithExecMode(d.AppURL, mode)
		if err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(ctx, u, 2)
		if err != nil {
			t.Fatalf("%q: %v", mode, err)
		}
		var conv steward.Conversation
		for range 2 { // the second time from a cache, where the mode has one
			err = s.WithOwner(ctx, alice.ID, func(tx *store.Tx) error {
				if conv, err = tx.Conversations.Create(ctx, "mode "+mode); err != nil {
					return err
				}
				turn, err := tx.Turns.Create(ctx, conv.ID, steward.TriggerChat, "m", time.Now(), time.Hour)
				if err != nil {
					return err
				}
				return tx.Journal.AppendEvents(ctx, &turn.ID, []steward.NewEvent{{Seq: 1, Kind: "turn_started", Data: []byte(`{"mode":"` + mode + `"}`)}})
			})
			if err != nil {
				t.Fatalf("%q: %v", mode, err)
			}
		}
		// The turn loop's pipelined transaction: reads sharing a round trip (Together),
		// answered from the batch, and deferred writes.
		for range 2 {
			err = s.InOwner(ctx, alice.ID, func(tx agent.Tx) error {
				var got steward.Conversation
				var msgs []steward.StoredMessage
				if err := tx.Together(ctx, func() (err error) {
					got, err = tx.Conversations.Get(ctx, conv.ID)
					return err
				}, func() (err error) {
					msgs, err = tx.Conversations.Messages(ctx, conv.ID)
					return err
				}); err != nil {
					return err
				}
				if got.ID != conv.ID || got.Title != "mode "+mode || msgs == nil {
					t.Errorf("%q: together read %+v, %v", mode, got, msgs)
				}
				return tx.Conversations.Touch(ctx, conv.ID, "")
			})
			if err != nil {
				t.Fatalf("%q: pipelined: %v", mode, err)
			}
		}
		err = s.WithOwner(ctx, bob.ID, func(tx *store.Tx) error {
			_, err := tx.Conversations.Get(ctx, conv.ID)
			return err
		})
		if steward.ErrorCode(err) != steward.CodeNotFound {
			t.Fatalf("%q: bob reads alice's conversation: %v, want not found", mode, err)
		}
		s.Close()
	}
	if got, _ := store.WithExecMode("host=db user=u", "describe_exec"); got != "host=db user=u default_query_exec_mode=describe_exec" {
		t.Fatalf("keyword/value url = %q", got)
	}
}

// TestPreparedStatementsPlanOnce: with WithGenericPlans and named prepared statements (the
// default mode) recall's
// statement on the partitioned memory_chunks is planned once per connection and that generic
// plan runs every owner's recall, where PostgreSQL would choose a custom plan, planned again
// at every run (it cost more to plan than to run). The modes that send unnamed statements keep PostgreSQL's choice,
// a plan for the owner's partition alone. Each owner still recalls only their own chunk.
func TestPreparedStatementsPlanOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, door := newDoor(t)
	vector := make([]float32, 768)
	vector[0] = 1
	for _, mode := range append([]string{""}, config.DBExecModes...) {
		u, err := store.WithExecMode(d.AppURL, mode)
		if err != nil {
			t.Fatal(err)
		}
		if u, err = store.WithGenericPlans(u); err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(ctx, u, 1) // one connection: its prepared statements are counted
		if err != nil {
			t.Fatalf("%q: %v", mode, err)
		}
		var cacheMode string
		var generic, custom int64
		for _, name := range []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace"} {
			owner, _, err := door.CreateOwner(ctx, name+" "+mode)
			if err != nil {
				t.Fatal(err)
			}
			err = s.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
				if _, err := tx.Memory.AddChunkOnce(ctx, "conversation", "", store.OriginOwner, name+" likes tea", vector); err != nil {
					return err
				}
				chunks, err := tx.Memory.NearestChunks(ctx, vector, 10)
				if err != nil {
					return err
				}
				if len(chunks) != 1 || chunks[0].Text != name+" likes tea" {
					t.Errorf("%q: %s recalls %+v, want only their own chunk", mode, name, chunks)
				}
				return tx.RawRow(ctx, `SELECT current_setting('plan_cache_mode'), COALESCE(max(generic_plans), 0), COALESCE(max(custom_plans), 0)
					FROM pg_prepared_statements WHERE statement LIKE '-- name: NearestChunks %'`).Scan(&cacheMode, &generic, &custom)
			})
			if err != nil {
				t.Fatalf("%q: %v", mode, err)
			}
		}
		s.Close()
		if named := mode == "" || mode == "cache_statement"; named && (cacheMode != "force_generic_plan" || generic != 7 || custom != 0) {
			t.Errorf("%q: plan_cache_mode %s; 7 recalls ran %d times on the generic plan and %d times on a plan of their own; want the generic plan each time", mode, cacheMode, generic, custom)
		} else if !named && (cacheMode != "auto" || generic+custom != 0) {
			t.Errorf("%q: plan_cache_mode %s, %d+%d plans of a named NearestChunks; want auto and unnamed statements", mode, cacheMode, generic, custom)
		}
	}
	for in, want := range map[string]string{
		"host=db user=u":                                          "host=db user=u plan_cache_mode=force_generic_plan",
		"postgres://u@db/x?sslmode=disable":                       "postgres://u@db/x?plan_cache_mode=force_generic_plan&sslmode=disable",
		"postgres://u@db/x?plan_cache_mode=auto":                  "postgres://u@db/x?plan_cache_mode=auto",
		"postgres://u@db/x?default_query_exec_mode=describe_exec": "postgres://u@db/x?default_query_exec_mode=describe_exec",
	} {
		if got, err := store.WithGenericPlans(in); err != nil || got != want {
			t.Errorf("WithGenericPlans(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// newDoor creates a fresh database (testdb.New) and opens its Door, closed with the test.
func newDoor(t *testing.T) (testdb.DB, *store.Door) {
	t.Helper()
	d := testdb.New(t)
	door, err := store.OpenDoor(context.Background(), d.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	return d, door
}
