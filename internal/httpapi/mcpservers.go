package httpapi

import (
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/stewardhq/steward/internal/mcpclient"
	"github.com/stewardhq/steward/internal/steward"
)

// mcpServers returns the MCP client service, or answers 404 when none is configured.
func (a *api) mcpServers(w http.ResponseWriter, r *http.Request) (*mcpclient.Service, bool) {
	if a.d.MCPServers == nil {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "MCP servers are not configured on this server"))
		return nil, false
	}
	return a.d.MCPServers, true
}

// addMCPServer registers a remote MCP server and approves its tools:
// POST /v1/mcp/servers {name, url, headers?, write_tools?, disabled_tools?} → 201 {server}.
func (a *api) addMCPServer(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.mcpServers(w, r)
	if !ok {
		return
	}
	var body mcpclient.NewServer
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	srv, err := svc.Add(r.Context(), principal(r.Context()).OwnerID, body)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, srv)
}

// listMCPServers lists the owner's MCP servers and their tools (header names only):
// GET /v1/mcp/servers → {servers}.
func (a *api) listMCPServers(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.mcpServers(w, r)
	if !ok {
		return
	}
	servers, err := svc.List(r.Context(), principal(r.Context()).OwnerID)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"servers": orEmptySlice(servers)})
}

// approveMCPServer lists a server's tools again and approves them as they are now
// (re-enabling changed tools): POST /v1/mcp/servers/{name}/approve with an optional body
// {write_tools?, disabled_tools?} → 200 {server}.
func (a *api) approveMCPServer(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.mcpServers(w, r)
	if !ok {
		return
	}
	var body struct {
		WriteTools    []string `json:"write_tools"`
		DisabledTools []string `json:"disabled_tools"`
	}
	if r.ContentLength != 0 {
		if err := decode(r, &body); err != nil {
			fail(w, r, err)
			return
		}
	}
	srv, err := svc.Approve(r.Context(), principal(r.Context()).OwnerID, chi.URLParam(r, "name"), body.WriteTools, body.DisabledTools)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, srv)
}

// deleteMCPServer deletes a server and its tools: DELETE /v1/mcp/servers/{name} → 204.
func (a *api) deleteMCPServer(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.mcpServers(w, r)
	if !ok {
		return
	}
	if err := svc.Delete(r.Context(), principal(r.Context()).OwnerID, chi.URLParam(r, "name")); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// setMCPTool stores the owner's choice for one tool, asking no server and approving nothing:
// PATCH /v1/mcp/servers/{name}/tools/{tool} {write?, enabled?} → 200 {tool}. A tool whose
// hash changed cannot be enabled here (409: approve the server again).
func (a *api) setMCPTool(w http.ResponseWriter, r *http.Request) {
	svc, ok := a.mcpServers(w, r)
	if !ok {
		return
	}
	tool := chi.URLParam(r, "tool")
	if r.URL.RawPath != "" {
		// chi routed on the escaped path: a tool name may hold characters a path escapes.
		t, err := url.PathUnescape(tool)
		if err != nil {
			fail(w, r, errorf(http.StatusBadRequest, steward.CodeInvalid, "the tool name in the path is not validly escaped"))
			return
		}
		tool = t
	}
	var body mcpclient.ToolSetting
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	if body.Write == nil && body.Enabled == nil {
		fail(w, r, errorf(http.StatusBadRequest, steward.CodeInvalid, `give "write" and/or "enabled" (booleans)`))
		return
	}
	t, err := svc.SetTool(r.Context(), principal(r.Context()).OwnerID, chi.URLParam(r, "name"), tool, body)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}
