// Package mcpserver is Steward's Model Context Protocol face (docs/ARCHITECTURE.md §7):
// POST /mcp speaks MCP's streamable HTTP transport through the official go-sdk, statelessly
// with JSON responses (every request stands alone, so it serves from Lambda as well as from
// `steward serve`), as the owner of the request's API key. It lists Steward's tools with
// their schemas — reads marked read-only — and steward_chat. A read runs and returns its
// result; a write never runs from here: it becomes a suspended turn (trigger mcp) that the
// owner approves in the web app or the API. Like every face it decodes, calls agent.Runner
// and encodes: it opens no transaction.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/steward"
)

// Server builds the MCP server of each request.
type Server struct {
	Runner *agent.Runner
	// Version is reported to clients.
	Version string
}

// Handler serves /mcp for the owner that owner finds in the (already authenticated) request.
func (s *Server) Handler(owner func(*http.Request) uuid.UUID) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return s.server(owner(r))
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// chatArgs are steward_chat's arguments.
type chatArgs struct {
	Message string `json:"message" jsonschema:"what to ask Steward, as the owner would"`
}

// server is one request's MCP server, bound to its owner.
func (s *Server) server(ownerID uuid.UUID) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "steward", Version: s.Version}, &mcp.ServerOptions{
		Instructions: "Reads answer at once. Writes never run from here: each becomes a turn waiting for the owner's approval in Steward."})
	for _, d := range s.Runner.Tools.Declarations() {
		tool, _ := s.Runner.Tools.Get(d.Name)
		read := tool.Kind == steward.KindRead
		destructive := !read
		srv.AddTool(&mcp.Tool{Name: d.Name, Description: describe(d.Description, read), InputSchema: d.Parameters,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: read, DestructiveHint: &destructive}},
			s.call(ownerID, d.Name, read))
	}
	chatDestructive := true
	mcp.AddTool(srv, &mcp.Tool{Name: "steward_chat", Annotations: &mcp.ToolAnnotations{DestructiveHint: &chatDestructive},
		Description: "Send Steward a message, as its owner would, and get its answer. Writes it proposes wait for the owner's approval."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a chatArgs) (*mcp.CallToolResult, any, error) {
			if a.Message == "" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "steward_chat needs a non-empty message"}}, IsError: true}, nil, nil
			}
			v, err := s.Runner.Start(ctx, agent.Input{OwnerID: ownerID, Message: a.Message, Trigger: steward.TriggerMCP}, nil)
			if err != nil {
				return failed(ctx, err), nil, nil
			}
			return viewResult(v), nil, nil
		})
	return srv
}

// describe adds how a write behaves here to its description.
func describe(desc string, read bool) string {
	if read {
		return desc
	}
	return desc + " (A write: from MCP it never runs directly; it waits for the owner's approval in Steward.)"
}

// call runs a read, or proposes a write for the owner's approval.
func (s *Server) call(ownerID uuid.UUID, name string, read bool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.Arguments
		if read {
			res, err := s.Runner.Read(ctx, ownerID, name, args)
			if err != nil {
				return failed(ctx, err), nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(res.Output)}}, IsError: res.IsError}, nil
		}
		v, err := s.Runner.Propose(ctx, ownerID, name, args)
		if err != nil {
			return failed(ctx, err), nil
		}
		return viewResult(v), nil
	}
}

// viewResult tells the client what became of a turn: its answer, or where its writes wait.
func viewResult(v steward.View) *mcp.CallToolResult {
	var text string
	switch v.Status {
	case steward.StatusSuspended:
		text = fmt.Sprintf("Awaiting the owner's approval: turn %s (%d pending write(s)). Nothing has run yet. The owner approves it in Steward's web app (/approvals) or with POST /v1/turns/%s/confirm.",
			v.TurnID, len(v.Pending), v.TurnID)
	case steward.StatusCompleted:
		text = v.Answer
	default:
		text = fmt.Sprintf("Turn %s %s: %s", v.TurnID, v.Status, v.Error)
	}
	structured, _ := json.Marshal(map[string]any{"turn_id": v.TurnID, "status": v.Status, "pending": v.Pending})
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: json.RawMessage(structured), IsError: v.Status == steward.StatusFailed || v.Status == steward.StatusAborted || v.Status == steward.StatusCancelled}
}

// failed is a refused call as the client sees it: the error's message for Steward's own
// errors (a bad argument, the kill switch, a budget), a generic one otherwise.
func failed(ctx context.Context, err error) *mcp.CallToolResult {
	msg := "the call failed; try again later"
	var e *steward.Error
	if errors.As(err, &e) {
		msg = e.Message
	} else {
		zerolog.Ctx(ctx).Error().Err(err).Msg("mcp call failed")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}
