package store

import (
	"github.com/stewardhq/steward/internal/steward"

	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/stewardhq/steward/db"
)

// MCPServers: the remote MCP servers an owner registered and the tools of each the owner
// approved. Header values are stored for the calls and never returned by any
// face; the service only ever shows their names.

// MCPServer is a registered server.
type MCPServer = steward.MCPServer

// MCPTool is a tool the owner approved, as it was when approved.
type MCPTool = steward.MCPTool

// Approve stores the server with its tools as they are now, replacing whatever was stored
// under that name (a re-approval).
func (t MCPServers) Approve(ctx context.Context, s MCPServer, tools []MCPTool) error {
	headers, err := json.Marshal(s.Headers)
	if err != nil {
		return fmt.Errorf("encode mcp headers: %w", err)
	}
	if s.Headers == nil {
		headers = []byte("{}")
	}
	if err := t.q.UpsertMCPServer(ctx, db.UpsertMCPServerParams{OwnerID: t.ownerID, Name: s.Name, Url: s.URL, Headers: headers, ApprovedAt: s.ApprovedAt}); err != nil {
		return notFound("store mcp server", err)
	}
	if err := t.q.DeleteMCPTools(ctx, db.DeleteMCPToolsParams{OwnerID: t.ownerID, Server: s.Name}); err != nil {
		return fmt.Errorf("replace mcp tools: %w", err)
	}
	for _, tl := range tools {
		if err := t.q.InsertMCPTool(ctx, db.InsertMCPToolParams{OwnerID: t.ownerID, Server: s.Name, Name: tl.Name, Hash: tl.Hash,
			Description: tl.Description, InputSchema: tl.InputSchema, ReadOnly: tl.ReadOnly, WriteOverride: tl.WriteOverride, Enabled: tl.Enabled}); err != nil {
			return notFound("store mcp tool", err)
		}
	}
	return nil
}

// List returns the owner's servers, by name.
func (t MCPServers) List(ctx context.Context) ([]MCPServer, error) {
	rows, err := t.q.ListMCPServers(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list mcp servers: %w", err)
	}
	out := make([]MCPServer, len(rows))
	for i, r := range rows {
		out[i] = MCPServer{Name: r.Name, URL: r.Url, CreatedAt: r.CreatedAt, ApprovedAt: r.ApprovedAt}
		if err := json.Unmarshal(r.Headers, &out[i].Headers); err != nil {
			return nil, fmt.Errorf("decode mcp headers: %w", err)
		}
	}
	return out, nil
}

// Get returns one server.
func (t MCPServers) Get(ctx context.Context, name string) (MCPServer, error) {
	r, err := t.q.GetMCPServer(ctx, db.GetMCPServerParams{OwnerID: t.ownerID, Name: name})
	if err != nil {
		return MCPServer{}, notFound("get mcp server", err)
	}
	s := MCPServer{Name: r.Name, URL: r.Url, CreatedAt: r.CreatedAt, ApprovedAt: r.ApprovedAt}
	if err := json.Unmarshal(r.Headers, &s.Headers); err != nil {
		return MCPServer{}, fmt.Errorf("decode mcp headers: %w", err)
	}
	return s, nil
}

// Tools returns the approved tools of all the owner's servers, by server and name.
func (t MCPServers) Tools(ctx context.Context) ([]MCPTool, error) {
	rows, err := t.q.ListMCPTools(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list mcp tools: %w", err)
	}
	out := make([]MCPTool, len(rows))
	for i, r := range rows {
		out[i] = MCPTool{Server: r.Server, Name: r.Name, Hash: r.Hash, Description: r.Description, InputSchema: r.InputSchema,
			ReadOnly: r.ReadOnly, WriteOverride: r.WriteOverride, Enabled: r.Enabled, ChangedAt: r.ChangedAt}
	}
	return out, nil
}

// Delete deletes a server and its tools.
func (t MCPServers) Delete(ctx context.Context, name string) error {
	n, err := t.q.DeleteMCPServer(ctx, db.DeleteMCPServerParams{OwnerID: t.ownerID, Name: name})
	return rowsOrNotFound("delete mcp server", n, err)
}

// MarkChanged disables a tool whose hash no longer matches its approval, at the given time;
// a tool already marked keeps its first time.
func (t MCPServers) MarkChanged(ctx context.Context, server, tool string, at time.Time) error {
	_, err := t.q.MarkMCPToolChanged(ctx, db.MarkMCPToolChangedParams{OwnerID: t.ownerID, Server: server, Name: tool, ChangedAt: &at})
	if err != nil {
		return fmt.Errorf("mark mcp tool changed: %w", err)
	}
	return nil
}

// SetTool sets the owner's choice for one tool: a write override and/or enabled (nil keeps
// the stored value). It never touches the approval (hash, changed_at): enabling a tool whose
// hash changed stores nothing and returns ErrNotFound, as does a tool that does not exist;
// the caller tells the two apart.
func (t MCPServers) SetTool(ctx context.Context, server, tool string, write, enabled *bool) (MCPTool, error) {
	opt := func(b *bool) pgtype.Bool {
		if b == nil {
			return pgtype.Bool{}
		}
		return pgtype.Bool{Bool: *b, Valid: true}
	}
	r, err := t.q.SetMCPTool(ctx, db.SetMCPToolParams{OwnerID: t.ownerID, Server: server, Name: tool, WriteOverride: opt(write), Enabled: opt(enabled)})
	if err != nil {
		return MCPTool{}, notFound("set mcp tool", err)
	}
	return MCPTool{Server: r.Server, Name: r.Name, Hash: r.Hash, Description: r.Description, InputSchema: r.InputSchema,
		ReadOnly: r.ReadOnly, WriteOverride: r.WriteOverride, Enabled: r.Enabled, ChangedAt: r.ChangedAt}, nil
}
