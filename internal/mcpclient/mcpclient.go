// Package mcpclient is the service of the owner's remote MCP servers: it
// registers a server (through the egress guard, with the official go-sdk's streamable HTTP
// client), approves its tools by the SHA-256 of each one's name, description and input
// schema, lists and deletes servers, and turns the approved tools into tools.Tool values
// for the agent (Runner.OwnerTools) as mcp_<server>_<tool>.
//
// Fail-safe classification: a tool is a read only when the server's readOnlyHint said so
// at approval and the owner did not mark it a write; everything else is an External write
// that goes through the gate. Every call lists the server's tools again first: a tool whose
// hash changed since the approval is disabled (a rug-pull defence) until the owner approves
// the server again. Results are outside data (Untrusted: they taint the turn) and every call
// is egress (docs/ARCHITECTURE.md §3, §8). Calls run outside any transaction and time out.
package mcpclient

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/secret"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
)

// Defaults of the service's limits.
const (
	DefaultTimeout        = 20 * time.Second
	DefaultMaxTools       = 100
	DefaultMaxSchemaBytes = 16 << 10
	maxServers            = 20
	maxHeaders            = 10
	maxDescription        = 2000
	maxOutputBytes        = 64 << 10
)

// Service manages an owner's MCP servers and calls their tools.
type Service struct {
	Store *store.Store
	// Guard checks every server URL and connection (SSRF; STEWARD_EGRESS_ALLOW exempts an
	// operator's private hosts).
	Guard *egress.Guard
	// Timeout bounds a registration's listing and every tool call (STEWARD_MCP_TIMEOUT);
	// zero means DefaultTimeout.
	Timeout time.Duration
	// MaxTools caps a server's tool list; zero means DefaultMaxTools.
	MaxTools int
	// MaxSchemaBytes caps one tool's input schema; zero means DefaultMaxSchemaBytes.
	MaxSchemaBytes int
	// Sealer seals header values at rest (STEWARD_SECRET_KEY): they are credentials.
	Sealer *secret.Sealer
	// Now is the clock (app.App.Now); nil means time.Now.
	Now steward.Clock
}

// NewServer is a server to register: POST /v1/mcp/servers.
type NewServer struct {
	Name    string            `json:"name"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	// WriteTools are tools (by the server's names) the owner treats as writes whatever the
	// server's readOnlyHint says; DisabledTools are never offered to the model.
	WriteTools    []string `json:"write_tools,omitempty"`
	DisabledTools []string `json:"disabled_tools,omitempty"`
}

// Server is what the owner sees of a server: header names, never their values.
type Server struct {
	Name       string    `json:"name"`
	URL        string    `json:"url"`
	Headers    []string  `json:"headers"`
	CreatedAt  time.Time `json:"created_at"`
	ApprovedAt time.Time `json:"approved_at"`
	Tools      []Tool    `json:"tools"`
}

// Tool is an approved tool as the owner sees it.
type Tool struct {
	Name string `json:"name"`
	// As is the name the model calls it by.
	As          string           `json:"as"`
	Description string           `json:"description"`
	Kind        steward.ToolKind `json:"kind"`
	// Status is "enabled", "disabled" (by the owner) or "changed" (its hash no longer
	// matches the approval: disabled until the server is approved again).
	Status    string     `json:"status"`
	Hash      string     `json:"hash"`
	ChangedAt *time.Time `json:"changed_at,omitempty"`
	// ReadOnlyHint is what the server annotated at approval; Kind is "write" for such a
	// tool when the owner overrode it (ToolSetting.Write).
	ReadOnlyHint bool `json:"read_only_hint"`
	// Enabled is the owner's choice (ToolSetting.Enabled); a changed tool is disabled
	// whatever it says.
	Enabled bool `json:"enabled"`
}

var validServerName = regexp.MustCompile(`^[a-z0-9]{1,20}$`)
var validHeaderName = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

func (s *Service) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// Add registers a server: it connects, lists the tools and stores the server with each
// tool's hash as the owner's approval. Nothing is stored when any check fails.
func (s *Service) Add(ctx context.Context, ownerID uuid.UUID, in NewServer) (Server, error) {
	if !validServerName.MatchString(in.Name) {
		return Server{}, steward.Errorf(steward.CodeInvalid, "name must be 1 to 20 lowercase letters or digits (the model calls its tools mcp_<name>_<tool>)")
	}
	if err := s.checkInput(in); err != nil {
		return Server{}, err
	}
	var exists bool
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		all, err := tx.MCPServers.List(ctx)
		if err != nil {
			return err
		}
		if len(all) >= maxServers {
			return steward.Errorf(steward.CodeInvalid, "at most %d MCP servers per owner", maxServers)
		}
		exists = slices.ContainsFunc(all, func(m store.MCPServer) bool { return m.Name == in.Name })
		return nil
	})
	if err != nil {
		return Server{}, err
	}
	if exists {
		return Server{}, steward.Errorf(steward.CodeConflict, "an MCP server named %q exists; delete it first, or approve it again with POST /v1/mcp/servers/%s/approve", in.Name, in.Name)
	}
	headers, err := s.sealHeaders(ownerID, in.Headers)
	if err != nil {
		return Server{}, err
	}
	return s.approve(ctx, ownerID, store.MCPServer{Name: in.Name, URL: in.URL, Headers: headers, CreatedAt: s.Now.Now()}, in.WriteTools, in.DisabledTools, false)
}

// Approve lists a registered server's tools again and stores their hashes as the owner's
// new approval (re-enabling tools whose hash changed). writeTools and disabledTools, when
// given, replace the owner's earlier choices; nil keeps them.
func (s *Service) Approve(ctx context.Context, ownerID uuid.UUID, name string, writeTools, disabledTools []string) (Server, error) {
	var srv store.MCPServer
	var old []store.MCPTool
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		if srv, err = tx.MCPServers.Get(ctx, name); err != nil {
			return err
		}
		old, err = tx.MCPServers.Tools(ctx)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return Server{}, steward.Errorf(steward.CodeNotFound, "no MCP server named %q", name)
	}
	if err != nil {
		return Server{}, err
	}
	if writeTools == nil || disabledTools == nil {
		var w, d []string
		for _, t := range old {
			if t.Server != name {
				continue
			}
			if t.WriteOverride {
				w = append(w, t.Name)
			}
			if !t.Enabled {
				d = append(d, t.Name)
			}
		}
		if writeTools == nil {
			writeTools = w
		}
		if disabledTools == nil {
			disabledTools = d
		}
	}
	return s.approve(ctx, ownerID, srv, writeTools, disabledTools, true)
}

// ToolSetting is the owner's choice for one tool: PATCH /v1/mcp/servers/{name}/tools/{tool}.
// A nil field keeps the stored value.
type ToolSetting struct {
	// Write true treats the tool as a write whatever its readOnlyHint says; false lets a tool
	// the server annotated readOnlyHint be a read again (any other tool is always a write).
	Write *bool `json:"write,omitempty"`
	// Enabled false hides the tool from the model; true offers it again, except a tool whose
	// hash changed, which only a re-approval of the server enables.
	Enabled *bool `json:"enabled,omitempty"`
}

// SetTool stores the owner's choice for one of a server's tools, taking effect on the next
// turn. It asks no server and never approves anything: a tool whose hash changed stays
// disabled until the owner approves the server again (enabling it here is a conflict).
func (s *Service) SetTool(ctx context.Context, ownerID uuid.UUID, server, tool string, set ToolSetting) (Tool, error) {
	if set.Write == nil && set.Enabled == nil {
		return Tool{}, steward.Errorf(steward.CodeInvalid, "give write and/or enabled")
	}
	var out store.MCPTool
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if _, err := tx.MCPServers.Get(ctx, server); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return steward.Errorf(steward.CodeNotFound, "no MCP server named %q", server)
			}
			return err
		}
		all, err := tx.MCPServers.Tools(ctx)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(all, func(t store.MCPTool) bool { return t.Server == server && t.Name == tool })
		if i < 0 {
			return steward.Errorf(steward.CodeNotFound, "MCP server %q has no approved tool %q", server, tool)
		}
		cur := all[i]
		if set.Write != nil && !*set.Write && !cur.ReadOnly {
			return steward.Errorf(steward.CodeInvalid, "tool %q of MCP server %q is not annotated readOnlyHint, so it is always a write", tool, server)
		}
		if set.Enabled != nil && *set.Enabled && cur.ChangedAt != nil {
			return changedConflict(server, tool)
		}
		out, err = tx.MCPServers.SetTool(ctx, server, tool, set.Write, set.Enabled)
		if errors.Is(err, store.ErrNotFound) {
			// It changed (or went) since it was read: the query refuses to enable a changed tool.
			return changedConflict(server, tool)
		}
		return err
	})
	if err != nil {
		return Tool{}, err
	}
	return view(store.MCPServer{Name: server}, []store.MCPTool{out}).Tools[0], nil
}

func changedConflict(server, tool string) error {
	return steward.Errorf(steward.CodeConflict, "tool %q of MCP server %q changed since you approved it; review it and approve the server again (POST /v1/mcp/servers/%s/approve) to enable it", tool, server, server)
}

// checkInput checks a new server's URL (the SSRF guard) and headers.
func (s *Service) checkInput(in NewServer) error {
	if len(in.URL) > 2048 {
		return steward.Errorf(steward.CodeInvalid, "url is longer than 2048 characters")
	}
	if _, err := s.Guard.CheckURL(in.URL); err != nil {
		return steward.Errorf(steward.CodeInvalid, "url is refused: %v", err)
	}
	if len(in.Headers) > maxHeaders {
		return steward.Errorf(steward.CodeInvalid, "at most %d headers", maxHeaders)
	}
	for k, v := range in.Headers {
		if !validHeaderName.MatchString(k) {
			return steward.Errorf(steward.CodeInvalid, "header name %q is not valid", k)
		}
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Content-Length", "Content-Type", "Accept", "Connection", "Transfer-Encoding", "Mcp-Session-Id", "Mcp-Protocol-Version":
			return steward.Errorf(steward.CodeInvalid, "header %q is set by Steward itself", k)
		}
		if len(v) > 4096 || strings.ContainsAny(v, "\r\n\x00") {
			return steward.Errorf(steward.CodeInvalid, "the value of header %q must be at most 4096 characters on one line", k)
		}
	}
	return nil
}

// approve lists srv's tools (outside any transaction), checks them and stores them as
// approved, all or nothing.
func (s *Service) approve(ctx context.Context, ownerID uuid.UUID, srv store.MCPServer, writeTools, disabledTools []string, replace bool) (Server, error) {
	listed, err := s.list(ctx, ownerID, srv)
	if err != nil {
		return Server{}, err
	}
	byName := map[string]bool{}
	for _, t := range listed {
		byName[t.Name] = true
	}
	for _, n := range slices.Concat(writeTools, disabledTools) {
		if !byName[n] {
			return Server{}, steward.Errorf(steward.CodeInvalid, "the server has no tool %q", n)
		}
	}
	approved := make([]store.MCPTool, 0, len(listed))
	as := map[string]string{}
	for _, t := range listed {
		st, err := s.toStore(srv.Name, t)
		if err != nil {
			return Server{}, err
		}
		name := ModelName(srv.Name, t.Name)
		if prev, dup := as[name]; dup {
			return Server{}, steward.Errorf(steward.CodeInvalid, "tools %q and %q would both be called %s", prev, t.Name, name)
		}
		as[name] = t.Name
		st.WriteOverride = slices.Contains(writeTools, t.Name)
		st.Enabled = !slices.Contains(disabledTools, t.Name)
		approved = append(approved, st)
	}
	srv.ApprovedAt = s.Now.Now()
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if !replace {
			if _, err := tx.MCPServers.Get(ctx, srv.Name); err == nil {
				return steward.Errorf(steward.CodeConflict, "an MCP server named %q exists", srv.Name)
			}
		}
		return tx.MCPServers.Approve(ctx, srv, approved)
	})
	if err != nil {
		return Server{}, err
	}
	return view(srv, approved), nil
}

// toStore checks a listed tool (name, schema size, a usable schema) and computes its hash.
func (s *Service) toStore(server string, t *mcp.Tool) (store.MCPTool, error) {
	maxSchema := s.MaxSchemaBytes
	if maxSchema <= 0 {
		maxSchema = DefaultMaxSchemaBytes
	}
	if t.Name == "" || len(t.Name) > 128 {
		return store.MCPTool{}, steward.Errorf(steward.CodeInvalid, "the server lists a tool with an empty or over-long name")
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || string(schema) == "null" {
		return store.MCPTool{}, steward.Errorf(steward.CodeInvalid, "tool %q has no usable input schema", t.Name)
	}
	if len(schema) > maxSchema {
		return store.MCPTool{}, steward.Errorf(steward.CodeInvalid, "the input schema of tool %q is %d bytes; the limit is %d", t.Name, len(schema), maxSchema)
	}
	if len(t.Description) > maxDescription {
		return store.MCPTool{}, steward.Errorf(steward.CodeInvalid, "the description of tool %q is %d bytes; the limit is %d", t.Name, len(t.Description), maxDescription)
	}
	if err := tools.NewRaw(ModelName(server, t.Name), "x", steward.KindRead, schema, func(context.Context, tools.Env, json.RawMessage) (any, error) { return nil, nil }).Err(); err != nil {
		return store.MCPTool{}, steward.Errorf(steward.CodeInvalid, "tool %q: %v", t.Name, err)
	}
	return store.MCPTool{Server: server, Name: t.Name, Hash: Hash(t.Name, t.Description, schema), Description: t.Description,
		InputSchema: schema, ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint}, nil
}

// Hash is the approval hash of a tool: SHA-256 over its name, description and input schema
// (re-encoded with sorted keys, so the same schema always hashes the same).
func Hash(name, description string, schema json.RawMessage) string {
	var v any
	if json.Unmarshal(schema, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			schema = b
		}
	}
	b, _ := json.Marshal([]any{name, description, json.RawMessage(schema)})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

var notNameChar = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// ModelName is the name the model calls a server's tool by: mcp_<server>_<tool>, the tool's
// name cut to the characters every provider accepts and to 64 characters in all (a cut name
// ends in a hash of the full one, so two long names stay apart).
func ModelName(server, tool string) string {
	n := "mcp_" + server + "_" + notNameChar.ReplaceAllString(tool, "_")
	if len(n) > 64 || n != "mcp_"+server+"_"+tool {
		sum := sha256.Sum256([]byte(tool))
		if len(n) > 55 {
			n = n[:55]
		}
		n += "_" + hex.EncodeToString(sum[:])[:8]
	}
	return n
}

// sealHeaders seals each header value for the owner (base64 of the sealed bytes); without
// STEWARD_SECRET_KEY, headers are refused rather than stored in the clear.
func (s *Service) sealHeaders(ownerID uuid.UUID, headers map[string]string) (map[string]string, error) {
	if len(headers) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(headers))
	for k, v := range headers {
		sealed, err := s.Sealer.Seal([]byte(v), ownerID[:])
		if errors.Is(err, secret.ErrNoKey) {
			return nil, steward.Errorf(steward.CodeInvalid, "header values are credentials and are stored encrypted: the operator must set STEWARD_SECRET_KEY first")
		}
		if err != nil {
			return nil, err
		}
		out[k] = base64.StdEncoding.EncodeToString(sealed)
	}
	return out, nil
}

// openHeaders opens the owner's sealed header values.
func (s *Service) openHeaders(ownerID uuid.UUID, headers map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(headers))
	for k, v := range headers {
		sealed, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", k, err)
		}
		plain, err := s.Sealer.Open(sealed, ownerID[:])
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", k, err)
		}
		out[k] = string(plain)
	}
	return out, nil
}

// session connects to srv through the guard with srv's headers (opened for the owner); the
// caller closes it.
func (s *Service) session(ctx context.Context, ownerID uuid.UUID, srv store.MCPServer) (*mcp.ClientSession, error) {
	hc := s.Guard.Client()
	hc.Timeout = s.timeout()
	if len(srv.Headers) > 0 {
		headers, err := s.openHeaders(ownerID, srv.Headers)
		if err != nil {
			return nil, err
		}
		hc.Transport = headerTransport{base: hc.Transport, headers: headers}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "steward", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
}

// headerTransport adds the owner's headers (a token) to every request to the server.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

// list connects to srv and lists its tools, at most MaxTools, within the timeout.
func (s *Service) list(ctx context.Context, ownerID uuid.UUID, srv store.MCPServer) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	cs, err := s.session(ctx, ownerID, srv)
	if err != nil {
		return nil, unreachable(srv.URL, err)
	}
	defer cs.Close()
	return s.listOn(ctx, cs, srv.URL)
}

func (s *Service) listOn(ctx context.Context, cs *mcp.ClientSession, url string) ([]*mcp.Tool, error) {
	maxTools := s.MaxTools
	if maxTools <= 0 {
		maxTools = DefaultMaxTools
	}
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, unreachable(url, err)
		}
		if len(out) == maxTools {
			return nil, steward.Errorf(steward.CodeInvalid, "the server lists more than %d tools; Steward takes at most %d", maxTools, maxTools)
		}
		out = append(out, t)
	}
	return out, nil
}

// unreachable is the owner's error for a server that could not be listed.
func unreachable(url string, err error) error {
	if errors.Is(err, egress.ErrBlocked) {
		return steward.Errorf(steward.CodeInvalid, "%s is refused: %v", url, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return steward.Errorf(steward.CodeInvalid, "%s did not answer as an MCP server in time", url)
	}
	return steward.Errorf(steward.CodeInvalid, "%s does not answer as an MCP server (streamable HTTP): %v", url, err)
}

// List returns the owner's servers with their tools; header values are never shown.
func (s *Service) List(ctx context.Context, ownerID uuid.UUID) ([]Server, error) {
	var servers []store.MCPServer
	var all []store.MCPTool
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		if servers, err = tx.MCPServers.List(ctx); err != nil {
			return err
		}
		all, err = tx.MCPServers.Tools(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Server, len(servers))
	for i, srv := range servers {
		var ts []store.MCPTool
		for _, t := range all {
			if t.Server == srv.Name {
				ts = append(ts, t)
			}
		}
		out[i] = view(srv, ts)
	}
	return out, nil
}

// Delete deletes a server and its tools.
func (s *Service) Delete(ctx context.Context, ownerID uuid.UUID, name string) error {
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error { return tx.MCPServers.Delete(ctx, name) })
	if errors.Is(err, store.ErrNotFound) {
		return steward.Errorf(steward.CodeNotFound, "no MCP server named %q", name)
	}
	return err
}

// view is the owner's view of a server and its tools.
func view(srv store.MCPServer, ts []store.MCPTool) Server {
	v := Server{Name: srv.Name, URL: srv.URL, Headers: slices.Sorted(maps.Keys(srv.Headers)), CreatedAt: srv.CreatedAt,
		ApprovedAt: srv.ApprovedAt, Tools: make([]Tool, len(ts))}
	if v.Headers == nil {
		v.Headers = []string{}
	}
	for i, t := range ts {
		status := "enabled"
		switch {
		case t.ChangedAt != nil:
			status = "changed"
		case !t.Enabled:
			status = "disabled"
		}
		v.Tools[i] = Tool{Name: t.Name, As: ModelName(srv.Name, t.Name), Description: t.Description, Kind: kind(t), Status: status, Hash: t.Hash, ChangedAt: t.ChangedAt,
			ReadOnlyHint: t.ReadOnly, Enabled: t.Enabled}
	}
	return v
}

// kind is a tool's class, fail-safe: a read only when the server said readOnlyHint at
// approval and the owner did not mark it a write.
func kind(t store.MCPTool) steward.ToolKind {
	if t.ReadOnly && !t.WriteOverride {
		return steward.KindRead
	}
	return steward.KindWrite
}
