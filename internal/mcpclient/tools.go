package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
)

// Tools returns the owner's approved MCP tools for one turn (agent.Runner.OwnerTools): what
// the model sees is the description and schema the owner approved, never what the server
// says now. A tool whose hash changed is declared disabled and refuses every call. It reads
// the database only, in the turn's transaction tx (the one that starts the turn, or claims
// it); the servers are asked at call time.
func (s *Service) Tools(ctx context.Context, tx agent.Tx) ([]tools.Tool, error) {
	// The tools first: an owner without any (the common case) costs one statement.
	all, err := tx.MCP.Tools(ctx)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	servers, err := tx.MCP.List(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]store.MCPServer{}
	for _, srv := range servers {
		byName[srv.Name] = srv
	}
	var out []tools.Tool
	for _, t := range all {
		if !t.Enabled {
			continue
		}
		srv, name := byName[t.Server], ModelName(t.Server, t.Name)
		var tool tools.Tool
		if t.ChangedAt != nil {
			tool = tools.NewRaw(name, fmt.Sprintf("Disabled: this tool of the MCP server %q changed since the owner approved it; it fails until the owner approves the server again.", t.Server),
				steward.KindRead, json.RawMessage(`{"type":"object"}`), func(context.Context, tools.Env, json.RawMessage) (any, error) {
					return nil, changedError(t)
				})
		} else {
			desc := t.Description
			if desc == "" {
				desc = "(no description)"
			}
			tool = tools.NewRaw(name, fmt.Sprintf("[tool %q of the owner's MCP server %q] %s", t.Name, t.Server, desc), kind(t), t.InputSchema,
				func(ctx context.Context, env tools.Env, args json.RawMessage) (any, error) {
					return s.call(ctx, env.OwnerID, srv, t, args)
				})
		}
		// Its output is outside data (taints the turn); it is External: a read sends its
		// arguments out (held in a tainted turn), a write's effect is the server's, and both
		// run outside any transaction (docs/ARCHITECTURE.md §3).
		tool.Untrusted, tool.External = true, true
		if tool.Err() != nil {
			continue // a schema that no longer resolves is not offered
		}
		out = append(out, tool)
	}
	return out, nil
}

// changedError is what the model reads when it calls a tool whose hash changed.
func changedError(t store.MCPTool) error {
	return &tools.Refusal{Msg: fmt.Sprintf("tool %q of MCP server %q changed since the owner approved it (its name, description or input schema differs), so it is disabled until the owner approves the server again; tell the owner", t.Name, t.Server)}
}

// call runs an approved tool: it connects, lists the server's tools and compares the tool's
// hash with the approval (a changed one is disabled and refused), then calls it, all within
// the timeout. Failures reach the model as readable errors.
func (s *Service) call(ctx context.Context, ownerID uuid.UUID, srv store.MCPServer, t store.MCPTool, args json.RawMessage) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	fail := func(what string, err error) error {
		msg := fmt.Sprintf("MCP server %q: %s: %v", t.Server, what, err)
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			msg = fmt.Sprintf("MCP server %q did not answer within %s", t.Server, s.timeout())
		}
		return &tools.Refusal{Msg: msg, Err: err}
	}
	cs, err := s.session(ctx, ownerID, srv)
	if err != nil {
		return nil, fail("cannot connect", err)
	}
	defer cs.Close()
	listed, err := s.listOn(ctx, cs, srv.URL)
	if err != nil {
		return nil, fail("cannot list its tools", err)
	}
	var now *mcp.Tool
	for _, l := range listed {
		if l.Name == t.Name {
			now = l
		}
	}
	if now == nil {
		return nil, tools.Refusedf("MCP server %q no longer offers tool %q", t.Server, t.Name)
	}
	schema, _ := json.Marshal(now.InputSchema)
	readOnlyNow := now.Annotations != nil && now.Annotations.ReadOnlyHint
	if Hash(now.Name, now.Description, schema) != t.Hash || (t.ReadOnly && !readOnlyNow) {
		// A short transaction of its own, before any call: none is open while a server is asked.
		// It is recorded even when the listing used up the call's time.
		mark := context.WithoutCancel(ctx)
		if err := s.Store.WithOwner(mark, ownerID, func(tx *store.Tx) error {
			return tx.MCPServers.MarkChanged(mark, t.Server, t.Name, s.Now.Now())
		}); err != nil {
			return nil, err
		}
		return nil, changedError(t)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: t.Name, Arguments: args})
	if err != nil {
		return nil, fail("the call failed", err)
	}
	return output(res), nil
}

// output is a call's result as the model reads it (inside a data block): the text of its
// content, its structured content, and whether the server reported an error, capped.
func output(res *mcp.CallToolResult) map[string]any {
	out := map[string]any{}
	var texts []string
	size := 0
	for _, c := range res.Content {
		var text string
		switch c := c.(type) {
		case *mcp.TextContent:
			text = c.Text
		default:
			b, _ := json.Marshal(c)
			text = string(b)
		}
		if size+len(text) > maxOutputBytes {
			text = text[:max(0, maxOutputBytes-size)] + "… (cut)"
		}
		size += len(text)
		texts = append(texts, text)
		if size >= maxOutputBytes {
			break
		}
	}
	out["content"] = texts
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && len(b) <= maxOutputBytes {
			out["structured"] = json.RawMessage(b)
		}
	}
	if res.IsError {
		out["is_error"] = true
	}
	return out
}
