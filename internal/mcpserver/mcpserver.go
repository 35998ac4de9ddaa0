// Package mcpserver is Steward's Model Context Protocol face (docs/ARCHITECTURE.md §7):
// POST /mcp speaks MCP's streamable HTTP transport statelessly with JSON responses (every
// request stands alone, so it serves from Lambda as well as from `steward serve`), as the
// owner of the request's API key. It lists Steward's tools with their schemas — reads marked
// read-only — and steward_chat. A read runs and returns its result; a write never runs from
// here: it becomes a suspended turn (trigger mcp) that the owner approves in the web app or
// the API. Like every face it decodes, calls agent.Runner and encodes: it opens no
// transaction.
//
// The protocol is served here rather than by the official go-sdk's server, whose size
// (about 1.1 MB per Lambda bootstrap) would break the bootstrap cap; the tests speak to it
// with the go-sdk's client. Stateless JSON-response MCP needs only this: one JSON-RPC
// message per POST, notifications answered 202, GET and DELETE refused (405, by the router).
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/steward"
)

// Server answers MCP requests with Runner's tools.
type Server struct {
	Runner *agent.Runner
	// Version is reported to clients.
	Version string
}

// protocolVersions are the MCP revisions this server speaks, newest first.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// JSON-RPC error codes (JSON-RPC 2.0 §5.1).
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeNoMethod       = -32601
	codeInvalidParams  = -32602
)

// chatTool is the tool that sends Steward a message as its owner.
const chatTool = "steward_chat"

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// Handler serves POST /mcp for the owner that owner finds in the (already authenticated)
// request.
func (s *Server) Handler(owner func(*http.Request) uuid.UUID) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m message
		dec := json.NewDecoder(r.Body)
		if err := dec.Decode(&m); err != nil || dec.More() {
			reply(w, http.StatusBadRequest, response{Error: &rpcError{codeParse, "the body is not one JSON-RPC message"}})
			return
		}
		switch {
		case m.JSONRPC != "2.0":
			reply(w, http.StatusBadRequest, response{ID: m.ID, Error: &rpcError{codeInvalidRequest, `jsonrpc must be "2.0"`}})
			return
		case len(m.ID) == 0 || m.Method == "":
			w.WriteHeader(http.StatusAccepted) // a notification or a response: nothing to answer
			return
		}
		result, rerr := s.dispatch(r.Context(), owner(r), m)
		reply(w, http.StatusOK, response{ID: m.ID, Result: result, Error: rerr})
	})
}

// reply writes one JSON-RPC response.
func reply(w http.ResponseWriter, status int, resp response) {
	resp.JSONRPC = "2.0"
	if resp.ID == nil {
		resp.ID = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

// dispatch answers one request.
func (s *Server) dispatch(ctx context.Context, ownerID uuid.UUID, m message) (any, *rpcError) {
	switch m.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		version := protocolVersions[0]
		if slices.Contains(protocolVersions, p.ProtocolVersion) {
			version = p.ProtocolVersion
		}
		return map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
			"serverInfo":      map[string]any{"name": "steward", "version": s.Version},
			"instructions":    "Reads answer at once. Writes never run from here: each becomes a turn waiting for the owner's approval in Steward.",
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": s.tools()}, nil
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || p.Name == "" {
			return nil, &rpcError{codeInvalidParams, "tools/call needs a tool name"}
		}
		return s.call(ctx, ownerID, p.Name, p.Arguments)
	}
	return nil, &rpcError{codeNoMethod, fmt.Sprintf("method %q is not supported", m.Method)}
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations annotations     `json:"annotations"`
}

type annotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
}

var chatSchema = json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"what to ask Steward, as the owner would"}},"required":["message"],"additionalProperties":false}`)

// tools lists Runner's tools and steward_chat.
func (s *Server) tools() []tool {
	var out []tool
	for _, d := range s.Runner.Tools.Declarations() {
		t, _ := s.Runner.Tools.Get(d.Name)
		read := t.Kind == steward.KindRead
		desc := d.Description
		if !read {
			desc += " (A write: from MCP it never runs directly; it waits for the owner's approval in Steward.)"
		}
		out = append(out, tool{Name: d.Name, Description: desc, InputSchema: d.Parameters,
			Annotations: annotations{ReadOnlyHint: read, DestructiveHint: !read}})
	}
	return append(out, tool{Name: chatTool, InputSchema: chatSchema,
		Description: "Send Steward a message, as its owner would, and get its answer. Writes it proposes wait for the owner's approval.",
		Annotations: annotations{DestructiveHint: true}})
}

// content is a text content block.
type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// callResult is MCP's CallToolResult.
type callResult struct {
	Content           []content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError"`
}

func text(s string, isError bool) callResult {
	return callResult{Content: []content{{Type: "text", Text: s}}, IsError: isError}
}

// call runs a read, proposes a write for the owner's approval, or chats. An unknown tool is
// a protocol error (invalid params); a refused call is a result with isError, its message
// the client's to read.
func (s *Server) call(ctx context.Context, ownerID uuid.UUID, name string, args json.RawMessage) (any, *rpcError) {
	if name == chatTool {
		var a struct {
			Message string `json:"message"`
		}
		if err := json.Unmarshal(args, &a); err != nil || a.Message == "" {
			return text("steward_chat needs a non-empty message", true), nil
		}
		v, err := s.Runner.Start(ctx, agent.Input{OwnerID: ownerID, Message: a.Message, Trigger: steward.TriggerMCP}, nil)
		if err != nil {
			return failed(ctx, err), nil
		}
		return viewResult(v), nil
	}
	t, ok := s.Runner.Tools.Get(name)
	if !ok {
		return nil, &rpcError{codeInvalidParams, fmt.Sprintf("unknown tool %q", name)}
	}
	if t.Kind == steward.KindRead {
		res, err := s.Runner.Read(ctx, ownerID, name, args)
		if err != nil {
			return failed(ctx, err), nil
		}
		return text(string(res.Output), res.IsError), nil
	}
	v, err := s.Runner.Propose(ctx, ownerID, name, args)
	if err != nil {
		return failed(ctx, err), nil
	}
	return viewResult(v), nil
}

// viewResult tells the client what became of a turn: its answer, or where its writes wait.
func viewResult(v steward.View) callResult {
	var res callResult
	switch v.Status {
	case steward.StatusSuspended:
		res = text(fmt.Sprintf("Awaiting the owner's approval: turn %s (%d pending write(s)). Nothing has run yet. The owner approves it in Steward's web app (/approvals) or with POST /v1/turns/%s/confirm.",
			v.TurnID, len(v.Pending), v.TurnID), false)
	case steward.StatusCompleted:
		res = text(v.Answer, false)
	default:
		res = text(fmt.Sprintf("Turn %s %s: %s", v.TurnID, v.Status, v.Error), true)
	}
	res.StructuredContent = map[string]any{"turn_id": v.TurnID, "status": v.Status, "pending": v.Pending}
	return res
}

// failed is a refused call as the client sees it: the error's message for Steward's own
// errors (a bad argument, the kill switch, a budget), a generic one otherwise.
func failed(ctx context.Context, err error) callResult {
	var e *steward.Error
	if errors.As(err, &e) {
		return text(e.Message, true)
	}
	zerolog.Ctx(ctx).Error().Err(err).Msg("mcp call failed")
	return text("the call failed; try again later", true)
}
