package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stewardhq/steward/internal/steward"
)

// bearer adds an API key to every request of an MCP client.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpClient connects the official go-sdk client to /mcp with key.
func (e *env) mcpClient(key string) (*mcp.ClientSession, error) {
	e.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(e.ctx, &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key}}}, nil)
	if err == nil {
		e.t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

// callTool calls a tool as alice and returns the result's text.
func (e *env) callTool(name string, args any) (*mcp.CallToolResult, string) {
	e.t.Helper()
	s, err := e.mcpClient(e.key)
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	res, err := s.CallTool(e.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		e.t.Fatalf("call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return res, b.String()
}

// turnOf is the turn id of a proposed write's result.
func turnOf(t *testing.T, res *mcp.CallToolResult) uuid.UUID {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var sc struct {
		TurnID uuid.UUID `json:"turn_id"`
	}
	if err := json.Unmarshal(b, &sc); err != nil || sc.TurnID == uuid.Nil {
		t.Fatalf("no turn_id in structured content %s", b)
	}
	return sc.TurnID
}

func TestMCPListsToolsWithSchemas(t *testing.T) {
	e := newEnv(t, nil)
	s, err := e.mcpClient(e.key)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	res, err := s.ListTools(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		tools[tl.Name] = tl
	}
	for name, read := range map[string]bool{"get_current_time": true, "list_tasks": true, "create_task": false, "steward_chat": false} {
		tl := tools[name]
		if tl == nil {
			t.Fatalf("tools/list has no %s: %v", name, res.Tools)
		}
		schema, _ := json.Marshal(tl.InputSchema)
		if !strings.Contains(string(schema), `"type":"object"`) {
			t.Errorf("%s input schema = %s", name, schema)
		}
		if tl.Annotations == nil || tl.Annotations.ReadOnlyHint != read {
			t.Errorf("%s annotations = %+v, want readOnlyHint %v", name, tl.Annotations, read)
		}
	}
	if schema, _ := json.Marshal(tools["create_task"].InputSchema); !strings.Contains(string(schema), `"title"`) {
		t.Errorf("create_task schema lacks title: %s", schema)
	}
}

func TestMCPReadAnswersAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	res, text := e.callTool("get_current_time", map[string]any{})
	if res.IsError || !strings.Contains(text, "20") {
		t.Fatalf("get_current_time = %q (isError %v)", text, res.IsError)
	}
	res, text = e.callTool("list_tasks", map[string]any{})
	if res.IsError || !strings.Contains(text, "tasks") {
		t.Fatalf("list_tasks = %q (isError %v)", text, res.IsError)
	}
	if turns, _ := e.counts(); turns != 0 {
		t.Errorf("a read made %d turns", turns)
	}
}

func TestMCPWriteAwaitsTheOwnersApproval(t *testing.T) {
	e := newEnv(t, nil)
	res, text := e.callTool("create_task", map[string]any{"title": "buy bread"})
	id := turnOf(t, res)
	if res.IsError || !strings.Contains(text, "Awaiting the owner's approval") || !strings.Contains(text, id.String()) {
		t.Fatalf("create_task = %q (isError %v)", text, res.IsError)
	}
	if got := e.tasks(); len(got) != 0 {
		t.Fatalf("the MCP call itself created %v", got)
	}
	v := viewOf(t, e.do(request{method: "GET", path: "/v1/turns/" + id.String(), key: e.key}))
	if v.Status != steward.StatusSuspended || v.Trigger != steward.TriggerMCP || len(v.Pending) != 1 || v.Pending[0].Tool != "create_task" {
		t.Fatalf("turn = %+v", v)
	}
	if resp := e.confirm(id, approveAll(v)); resp.status != http.StatusOK {
		t.Fatalf("confirm: %d %s", resp.status, resp.body)
	}
	if got := e.tasks(); len(got) != 1 || got[0].Title != "buy bread" {
		t.Fatalf("after approval tasks = %+v", got)
	}
	if done := viewOf(t, e.do(request{method: "GET", path: "/v1/turns/" + id.String(), key: e.key})); done.Status != steward.StatusCompleted {
		t.Errorf("turn after approval = %s", done.Status)
	}
	if resp := e.confirm(id, approveAll(v)); resp.status == http.StatusOK {
		t.Errorf("second confirm: %d %s", resp.status, resp.body)
	}
	if got := e.tasks(); len(got) != 1 {
		t.Fatalf("after a second confirm tasks = %+v", got)
	}
}

// A standing allow rule does not run a write an MCP client asked for (docs/ARCHITECTURE.md §3).
func TestMCPWriteIgnoresStandingRules(t *testing.T) {
	e := newEnv(t, nil)
	if resp := e.do(request{method: "POST", path: "/v1/rules", key: e.key, body: `{"tool":"create_task","effect":"allow"}`}); resp.status != http.StatusCreated && resp.status != http.StatusOK {
		t.Fatalf("create rule: %d %s", resp.status, resp.body)
	}
	res, text := e.callTool("create_task", map[string]any{"title": "buy bread"})
	if got := e.tasks(); len(got) != 0 {
		t.Fatalf("an allow rule ran the MCP write: %v (%q)", got, text)
	}
	if v := viewOf(t, e.do(request{method: "GET", path: "/v1/turns/" + turnOf(t, res).String(), key: e.key})); v.Status != steward.StatusSuspended {
		t.Errorf("turn = %s, want suspended", v.Status)
	}
}

func TestMCPNeedsAnAPIKey(t *testing.T) {
	e := newEnv(t, nil)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_task","arguments":{"title":"x"}}}`
	for _, key := range []string{"", "stw_wrong"} {
		resp := e.do(request{method: "POST", path: "/mcp", key: key, body: call,
			header: map[string]string{"Accept": "application/json, text/event-stream"}})
		if resp.status != http.StatusUnauthorized || !strings.HasPrefix(resp.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("key %q: %d %s", key, resp.status, resp.body)
		}
	}
	if _, err := e.mcpClient("stw_wrong"); err == nil {
		t.Error("the go-sdk client connected with a wrong key")
	}
	if turns, _ := e.counts(); turns != 0 || len(e.tasks()) != 0 {
		t.Errorf("unauthenticated calls left %d turns, %d tasks", turns, len(e.tasks()))
	}
	if resp := e.do(request{method: "GET", path: "/mcp", key: e.key}); resp.status != http.StatusMethodNotAllowed {
		t.Errorf("GET /mcp = %d, want 405", resp.status)
	}
}

func TestMCPOwnersAreSeparate(t *testing.T) {
	e := newEnv(t, nil)
	bob := e.addOwner("bob")
	res, _ := e.callTool("create_task", map[string]any{"title": "alice's"})
	id := turnOf(t, res)
	errorOf(t, e.do(request{method: "GET", path: "/v1/turns/" + id.String(), key: bob}), http.StatusNotFound, "not_found")
	errorOf(t, e.do(request{method: "POST", path: "/v1/turns/" + id.String() + "/confirm", key: bob,
		body: `{"decisions":[{"call_id":"x","approve":true,"args_hash":"x"}]}`}), http.StatusNotFound, "not_found")
	if resp := e.do(request{method: "GET", path: "/v1/approvals", key: bob}); strings.Contains(string(resp.body), id.String()) {
		t.Errorf("bob's approvals show alice's turn: %s", resp.body)
	}
	if len(e.tasks()) != 0 {
		t.Error("bob's confirm ran alice's write")
	}
	// bob's own MCP session sees his (empty) list, not alice's pending turn.
	s, err := e.mcpClient(bob)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(e.ctx, &mcp.CallToolParams{Name: "create_task", Arguments: map[string]any{"title": "bob's"}}); err != nil {
		t.Fatal(err)
	}
	if turns, _ := e.counts(); turns != 1 {
		t.Errorf("alice has %d turns, want 1 (bob's proposal went to bob)", turns)
	}
}

func TestMCPBadArguments(t *testing.T) {
	e := newEnv(t, nil)
	res, text := e.callTool("create_task", map[string]any{"title": ""})
	if !res.IsError || !strings.Contains(text, "title") {
		t.Errorf("create_task with an empty title = %q (isError %v)", text, res.IsError)
	}
	res, text = e.callTool("create_task", map[string]any{"name": "x"})
	if !res.IsError || !strings.Contains(text, "title") {
		t.Errorf("create_task without a title = %q (isError %v)", text, res.IsError)
	}
	res, text = e.callTool("list_tasks", map[string]any{"status": 5})
	if !res.IsError || !strings.Contains(text, "status") {
		t.Errorf("list_tasks with a number status = %q (isError %v)", text, res.IsError)
	}
	s, err := e.mcpClient(e.key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(e.ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("unknown tool: %v", err)
	}
	if turns, _ := e.counts(); turns != 0 || len(e.tasks()) != 0 {
		t.Errorf("bad arguments left %d turns, %d tasks", turns, len(e.tasks()))
	}
	resp := e.do(request{method: "POST", path: "/mcp", key: e.key, body: `{not json`,
		header: map[string]string{"Accept": "application/json, text/event-stream"}})
	if resp.status != http.StatusBadRequest || !strings.Contains(string(resp.body), "malformed payload") {
		t.Errorf("malformed body = %d %s", resp.status, resp.body)
	}
}
