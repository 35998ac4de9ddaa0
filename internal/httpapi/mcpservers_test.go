package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/mcpclient"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestMCPServersAPI: POST /v1/mcp/servers registers a go-sdk MCP server (201) and GET shows
// it with its header's name, never the value; a URL that is not MCP and a private URL are
// 422 with nothing stored; approve and delete answer 200/204, then 404.
func TestMCPServersAPI(t *testing.T) {
	t.Parallel()
	mcpSrv := egresstest.NewTLSServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "ping", Description: "Ping.", InputSchema: &jsonschema.Schema{Type: "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true}).ServeHTTP)
	html := egresstest.NewTLSServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html></html>")) })
	db := testdb.Open(t, 4)
	_, key := db.Owner(t, "alice")
	guard := egress.NewGuard(egress.Options{Lookup: egresstest.Lookup, Allow: []netip.AddrPort{mcpSrv.Addr(), html.Addr()},
		RootCAs: mcpSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
	sealer, err := secret.NewSealer([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Store: db.Store, Auth: db.Door, Logger: zerolog.Nop(),
		MCPServers: &mcpclient.Service{Store: db.Store, Guard: guard, Sealer: sealer}}))
	t.Cleanup(srv.Close)
	hdr := map[string]string{"Content-Type": "application/json"}
	post := func(body string) response {
		return doHTTP(t, srv.URL, request{method: "POST", path: "/v1/mcp/servers", key: key, body: body, header: hdr})
	}
	list := func() string {
		r := doHTTP(t, srv.URL, request{method: "GET", path: "/v1/mcp/servers", key: key})
		if r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		return string(r.body)
	}

	for _, c := range []struct{ body, want string }{
		{fmt.Sprintf(`{"name":"web","url":"https://example.com:%d/"}`, html.Addr().Port()), "does not answer as an MCP server"},
		{`{"name":"intra","url":"https://10.0.0.1/mcp"}`, "refused"},
	} {
		if r := post(c.body); r.status != 422 || !strings.Contains(string(r.body), c.want) {
			t.Fatalf("POST %s: %d %s, want 422 …%s…", c.body, r.status, r.body, c.want)
		}
	}
	if r := post(`{"name":"x","url":`); r.status != 400 {
		t.Fatalf("malformed body: %d %s", r.status, r.body)
	}
	if got := list(); got != `{"servers":[]}`+"\n" && got != `{"servers":[]}` {
		t.Fatalf("after refusals: %s", got)
	}

	r := post(fmt.Sprintf(`{"name":"tools","url":"https://example.com:%d/mcp","headers":{"Authorization":"Bearer s3cret"}}`, mcpSrv.Addr().Port()))
	if r.status != 201 || !strings.Contains(string(r.body), `"as":"mcp_tools_ping"`) || strings.Contains(string(r.body), "s3cret") {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
	if got := list(); strings.Contains(got, "s3cret") || !strings.Contains(got, `"headers":["Authorization"]`) || !strings.Contains(got, `"status":"enabled"`) {
		t.Fatalf("GET shows %s", got)
	}
	if r := doHTTP(t, srv.URL, request{method: "POST", path: "/v1/mcp/servers/tools/approve", key: key}); r.status != 200 {
		t.Fatalf("approve: %d %s", r.status, r.body)
	}
	if r := doHTTP(t, srv.URL, request{method: "DELETE", path: "/v1/mcp/servers/tools", key: key}); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	for _, req := range []request{{method: "DELETE", path: "/v1/mcp/servers/tools", key: key}, {method: "POST", path: "/v1/mcp/servers/tools/approve", key: key}} {
		if r := doHTTP(t, srv.URL, req); r.status != 404 {
			t.Fatalf("%s %s after delete: %d %s", req.method, req.path, r.status, r.body)
		}
	}
}

// TestMCPToolSettingAPI: PATCH /v1/mcp/servers/{name}/tools/{tool} marks a read-annotated
// tool a write and disables a tool (200, shown by GET); an unknown server or tool is 404,
// a bad body 400, the wrong content type 415, another owner 404.
func TestMCPToolSettingAPI(t *testing.T) {
	t.Parallel()
	mcpSrv := egresstest.NewTLSServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
		noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}
		s.AddTool(&mcp.Tool{Name: "ping", Description: "Ping.", InputSchema: &jsonschema.Schema{Type: "object"},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, noop)
		s.AddTool(&mcp.Tool{Name: "a.b c", Description: "Odd name.", InputSchema: &jsonschema.Schema{Type: "object"}}, noop)
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true}).ServeHTTP)
	db := testdb.Open(t, 4)
	_, key := db.Owner(t, "alice")
	_, otherKey := db.Owner(t, "bob")
	guard := egress.NewGuard(egress.Options{Lookup: egresstest.Lookup, Allow: []netip.AddrPort{mcpSrv.Addr()},
		RootCAs: mcpSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Store: db.Store, Auth: db.Door, Logger: zerolog.Nop(),
		MCPServers: &mcpclient.Service{Store: db.Store, Guard: guard}}))
	t.Cleanup(srv.Close)
	hdr := map[string]string{"Content-Type": "application/json"}
	if r := doHTTP(t, srv.URL, request{method: "POST", path: "/v1/mcp/servers", key: key, header: hdr,
		body: fmt.Sprintf(`{"name":"tools","url":"https://example.com:%d/mcp"}`, mcpSrv.Addr().Port())}); r.status != 201 {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
	patch := func(key, path, body string) response {
		return doHTTP(t, srv.URL, request{method: "PATCH", path: path, key: key, body: body, header: hdr})
	}
	r := patch(key, "/v1/mcp/servers/tools/tools/ping", `{"write":true}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"kind":"write"`) || !strings.Contains(string(r.body), `"read_only_hint":true`) {
		t.Fatalf("PATCH write: %d %s", r.status, r.body)
	}
	if r := patch(key, "/v1/mcp/servers/tools/tools/a.b%20c", `{"enabled":false}`); r.status != 200 || !strings.Contains(string(r.body), `"status":"disabled"`) {
		t.Fatalf("PATCH disable: %d %s", r.status, r.body)
	}
	if r := patch(key, "/v1/mcp/servers/tools/tools/a.b%20c", `{"write":false}`); r.status != 422 || !strings.Contains(string(r.body), "always a write") {
		t.Fatalf("PATCH read on a write: %d %s", r.status, r.body)
	}
	got := doHTTP(t, srv.URL, request{method: "GET", path: "/v1/mcp/servers", key: key})
	if !strings.Contains(string(got.body), `"name":"ping","as":"mcp_tools_ping","description":"Ping.","kind":"write","status":"enabled"`) ||
		!strings.Contains(string(got.body), `"kind":"write","status":"disabled"`) {
		t.Fatalf("GET after PATCH: %s", got.body)
	}
	for _, c := range []struct {
		key, path, body string
		want            int
	}{
		{key, "/v1/mcp/servers/nope/tools/ping", `{"write":true}`, 404},
		{key, "/v1/mcp/servers/tools/tools/nope", `{"write":true}`, 404},
		{otherKey, "/v1/mcp/servers/tools/tools/ping", `{"write":false}`, 404},
		{key, "/v1/mcp/servers/tools/tools/ping", `{}`, 400},
		{key, "/v1/mcp/servers/tools/tools/ping", `{"write":"yes"}`, 400},
		{key, "/v1/mcp/servers/tools/tools/ping", `{"write":true,"hash":"x"}`, 400},
		{key, "/v1/mcp/servers/tools/tools/ping", `{"write":false`, 400},
	} {
		if r := patch(c.key, c.path, c.body); r.status != c.want {
			t.Errorf("PATCH %s %s: %d %s, want %d", c.path, c.body, r.status, r.body, c.want)
		}
	}
	if r := doHTTP(t, srv.URL, request{method: "PATCH", path: "/v1/mcp/servers/tools/tools/ping", key: key, body: `{"write":false}`}); r.status != 415 {
		t.Errorf("PATCH without JSON content type: %d", r.status)
	}
	if got2 := doHTTP(t, srv.URL, request{method: "GET", path: "/v1/mcp/servers", key: key}); string(got2.body) != string(got.body) {
		t.Fatalf("refused PATCHes changed something:\n%s\n%s", got.body, got2.body)
	}
}
