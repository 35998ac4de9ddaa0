package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
)

// mountMCP serves the MCP face (internal/mcpserver) at POST /mcp behind the same bearer-key
// auth as /v1: the owner is the key's, never anything in the request. The server is
// stateless (no GET stream, no DELETE), so chi answers 405 with Allow: POST to the other
// methods. Without Deps.MCP the route answers 404.
func (a *api) mountMCP(r chi.Router) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "no such route"))
	})
	if a.d.MCP != nil {
		h = a.d.MCP.Handler(func(r *http.Request) uuid.UUID { return principal(r.Context()).OwnerID }).ServeHTTP
	}
	r.With(a.authenticate, limitBody(a.d.MaxBodyBytes)).Post("/mcp", h)
}
