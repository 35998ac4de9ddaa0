package erasure_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// canary is a word that appears nowhere but in what the test says.
const canary = "zebracanary"

type env struct {
	*apptest.Env
	owner uuid.UUID
	key   string
}

func newEnv(t *testing.T) env {
	t.Helper()
	e := apptest.New(t, apptest.Options{})
	o, key := e.DB.Owner(t, "alice")
	return env{Env: e, owner: o.ID, key: key}
}

func (e env) start(t *testing.T, conv uuid.UUID, msg string) steward.View {
	t.Helper()
	in := agent.Input{OwnerID: e.owner, Message: msg}
	if conv != uuid.Nil {
		in.ConversationID = &conv
	}
	v, err := e.App.Runner.Start(context.Background(), in, nil)
	if err != nil {
		t.Fatalf("turn %q: %v", msg, err)
	}
	return v
}

// call sends an API request as key and returns the status and body.
func (e env) call(t *testing.T, key, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.Server.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// superCount counts rows as the superuser (no row-level security) whose text holds s.
func superCount(t *testing.T, d testdb.DB, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := testdb.Connect(t, d.SuperURL).QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestDeletedConversationLeavesNoText: a conversation deleted through the API takes its
// messages, turns, tool calls, memory chunks, its pending ingestion and (chosen) its facts
// with it; a suspended turn in it never runs its write; its words are then found by no
// memory search, no API read, no export, and in no audit row; another owner cannot delete it.
func TestDeletedConversationLeavesNoText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	_, bobKey := e.DB.Owner(t, "bob")

	// A conversation memory has ingested, with a fact from it, and a turn suspended on a write.
	first := e.start(t, uuid.Nil, "what time is it, "+canary+"?")
	conv := first.ConversationID
	if _, err := e.App.MemoryWorker.Drain(ctx, 10); err != nil {
		t.Fatal(err)
	}
	hits, err := e.App.Memory.Search(ctx, e.owner, "what time is it, "+canary+"?", 5)
	if err != nil || !hitsHold(hits, canary) {
		t.Fatalf("memory search before the delete: %+v, %v; want the canary found (the case proves nothing otherwise)", hits, err)
	}
	turnID := first.TurnID
	if err := e.App.Store.WithOwner(ctx, e.owner, func(tx *store.Tx) error {
		_, _, err := tx.Memory.RememberFact(ctx, store.NewMemoryFact{Kind: "fact", Content: "the " + canary + " lives in the garden",
			Source: store.FactSourceIngest, TurnID: &turnID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	susp := e.start(t, conv, "remind me to call the "+canary)
	if susp.Status != steward.StatusSuspended || len(susp.Pending) != 1 {
		t.Fatalf("second turn: %s %+v; want suspended on a write", susp.Status, susp.Pending)
	}
	// A later exchange whose ingestion is still pending.
	e.start(t, conv, "and what day is it, "+canary)
	if n := superCount(t, e.DB.DB, `SELECT count(*) FROM memory_outbox WHERE conversation_id = $1 AND done_at IS NULL`, conv); n != 1 {
		t.Fatalf("pending ingestions = %d, want 1", n)
	}

	path := "/v1/conversations/" + conv.String()
	if status, body := e.call(t, bobKey, http.MethodDelete, path+"?facts=forget", nil); status != http.StatusNotFound {
		t.Fatalf("bob deletes alice's conversation: %d %s, want 404", status, body)
	}
	status, body := e.call(t, e.key, http.MethodGet, path+"/facts", nil)
	if status != http.StatusOK || !strings.Contains(string(body), canary) {
		t.Fatalf("GET facts: %d %s, want the fact listed", status, body)
	}
	if status, body := e.call(t, e.key, http.MethodDelete, path, nil); status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "1 facts") {
		t.Fatalf("delete without a choice about its fact: %d %s, want 422 asking", status, body)
	}
	status, body = e.call(t, e.key, http.MethodDelete, path+"?facts=forget", nil)
	if status != http.StatusOK {
		t.Fatalf("delete: %d %s", status, body)
	}
	var got struct{ Deleted store.DeletedConversation }
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if d := got.Deleted; d.Turns != 3 || d.Messages == 0 || d.MemoryChunks == 0 || d.FactsForgot != 1 {
		t.Errorf("deleted %+v; want 3 turns, their messages, chunks and the fact", d)
	}

	// The pending ingestion is gone with it: draining stores nothing.
	if _, err := e.App.MemoryWorker.Drain(ctx, 10); err != nil {
		t.Fatal(err)
	}
	hits, err = e.App.Memory.Search(ctx, e.owner, "what time is it, "+canary+"?", 20)
	if err != nil || hitsHold(hits, canary) {
		t.Errorf("memory search after the delete: %+v, %v; want no canary", hits, err)
	}
	// The suspended turn's write never runs.
	if _, err := e.App.Runner.Confirm(ctx, e.owner, susp.TurnID, []steward.Decision{{CallID: susp.Pending[0].CallID, Approve: true, ArgsHash: susp.Pending[0].ArgsHash}}, nil); err == nil {
		t.Error("confirming the deleted conversation's suspended turn succeeded")
	}
	if n := superCount(t, e.DB.DB, `SELECT count(*) FROM tasks WHERE owner_id = $1`, e.owner); n != 0 {
		t.Errorf("%d tasks exist: the deleted conversation's write ran", n)
	}
	// Not through the API.
	if status, body := e.call(t, e.key, http.MethodGet, path, nil); status != http.StatusNotFound {
		t.Errorf("GET the deleted conversation: %d %s, want 404", status, body)
	}
	for _, p := range []string{"/v1/conversations", "/v1/memory/facts", "/v1/activity", "/v1/conversations/search?q=" + canary} {
		if status, body := e.call(t, e.key, http.MethodGet, p, nil); status != http.StatusOK || strings.Contains(string(body), canary) {
			t.Errorf("GET %s: %d, canary found: %v", p, status, strings.Contains(string(body), canary))
		}
	}
	// Not in the export.
	status, body = e.call(t, e.key, http.MethodGet, "/v1/export", nil)
	if status != http.StatusOK {
		t.Fatalf("export: %d %s", status, body)
	}
	if f := zipFileHolding(t, body, canary); f != "" {
		t.Errorf("the export's %s holds the canary", f)
	}
	// No row anywhere of the owner's still holds it — the audit log included, which keeps its rows.
	if n := superCount(t, e.DB.DB, `SELECT count(*) FROM audit_log WHERE owner_id = $1`, e.owner); n == 0 {
		t.Fatal("the audit log is empty: the case proves nothing")
	}
	for _, table := range []string{"audit_log", "messages", "turns", "tool_calls", "memory_chunks", "memory_facts", "notifications", "memory_outbox", "conversations"} {
		if n := superCount(t, e.DB.DB, `SELECT count(*) FROM `+table+` x WHERE x.owner_id = $1 AND to_jsonb(x)::text LIKE '%' || $2 || '%'`, e.owner, canary); n != 0 {
			t.Errorf("%d rows of %s still hold the canary", n, table)
		}
	}
	if n := superCount(t, e.DB.DB, `SELECT count(*) FROM audit_log WHERE owner_id = $1 AND kind = 'conversation_deleted'`, e.owner); n != 1 {
		t.Errorf("%d conversation_deleted audit rows, want 1", n)
	}
}

func hitsHold[T any](hits []T, s string) bool {
	b, _ := json.Marshal(hits)
	return strings.Contains(string(b), s)
}

// zipFileHolding names the first file of the zip whose bytes hold s ("" when none does).
func zipFileHolding(t *testing.T, b []byte, s string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("the export is not a zip: %v", err)
	}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if bytes.Contains(data, []byte(s)) {
			return f.Name
		}
	}
	return ""
}
