package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/mcpserver"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// face is the MCP handler over the production runner of a test app, served for one owner
// (the door's authentication is httpapi's, tested there).
type face struct {
	*apptest.Env
	owner uuid.UUID
	url   string
}

// TestMCPServer runs the face's tests over one app (its model scripted for steward_chat),
// an owner each.
func TestMCPServer(t *testing.T) {
	model := scripted.New(
		scripted.Reply(scripted.Text("You have no tasks today.")),
		scripted.Reply(scripted.Calls(scripted.Call("c1", "create_task", `{"title":"call the plumber"}`))))
	e := apptest.New(t, apptest.Options{Model: model})
	for name, test := range map[string]func(*testing.T, face){
		"InitializeNamesSteward":      initializeNamesSteward,
		"ToolsListSaysWhatEachToolIs": toolsListSaysWhatEachToolIs,
		"ToolsCallReadsRunWritesWait": toolsCallReadsRunWritesWait,
		"ProtocolMistakes":            protocolMistakes,
		"FailedCallHidesInternals":    failedCallHidesInternals,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newFace(t, e, name, name == "FailedCallHidesInternals"))
		})
	}
	// steward_chat alone uses the scripted model, in its order.
	t.Run("StewardChat", func(t *testing.T) { stewardChat(t, newFace(t, e, "chat", false), model) })
}

// newFace serves the MCP face of e's runner for a new owner, or — unbound — for no owner at
// all (a request Steward could not tie to one).
func newFace(t *testing.T, e *apptest.Env, name string, unbound bool) face {
	t.Helper()
	o, _ := e.DB.Owner(t, name)
	f := face{Env: e, owner: o.ID}
	id := o.ID
	if unbound {
		id = uuid.Nil
	}
	srv := httptest.NewServer((&mcpserver.Server{Runner: e.App.Runner, Version: "test-1"}).Handler(func(*http.Request) uuid.UUID { return id }))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// rpcReply is a JSON-RPC response.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// post sends one JSON-RPC body as a stateless streamable-HTTP client does and returns the
// status and body.
func (f face) post(t *testing.T, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// rpc calls method with params and returns the decoded reply.
func (f face) rpc(t *testing.T, method string, params any) rpcReply {
	t.Helper()
	p, _ := json.Marshal(params)
	status, body := f.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":%q,"params":%s}`, method, p))
	if status != http.StatusOK {
		t.Fatalf("%s: %d %s", method, status, body)
	}
	var r rpcReply
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%s: reply %s: %v", method, body, err)
	}
	if string(r.ID) != "7" {
		t.Errorf("%s: reply id %s; want the request's 7", method, r.ID)
	}
	return r
}

// toolResult is a tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Structured struct {
		TurnID  uuid.UUID `json:"turn_id"`
		Status  string    `json:"status"`
		Pending []any     `json:"pending"`
	} `json:"structuredContent"`
	IsError bool `json:"isError"`
}

func (f face) call(t *testing.T, name string, args any) (toolResult, string) {
	t.Helper()
	r := f.rpc(t, "tools/call", map[string]any{"name": name, "arguments": args})
	if r.Error != nil {
		t.Fatalf("tools/call %s: error %+v", name, r.Error)
	}
	var res toolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("tools/call %s: %s: %v", name, r.Result, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		text.WriteString(c.Text)
	}
	return res, text.String()
}

func (f face) tasks(t *testing.T) []steward.Task {
	t.Helper()
	var out []steward.Task
	err := f.DB.Store.WithOwner(context.Background(), f.owner, func(tx *store.Tx) error {
		var err error
		out, err = tx.Tasks.ListTasks(context.Background(), "")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// initializeNamesSteward: initialize answers with the server's name and version and the
// instructions that say writes wait for the owner.
func initializeNamesSteward(t *testing.T, f face) {
	r := f.rpc(t, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	var init struct {
		ServerInfo struct {
			Name, Version string
		} `json:"serverInfo"`
		Instructions string         `json:"instructions"`
		Capabilities map[string]any `json:"capabilities"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &init) != nil {
		t.Fatalf("initialize = %s, %+v", r.Result, r.Error)
	}
	if init.ServerInfo.Name != "steward" || init.ServerInfo.Version != "test-1" || !strings.Contains(init.Instructions, "Writes never run from here") ||
		init.Capabilities["tools"] == nil {
		t.Errorf("initialize = %+v; want steward test-1 with tools and the instructions about writes", init)
	}
}

// toolsListSaysWhatEachToolIs: tools/list offers every tool of the runner's registry and
// steward_chat; a read is marked read-only and not destructive, a write destructive and its
// description says it waits for the owner; each schema is the tool's own.
func toolsListSaysWhatEachToolIs(t *testing.T, f face) {
	r := f.rpc(t, "tools/list", map[string]any{})
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations struct {
				ReadOnlyHint    bool  `json:"readOnlyHint"`
				DestructiveHint *bool `json:"destructiveHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &list) != nil {
		t.Fatalf("tools/list = %s, %+v", r.Result, r.Error)
	}
	registry := f.App.Runner.Tools
	if len(list.Tools) != len(registry.Names())+1 {
		t.Errorf("tools/list has %d tools; want the registry's %d and steward_chat", len(list.Tools), len(registry.Names()))
	}
	seen := map[string]bool{}
	const waits = "it waits for the owner's approval in Steward"
	for _, tl := range list.Tools {
		seen[tl.Name] = true
		if tl.Annotations.DestructiveHint == nil {
			t.Errorf("%s has no destructiveHint: a client would assume the worst or the best", tl.Name)
			continue
		}
		if tl.Name == "steward_chat" {
			if !*tl.Annotations.DestructiveHint || tl.Annotations.ReadOnlyHint {
				t.Errorf("steward_chat annotations %+v; want destructive (it may propose writes)", tl.Annotations)
			}
			continue
		}
		tool, ok := registry.Get(tl.Name)
		if !ok {
			t.Errorf("tools/list offers %s, which the registry does not hold", tl.Name)
			continue
		}
		read := tool.Kind == steward.KindRead
		if tl.Annotations.ReadOnlyHint != read || *tl.Annotations.DestructiveHint == read {
			t.Errorf("%s (a %s) annotated readOnly %v destructive %v", tl.Name, tool.Kind, tl.Annotations.ReadOnlyHint, *tl.Annotations.DestructiveHint)
		}
		if strings.Contains(tl.Description, waits) == read || !strings.HasPrefix(tl.Description, tool.Description) {
			t.Errorf("%s (a %s) described %q", tl.Name, tool.Kind, tl.Description)
		}
		var got, want any
		if json.Unmarshal(tl.InputSchema, &got) != nil || json.Unmarshal(tool.Parameters(), &want) != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s's input schema %s; want the tool's %s", tl.Name, tl.InputSchema, tool.Parameters())
		}
	}
	for _, name := range append(registry.Names(), "steward_chat") {
		if !seen[name] {
			t.Errorf("tools/list lacks %s", name)
		}
	}
}

// toolsCallReadsRunWritesWait: a read answers at once with its output; a write makes a
// suspended turn, trigger mcp, and runs nothing; a read's invalid arguments are a result the
// client reads (isError), not a protocol failure.
func toolsCallReadsRunWritesWait(t *testing.T, f face) {
	res, text := f.call(t, "list_tasks", map[string]any{})
	if res.IsError || !strings.Contains(text, `"tasks"`) {
		t.Errorf("list_tasks = %q (isError %v)", text, res.IsError)
	}
	res, text = f.call(t, "create_task", map[string]any{"title": "water the plants"})
	if res.IsError || res.Structured.Status != string(steward.StatusSuspended) || len(res.Structured.Pending) != 1 ||
		!strings.Contains(text, "Awaiting the owner's approval: turn "+res.Structured.TurnID.String()) {
		t.Fatalf("create_task = %q, %+v; want a suspended turn awaiting the owner", text, res.Structured)
	}
	if got := f.tasks(t); len(got) != 0 {
		t.Errorf("a write from MCP ran: %+v", got)
	}
	var v steward.Turn
	err := f.DB.Store.WithOwner(context.Background(), f.owner, func(tx *store.Tx) error {
		var err error
		v, err = tx.Turns.Get(context.Background(), res.Structured.TurnID)
		return err
	})
	if err != nil || v.Trigger != steward.TriggerMCP || v.Status != steward.StatusSuspended {
		t.Errorf("the proposed turn = %+v, %v; want suspended, trigger mcp", v, err)
	}
	res, text = f.call(t, "list_tasks", map[string]any{"status": 5})
	if !res.IsError || !strings.Contains(text, "status") {
		t.Errorf("list_tasks with a number for status = %q (isError %v); want an error naming status", text, res.IsError)
	}
	res, text = f.call(t, "create_task", map[string]any{"title": ""})
	if !res.IsError || !strings.Contains(text, "title") {
		t.Errorf("create_task with an empty title = %q (isError %v); want an error naming title", text, res.IsError)
	}
}

// stewardChat: steward_chat runs a turn as the owner and answers with the model's words;
// a turn whose writes wait says so; an empty message is refused with a reason.
func stewardChat(t *testing.T, f face, model *scripted.Model) {
	res, text := f.call(t, "steward_chat", map[string]any{"message": "what is on today?"})
	if res.IsError || text != "You have no tasks today." || res.Structured.Status != string(steward.StatusCompleted) {
		t.Errorf("steward_chat = %q, %+v; want the model's answer, completed", text, res.Structured)
	}
	res, text = f.call(t, "steward_chat", map[string]any{"message": "remind me to call the plumber"})
	if res.IsError || res.Structured.Status != string(steward.StatusSuspended) || !strings.Contains(text, "Awaiting the owner's approval") {
		t.Errorf("steward_chat proposing a write = %q, %+v; want it awaiting the owner", text, res.Structured)
	}
	if got := f.tasks(t); len(got) != 0 {
		t.Errorf("steward_chat's write ran unapproved: %+v", got)
	}
	res, text = f.call(t, "steward_chat", map[string]any{"message": ""})
	if !res.IsError || !strings.Contains(text, "non-empty message") {
		t.Errorf("steward_chat with no message = %q (isError %v)", text, res.IsError)
	}
	if model.Remaining() != 0 {
		t.Errorf("%d scripted replies unused", model.Remaining())
	}
}

// protocolMistakes: what a client gets wrong is answered in the protocol's terms — an
// unknown method or tool is a JSON-RPC error naming it, a malformed body a 400, a
// notification 202 with no body — and none makes a turn.
func protocolMistakes(t *testing.T, f face) {
	if status, body := f.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/destroy","params":{}}`); status != http.StatusBadRequest ||
		!strings.Contains(string(body), "tools/destroy") {
		t.Errorf("an unknown method = %d %s; want 400 naming it", status, body)
	}
	if r := f.rpc(t, "tools/call", map[string]any{"name": "no_such_tool", "arguments": map[string]any{}}); r.Error == nil ||
		!strings.Contains(r.Error.Message, "no_such_tool") {
		t.Errorf("an unknown tool = %s, %+v; want an error naming it", r.Result, r.Error)
	}
	if status, body := f.post(t, `{"jsonrpc":"2.0","id":1,`); status != http.StatusBadRequest {
		t.Errorf("a malformed body = %d %s; want 400", status, body)
	}
	if status, body := f.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted || len(bytes.TrimSpace(body)) != 0 {
		t.Errorf("a notification = %d %q; want 202 and no body", status, body)
	}
	if turns := f.turns(t); turns != 0 {
		t.Errorf("the mistakes made %d turns", turns)
	}
}

// failedCallHidesInternals: a call that fails inside Steward (here an owner the
// request could not be tied to) is an error result with a generic message, not the
// internal error's words; Steward's own refusals keep theirs.
func failedCallHidesInternals(t *testing.T, f face) {
	res, text := f.call(t, "list_tasks", map[string]any{})
	if !res.IsError || text != "the call failed; try again later" {
		t.Errorf("a read failing inside = %q (isError %v); want the generic message", text, res.IsError)
	}
	res, text = f.call(t, "create_task", map[string]any{"title": "x"})
	if !res.IsError || text != "the call failed; try again later" {
		t.Errorf("a write failing inside = %q (isError %v); want the generic message", text, res.IsError)
	}
}

// turns counts the owner's turns.
func (f face) turns(t *testing.T) int {
	t.Helper()
	var n int
	err := f.DB.Store.WithOwner(context.Background(), f.owner, func(tx *store.Tx) error {
		ts, err := tx.Turns.List(context.Background(), "", 100)
		n = len(ts)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
