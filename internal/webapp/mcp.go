package webapp

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/stewardhq/steward/internal/mcpclient"
	"github.com/stewardhq/steward/internal/steward"
)

// Settings → MCP servers (docs/WEBAPP.md; docs/API.md, "Tools from other MCP servers"): the owner's remote MCP servers
// with their tools — status (enabled, changed, disabled) and class (read, write) — add one
// (name, URL, an optional Authorization header value, sealed and never shown), approve one
// again, delete one; per tool, treat a read-annotated tool as a write (or allow it as a read
// again) and disable or enable it, without approving anything. Each handler decodes the form, calls mcpclient.Service and renders
// (docs/ARCHITECTURE.md §7).

func (a *web) mcpPage(w http.ResponseWriter, r *http.Request) {
	a.mcpServers(w, r, http.StatusOK, "")
}

func (a *web) mcpServers(w http.ResponseWriter, r *http.Request, status int, msg string) {
	me := current(r)
	if a.d.MCPServers == nil {
		a.write(w, r, "settings", http.StatusOK, func(p *page) {
			p.raw(`<h1>MCP servers</h1><p>MCP servers are off on this server.</p>`)
		})
		return
	}
	list, err := a.d.MCPServers.List(r.Context(), me.OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "settings", status, func(p *page) {
		const add = "/settings/mcp"
		p.raw(`<p><a href="/settings">Settings</a></p><h1>MCP servers</h1>`).pageError(r, msg, add)
		if len(list) == 0 {
			p.raw(`<p>No MCP servers: Steward uses only its own tools.</p>`)
		}
		for _, s := range list {
			p.raw(`<section class="mcp-server"><h2>`).text(s.Name).raw(`</h2><p class="meta">`).text(s.URL).raw(` · approved `).text(when(s.ApprovedAt))
			if len(s.Headers) > 0 {
				p.raw(` · headers `).text(strings.Join(s.Headers, ", ")).raw(` (values hidden)`)
			}
			p.raw(`</p>`)
			if len(s.Tools) > 0 {
				p.raw(`<table class="mcp-tools"><thead><tr><th scope="col">Tool</th><th scope="col">Class</th><th scope="col">Status</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody>`)
				for _, t := range s.Tools {
					class := "read"
					if t.Kind != steward.KindRead {
						class = "write"
					}
					p.raw(`<tr class="`).text(t.Status).raw(`"><td><code>`).text(t.As).raw(`</code>`)
					if t.Description != "" {
						p.raw(`<br><span class="meta">`).text(clip(t.Description, 160)).raw(`</span>`)
					}
					p.raw(`</td><td>`).text(class).raw(`</td><td class="status">`).text(t.Status)
					if t.Status == "changed" {
						p.raw(` — disabled until you approve again`)
					}
					p.raw(`</td><td class="tool-buttons">`)
					// Only a tool the server annotated readOnlyHint can be a read; a changed
					// tool is enabled only by approving the server again.
					if t.ReadOnlyHint {
						if t.Kind == steward.KindRead {
							toolButton(p, me.csrf, s.Name, t.Name, "write", "Treat as write")
						} else {
							toolButton(p, me.csrf, s.Name, t.Name, "read", "Allow as read")
						}
					}
					switch {
					case t.Enabled:
						toolButton(p, me.csrf, s.Name, t.Name, "disable", "Disable")
					case t.Status == "disabled":
						toolButton(p, me.csrf, s.Name, t.Name, "enable", "Enable")
					}
					p.raw(`</td></tr>`)
				}
				p.raw(`</tbody></table>`)
			}
			p.raw(`<div class="buttons"><form method="post" action="/settings/mcp/`).text(s.Name).raw(`/approve">`).hidden(me.csrf).
				raw(`<button type="submit">Approve again</button></form><form method="post" action="/settings/mcp/`).text(s.Name).raw(`/delete">`).
				hidden(me.csrf).raw(`<button type="submit">Delete</button></form></div></section>`)
		}
		// A refused add keeps the name and URL typed, never the Authorization header (a secret).
		p.raw(`<h2>Add a server</h2><form method="post" action="/settings/mcp" class="mcp-form">`).formError(r, add, msg).
			raw(`<label for="mcp-name">Name (lower-case letters and digits; its tools are called mcp_&lt;name&gt;_&lt;tool&gt;)</label><input id="mcp-name" name="name" type="text" required maxlength="20"`).
			value(r, add, "name", "").raw(`><label for="mcp-url">URL (streamable HTTP)</label><input id="mcp-url" name="url" type="url" required maxlength="2000"`).
			value(r, add, "url", "").raw(`>` +
			`<label for="mcp-auth">Authorization header (optional, e.g. Bearer …)</label><input id="mcp-auth" name="authorization" type="password" autocomplete="off" maxlength="4000">`).
			hidden(me.csrf).raw(`<button type="submit">Add server</button></form>` +
			`<p class="meta">Adding connects to the server, lists its tools and approves them as they are now; a tool that changes later is disabled until you approve again.</p>`)
	})
}

func (a *web) mcpAgain(w http.ResponseWriter, r *http.Request) func(int, string) {
	return func(status int, msg string) { a.mcpServers(w, r, status, msg) }
}

func (a *web) addMCPServer(w http.ResponseWriter, r *http.Request) {
	if a.d.MCPServers == nil {
		http.NotFound(w, r)
		return
	}
	in := mcpclient.NewServer{Name: strings.TrimSpace(r.PostFormValue("name")), URL: strings.TrimSpace(r.PostFormValue("url"))}
	if auth := strings.TrimSpace(r.PostFormValue("authorization")); auth != "" {
		in.Headers = map[string]string{"Authorization": auth}
	}
	_, err := a.d.MCPServers.Add(r.Context(), current(r).OwnerID, in)
	a.done(w, r, err, "/settings/mcp", a.mcpAgain(w, r))
}

func (a *web) approveMCPServer(w http.ResponseWriter, r *http.Request) {
	if a.d.MCPServers == nil {
		http.NotFound(w, r)
		return
	}
	_, err := a.d.MCPServers.Approve(r.Context(), current(r).OwnerID, chi.URLParam(r, "name"), nil, nil)
	a.done(w, r, err, "/settings/mcp", a.mcpAgain(w, r))
}

func (a *web) deleteMCPServer(w http.ResponseWriter, r *http.Request) {
	if a.d.MCPServers == nil {
		http.NotFound(w, r)
		return
	}
	err := a.d.MCPServers.Delete(r.Context(), current(r).OwnerID, chi.URLParam(r, "name"))
	a.done(w, r, err, "/settings/mcp", a.mcpAgain(w, r))
}

// toolButton is a one-button form that sets one tool (set: write, read, disable, enable).
func toolButton(p *page, csrf, server, tool, set, label string) {
	p.raw(`<form method="post" action="/settings/mcp/`).text(server).raw(`/tool">`).hidden(csrf).
		raw(`<input type="hidden" name="tool" value="`).text(tool).raw(`"><button type="submit" name="set" value="`).text(set).raw(`">`).
		text(label).raw(`</button></form>`)
}

// setMCPTool is a tool's button: it stores the owner's choice for that tool only (a changed
// tool cannot be enabled here; the service refuses it).
func (a *web) setMCPTool(w http.ResponseWriter, r *http.Request) {
	if a.d.MCPServers == nil {
		http.NotFound(w, r)
		return
	}
	yes, no := true, false
	var set mcpclient.ToolSetting
	switch r.PostFormValue("set") {
	case "write":
		set.Write = &yes
	case "read":
		set.Write = &no
	case "disable":
		set.Enabled = &no
	case "enable":
		set.Enabled = &yes
	default:
		a.mcpServers(w, r, http.StatusBadRequest, "Choose write, read, disable or enable.")
		return
	}
	_, err := a.d.MCPServers.SetTool(r.Context(), current(r).OwnerID, chi.URLParam(r, "name"), r.PostFormValue("tool"), set)
	a.done(w, r, err, "/settings/mcp", a.mcpAgain(w, r))
}
