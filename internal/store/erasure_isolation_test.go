package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"

	. "github.com/stewardhq/steward/internal/store"
)

// probeErasure: through the erasure's and the export's methods, bob finds, changes and
// deletes none of alice's rows.
func probeErasure(t *testing.T, ctx context.Context, s *Store, a, b seeded) {
	covers("Erasure.FactsOf", "Erasure.DeleteConversation", "Erasure.Rename", "Erasure.SearchConversations",
		"Erasure.ConversationsBetween", "Erasure.ForgetChunks", "Erasure.ForgetFacts", "Erasure.MemoryBetween", "Erasure.DocumentsBetween",
		"Erasure.Owned", "Erasure.ForgetDocumentChunks", "Export.Page", "Export.Conversations", "Export.Messages", "Export.Ledger")
	alices := []string{a.conv.String(), a.turn.String(), a.task.String(), a.fact.String(), a.chunk.String(), a.rule.String(), a.doc.String()}
	holdsAlices := func(what string, v any) {
		t.Helper()
		j, _ := json.Marshal(v)
		for _, id := range alices {
			if strings.Contains(string(j), id) {
				t.Errorf("%s: bob sees alice's %s", what, id)
			}
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s on alice's row: err = %v, want not found", what, err)
		}
	}
	var aliceLedger []uuid.UUID
	if err := s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		l, err := tx.Export.Ledger(ctx, uuid.Nil, 1000)
		for _, x := range l {
			aliceLedger = append(aliceLedger, x.ID)
		}
		return err
	}); err != nil || len(aliceLedger) == 0 {
		t.Fatalf("alice's ledger: %v, %v; want her transactions (the probe proves nothing otherwise)", aliceLedger, err)
	}
	all, never := time.Unix(0, 0), time.Now().Add(time.Hour)
	err := s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		facts, err := tx.Erasure.FactsOf(ctx, a.conv)
		if err != nil || len(facts) != 0 {
			t.Errorf("facts of alice's conversation: %d, %v", len(facts), err)
		}
		_, err = tx.Erasure.DeleteConversation(ctx, a.conv, true)
		refused("delete conversation", err)
		_, err = tx.Erasure.Rename(ctx, a.conv, "x")
		refused("rename conversation", err)
		hits, err := tx.Erasure.SearchConversations(ctx, "", 100)
		if err != nil || !slices.ContainsFunc(hits, func(h ConversationHit) bool { return h.ID == b.conv }) ||
			slices.ContainsFunc(hits, func(h ConversationHit) bool { return h.ID == a.conv }) {
			t.Errorf("search: %+v, %v; want only bob's conversation", hits, err)
		}
		convs, err := tx.Erasure.ConversationsBetween(ctx, all, never)
		if err != nil || slices.Contains(convs, a.conv) {
			t.Errorf("conversations between: %v, %v", convs, err)
		}
		if c, f, err := tx.Erasure.ForgetChunks(ctx, []uuid.UUID{a.chunk}); c != 0 || f != 0 || err != nil {
			t.Errorf("forget alice's chunk: %d, %d, %v", c, f, err)
		}
		if n, err := tx.Erasure.ForgetFacts(ctx, []uuid.UUID{a.fact}); n != 0 || err != nil {
			t.Errorf("forget alice's fact: %d, %v", n, err)
		}
		fs, cs, err := tx.Erasure.MemoryBetween(ctx, all, never)
		holdsAlices("memory between", []any{fs, cs, err})
		ds, err := tx.Erasure.DocumentsBetween(ctx, all, never)
		holdsAlices("documents between", []any{ds, err})
		o, err := tx.Erasure.Owned(ctx, []uuid.UUID{a.conv}, []uuid.UUID{a.fact}, []uuid.UUID{a.chunk}, []uuid.UUID{a.doc})
		if err != nil || len(o.Conversations)+len(o.Facts)+len(o.Chunks)+len(o.Documents)+o.ConversationFacts+o.ConversationChunks+o.DocumentChunks != 0 {
			t.Errorf("owned: %+v, %v; want none of alice's", o, err)
		}
		if n, err := tx.Erasure.ForgetDocumentChunks(ctx, []uuid.UUID{a.doc}); n != 0 || err != nil {
			t.Errorf("forget alice's document chunks: %d, %v", n, err)
		}
		seen := 0
		for _, tt := range ExportTables {
			rows, _, err := tx.Export.Page(ctx, tt, "", 1000)
			if err != nil {
				t.Errorf("export %s: %v", tt.Table, err)
			}
			seen += len(rows)
			holdsAlices("export "+tt.Table, rows)
		}
		if seen == 0 {
			t.Error("bob's export is empty: the probe proves nothing")
		}
		ec, err := tx.Export.Conversations(ctx, uuid.Nil, 100)
		if err != nil || !slices.ContainsFunc(ec, func(c steward.Conversation) bool { return c.ID == b.conv }) ||
			slices.ContainsFunc(ec, func(c steward.Conversation) bool { return c.ID == a.conv }) {
			t.Errorf("export conversations: %+v, %v; want only bob's", ec, err)
		}
		msgs, err := tx.Export.Messages(ctx, a.conv, 0, 100)
		if err != nil || len(msgs) != 0 {
			t.Errorf("export alice's messages: %d, %v", len(msgs), err)
		}
		ledger, err := tx.Export.Ledger(ctx, uuid.Nil, 1000)
		for _, x := range ledger {
			if slices.Contains(aliceLedger, x.ID) {
				t.Errorf("export ledger: bob sees alice's transaction %s", x.ID)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
