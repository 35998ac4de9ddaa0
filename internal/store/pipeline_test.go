package store_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestPipelinedJournalMoveThatMovesNothing: in the loop's pipelined transaction a journal
// move (UpdateCall) is deferred and travels with the next statement; when it moves no row
// the transaction still fails with ErrConflict and nothing of it commits — as when it ran
// alone. And BEGIN, deferred too, still confines the transaction to its owner.
func TestPipelinedJournalMoveThatMovesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 2)
	owner, _, err := o.Door.CreateOwner(ctx, "piper")
	if err != nil {
		t.Fatal(err)
	}
	err = o.Store.InOwner(ctx, owner.ID, func(tx agent.Tx) error {
		if err := tx.Journal.UpdateCall(ctx, steward.CallUpdate{TurnID: uuid.New(), CallID: "c1",
			From: steward.CallApproved, To: steward.CallExecuting}); err != nil {
			return err
		}
		_, err := tx.Conversations.Create(ctx, "must not commit")
		return err
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("InOwner = %v, want ErrConflict from the deferred journal move", err)
	}
	var convs []steward.Conversation
	err = o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		var err error
		convs, err = tx.Conversations.List(ctx, 10)
		return err
	})
	if err != nil || len(convs) != 0 {
		t.Fatalf("conversations after the failed transaction: %+v, %v; want none", convs, err)
	}

	// A transaction whose first statement carries BEGIN sees only its owner's rows, and
	// commits.
	var c steward.Conversation
	err = o.Store.InOwner(ctx, owner.ID, func(tx agent.Tx) error {
		var err error
		c, err = tx.Conversations.Create(ctx, "kept")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := o.Door.CreateOwner(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	err = o.Store.InOwner(ctx, other.ID, func(tx agent.Tx) error {
		_, err := tx.Conversations.Get(ctx, c.ID)
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another owner's pipelined read of the conversation: %v, want ErrNotFound", err)
	}
}

// TestOwnerTransactionsSetTheSearchSettings: both kinds of owner transaction, WithOwner's and
// the loop's pipelined one (InOwner), search with the same HNSW settings — an iterative
// scan and ef_search RecallEfSearch — so a recall in a turn is as good as one through the
// API (docs/PERFORMANCE.md, make bench-recall).
func TestOwnerTransactionsSetTheSearchSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 2)
	owner, _, err := o.Door.CreateOwner(ctx, "settings")
	if err != nil {
		t.Fatal(err)
	}
	for name, run := range map[string]func(context.Context, uuid.UUID, func(*store.Tx) error) error{
		"WithOwner": o.Store.WithOwner, "InOwner (pipelined)": o.Store.InOwnerTx,
	} {
		var scan, ef string
		err := run(ctx, owner.ID, func(tx *store.Tx) error {
			return tx.RawRow(ctx, `SELECT current_setting('hnsw.iterative_scan'), current_setting('hnsw.ef_search')`).Scan(&scan, &ef)
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if scan != "relaxed_order" || ef != strconv.Itoa(store.RecallEfSearch) {
			t.Errorf("%s: hnsw.iterative_scan = %q, hnsw.ef_search = %q; want relaxed_order, %d", name, scan, ef, store.RecallEfSearch)
		}
	}
}
