package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestMCPToolCommand: `steward mcp tool` marks a read-annotated tool a write and disables a
// tool (shown by `mcp list`); a changed tool is not enabled (exit 1, nothing stored); an
// unknown tool is exit 1; conflicting or missing flags are usage errors (exit 2).
func TestMCPToolCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 2)
	owner, _ := o.Owner(t, "alice")
	schema := json.RawMessage(`{"type":"object"}`)
	err := o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		if err := tx.MCPServers.Approve(ctx, store.MCPServer{Name: "dict", URL: "https://example.com/mcp", CreatedAt: time.Now(), ApprovedAt: time.Now()},
			[]store.MCPTool{
				{Name: "lookup", Hash: "h1", Description: "Look up.", InputSchema: schema, ReadOnly: true, Enabled: true},
				{Name: "send", Hash: "h2", Description: "Send.", InputSchema: schema, Enabled: true},
			}); err != nil {
			return err
		}
		if _, err := tx.MCPServers.SetTool(ctx, "dict", "send", nil, new(bool)); err != nil {
			return err
		}
		return tx.MCPServers.MarkChanged(ctx, "dict", "send", time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	env := dbEnv(o.DB)
	r := runCLI(t, env, "mcp", "tool", "dict", "lookup", "--write")
	wantOK(t, r)
	if !strings.Contains(r.stdout, `"name":"lookup"`) || !strings.Contains(r.stdout, `"kind":"write"`) {
		t.Fatalf("mcp tool --write: %s", r.stdout)
	}
	if r := runCLI(t, env, "mcp", "tool", "dict", "send", "--enable"); r.code != 1 || !strings.Contains(r.stderr, "approve the server again") {
		t.Fatalf("enable a changed tool: exit %d, %s", r.code, r.stderr)
	}
	if r := runCLI(t, env, "mcp", "tool", "dict", "nope", "--disable"); r.code != 1 || !strings.Contains(r.stderr, `no approved tool "nope"`) {
		t.Fatalf("unknown tool: exit %d, %s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"dict", "lookup"}, {"dict", "lookup", "--write", "--read"}, {"dict", "lookup", "--enable", "--disable"}, {"dict"}} {
		if r := runCLI(t, env, append([]string{"mcp", "tool"}, args...)...); r.code != 2 {
			t.Errorf("mcp tool %v: exit %d, want 2", args, r.code)
		}
	}
	r = runCLI(t, env, "mcp", "list")
	wantOK(t, r)
	if !strings.Contains(r.stdout, `"name":"lookup","as":"mcp_dict_lookup","description":"Look up.","kind":"write","status":"enabled"`) ||
		!strings.Contains(r.stdout, `"name":"send","as":"mcp_dict_send","description":"Send.","kind":"write","status":"changed"`) ||
		!strings.Contains(r.stdout, `"enabled":false`) {
		t.Fatalf("mcp list: %s", r.stdout)
	}
	wantOK(t, runCLI(t, env, "mcp", "tool", "dict", "lookup", "--read", "--disable"))
	if r := runCLI(t, env, "mcp", "list"); !strings.Contains(r.stdout, `"name":"lookup","as":"mcp_dict_lookup","description":"Look up.","kind":"read","status":"disabled"`) {
		t.Fatalf("mcp list after --read --disable: %s", r.stdout)
	}
}
