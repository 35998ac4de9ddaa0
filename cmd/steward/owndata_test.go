package main

import (
	"archive/zip"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/testdb"
)

// TestOwnDataCommands: `conversations list`, `search`, `rename`, `delete` (without --yes it
// only says what would go), `export -o` (a zip with the conversation) and `forget` (counted
// without --yes).
func TestOwnDataCommands(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	env := dbEnv(d)
	r := runCLI(t, env, "owners", "add", "alice", "--json")
	wantOK(t, r)
	var o struct {
		OwnerID string `json:"owner_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
		t.Fatalf("owners add --json: %s", r.stdout)
	}
	var conv string
	super := testdb.Connect(t, d.SuperURL)
	if err := super.QueryRow(context.Background(), `WITH c AS (INSERT INTO conversations (owner_id, title) VALUES ($1, 'zebra notes') RETURNING id),
		t AS (INSERT INTO turns (owner_id, conversation_id, status) SELECT $1, id, 'completed' FROM c RETURNING id, conversation_id)
		INSERT INTO messages (owner_id, conversation_id, turn_id, seq, role, content)
		SELECT $1, conversation_id, id, 1, 'user', '{"role":"user","parts":[{"text":"the zebra sings"}]}' FROM t RETURNING conversation_id::text`,
		o.OwnerID).Scan(&conv); err != nil {
		t.Fatal(err)
	}
	owner := []string{"--owner", o.OwnerID}
	if r := runCLI(t, env, append([]string{"conversations", "list"}, owner...)...); r.code != 0 || !strings.Contains(r.stdout, conv+"  ") || !strings.Contains(r.stdout, "zebra notes") {
		t.Errorf("conversations list: %+v", r)
	}
	if r := runCLI(t, env, append([]string{"conversations", "search", "sings"}, owner...)...); r.code != 0 || !strings.Contains(r.stdout, conv) {
		t.Errorf("conversations search: %+v", r)
	}
	if r := runCLI(t, env, append([]string{"conversations", "rename", conv, "Zebra", "songs"}, owner...)...); r.code != 0 || !strings.Contains(r.stdout, "Zebra songs") {
		t.Errorf("conversations rename: %+v", r)
	}
	file := filepath.Join(t.TempDir(), "export.zip")
	wantOK(t, runCLI(t, env, append([]string{"export", "-o", file}, owner...)...))
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatalf("the export is not a zip: %v", err)
	}
	found := false
	for _, f := range zr.File {
		found = found || f.Name == "conversations/"+conv+".md"
	}
	zr.Close()
	if !found {
		t.Error("the export lacks the conversation's Markdown")
	}
	if r := runCLI(t, env, append([]string{"forget", "--from", "2000-01-01", "--to", "2999-01-01"}, owner...)...); r.code != 0 || !strings.HasPrefix(r.stdout, "Would forget 1 conversations") {
		t.Errorf("forget without --yes: %+v", r)
	}
	if r := runCLI(t, env, append([]string{"conversations", "delete", conv}, owner...)...); r.code != 0 || !strings.Contains(r.stdout, "Nothing was deleted") {
		t.Errorf("delete without --yes: %+v", r)
	}
	if r := runCLI(t, env, append([]string{"conversations", "delete", conv, "--yes"}, owner...)...); r.code != 0 || !strings.Contains(r.stdout, "Deleted: 1 turns, 1 messages") {
		t.Errorf("delete --yes: %+v", r)
	}
	wantOneLineError(t, runCLI(t, env, append([]string{"conversations", "delete", conv, "--yes"}, owner...)...), "conversation not found")
}
