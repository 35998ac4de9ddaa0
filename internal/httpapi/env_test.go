package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/openaiapi"
	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/household"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/mcpserver"
	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
	"github.com/stewardhq/steward/internal/undo"
)

// env is the whole API on a fresh real database, served over HTTP, with one owner (alice)
// and her key, and a scripted model.
type env struct {
	t      *testing.T
	ctx    context.Context
	store  *store.Store
	door   *store.Door
	model  *scripted.Model
	srv    *httptest.Server
	owner  uuid.UUID
	key    string
	logs   *logBuffer
	runner *agent.Runner
	db     testdb.DB // newEnv's database (the superuser's URL for fault tests)
}

// newEnv builds an env whose model plays steps, on production's graph (internal/apptest),
// with at most 4 model calls a turn and suspensions lasting an hour. wrap, when not nil, wraps
// the API handler (tests use it to observe requests from the server side).
func newEnv(t *testing.T, wrap func(http.Handler) http.Handler, steps ...scripted.Step) *env {
	t.Helper()
	return newEnvConfigured(t, wrap, nil, steps...)
}

// newEnvConfigured is newEnv with configuration variables set besides its own.
func newEnvConfigured(t *testing.T, wrap func(http.Handler) http.Handler, vars map[string]string, steps ...scripted.Step) *env {
	t.Helper()
	model := scripted.New(steps...)
	config := map[string]string{"STEWARD_MAX_ITERATIONS": "4", "STEWARD_SUSPEND_TTL": "1h"}
	maps.Copy(config, vars)
	e := appEnv(t, apptest.Options{Model: model, Wrap: wrap, Env: config})
	e.model = model
	return e
}

// appEnv is the env of production's graph built with o (its log kept in the env), and alice.
func appEnv(t *testing.T, o apptest.Options) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), logs: &logBuffer{}}
	o.Log = e.logs
	app := apptest.New(t, o)
	e.store, e.door, e.runner, e.srv, e.db = app.DB.Store, app.DB.Door, app.Runner, app.Server, app.DB.DB
	owner, key := app.DB.Owner(t, "alice")
	e.owner, e.key = owner.ID, key
	return e
}

// newEnvWith is newEnv with the runner's settings and hooks changed by with, when not nil:
// its runner is the test's own, so it passes the API its services (withServices).
func newEnvWith(t *testing.T, wrap func(http.Handler) http.Handler, with func(*agent.Config, *agent.Hooks), steps ...scripted.Step) *env {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t, 10)
	s, door := db.Store, db.Door
	owner, key := db.Owner(t, "alice")
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, store: s, door: door, model: scripted.New(steps...), owner: owner.ID, key: key, logs: &logBuffer{}, db: db.DB}
	cfg := agent.Config{Model: e.model, Tools: reg, Store: s, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour, Control: &safety.Control{GlobalCost: door.GlobalCostToday}}
	var hooks agent.Hooks
	if with != nil {
		with(&cfg, &hooks)
	}
	e.runner = agent.New(cfg, hooks)
	var h http.Handler = httpapi.New(withServices(httpapi.Deps{Runner: e.runner, Store: s, Auth: door, Logger: zerolog.New(e.logs),
		MCP: &mcpserver.Server{Runner: e.runner}, OpenAI: &openaiapi.Service{Runner: e.runner, Conversations: &activity.Service{Store: s}}}))
	if wrap != nil {
		h = wrap(h)
	}
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	return e
}

// withServices is d with the services internal/app gives the API (control, rules, activity,
// undo, household), over d.Store, checking rules against d.Runner's tools, on its clock
// (without a runner: no rule's tool is known, the system clock, no household confirm).
func withServices(d httpapi.Deps) httpapi.Deps {
	now, reg := steward.Clock(time.Now), (*tools.Registry)(nil)
	var confirmer agent.Confirmer
	if d.Runner != nil {
		now, reg, confirmer = d.Runner.Now, d.Runner.Tools, d.Runner
	}
	d.Control = &control.Service{Store: d.Store, Now: now}
	d.Rules = &rules.Service{Store: d.Store, Tools: reg}
	d.Activity = &activity.Service{Store: d.Store, Now: now}
	d.Undo = &undo.Service{Store: d.Store, Now: now}
	d.Household = &household.Service{Store: d.Store, Confirmer: confirmer, Now: now}
	return d
}

// addOwner creates another owner and returns its key.
func (e *env) addOwner(name string) string {
	e.t.Helper()
	_, key, err := e.door.CreateOwner(e.ctx, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return key
}

// request is one HTTP request of a test.
type request struct {
	method, path string
	key          string // "" sends no Authorization header
	body         string
	header       map[string]string
	// chunked sends the body without a Content-Length.
	chunked bool
}

// response is what came back.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends req; a POST gets Content-Type: application/json unless the test sets one.
func (e *env) do(req request) response {
	e.t.Helper()
	return doHTTP(e.t, e.srv.URL, req)
}

func doHTTP(t testing.TB, base string, req request) response {
	t.Helper()
	var body io.Reader = strings.NewReader(req.body)
	if req.chunked {
		body = struct{ io.Reader }{body} // hides the length: sent chunked
	}
	r, err := http.NewRequest(req.method, base+req.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if req.key != "" {
		r.Header.Set("Authorization", "Bearer "+req.key)
	}
	if req.method == http.MethodPost {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range req.header {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// chat posts a message as alice and returns the TurnView, failing unless the status is 200.
func (e *env) chat(message string) steward.View {
	e.t.Helper()
	resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: jsonOf(e.t, map[string]string{"message": message})})
	return viewOf(e.t, resp)
}

// confirm posts decisions for a turn as alice.
func (e *env) confirm(turnID uuid.UUID, decisions any) response {
	e.t.Helper()
	return e.do(request{method: "POST", path: "/v1/turns/" + turnID.String() + "/confirm", key: e.key,
		body: jsonOf(e.t, map[string]any{"decisions": decisions})})
}

// approveAll approves every pending call of v as shown.
func approveAll(v steward.View) []map[string]any {
	var ds []map[string]any
	for _, p := range v.Pending {
		ds = append(ds, map[string]any{"call_id": p.CallID, "approve": true, "args_hash": p.ArgsHash})
	}
	return ds
}

// viewOf decodes a 200 TurnView response.
func viewOf(t *testing.T, resp response) steward.View {
	t.Helper()
	if resp.status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", resp.status, resp.body)
	}
	var v steward.View
	if err := json.Unmarshal(resp.body, &v); err != nil {
		t.Fatalf("decode TurnView: %v: %s", err, resp.body)
	}
	return v
}

// apiError is the error body.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// errorOf decodes an error response, checking its status and code.
func errorOf(t *testing.T, resp response, status int, code string) apiError {
	t.Helper()
	var e apiError
	if err := json.Unmarshal(resp.body, &e); err != nil {
		t.Fatalf("status %d, body not an error object: %v: %s", resp.status, err, resp.body)
	}
	if resp.status != status || e.Error.Code != code || e.Error.Message == "" {
		t.Fatalf("got %d %q (%s), want %d %q", resp.status, e.Error.Code, resp.body, status, code)
	}
	if ct := resp.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q", ct)
	}
	return e
}

// counts returns alice's turns and conversations.
func (e *env) counts() (turns, conversations int) {
	e.t.Helper()
	err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		ts, err := tx.Turns.List(e.ctx, "", 1000)
		if err != nil {
			return err
		}
		cs, err := tx.Conversations.List(e.ctx, 1000)
		turns, conversations = len(ts), len(cs)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return turns, conversations
}

// tasks returns alice's tasks.
func (e *env) tasks() []steward.Task {
	e.t.Helper()
	var out []steward.Task
	err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		var err error
		out, err = tx.Tasks.ListTasks(e.ctx, "all")
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// turns lists alice's turns, newest first, straight from the store.
func (e *env) turns() []steward.Turn {
	e.t.Helper()
	var out []steward.Turn
	err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		var err error
		out, err = tx.Turns.List(e.ctx, "", 1000)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// turnStatus reads a turn's status straight from the store.
func (e *env) turnStatus(id uuid.UUID) steward.Status {
	e.t.Helper()
	var st steward.Status
	err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		t, err := tx.Turns.Get(e.ctx, id)
		st = t.Status
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	typ  string
	data json.RawMessage
}

// parseSSE splits a text/event-stream body into events, checking the framing.
func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var events []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.typ == "" || cur.data == nil {
				t.Fatalf("incomplete event %+v in stream:\n%s", cur, body)
			}
			events = append(events, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if cur.data != nil {
				t.Fatalf("event with two data lines:\n%s", body)
			}
			cur.data = json.RawMessage(strings.TrimPrefix(line, "data: "))
			if !json.Valid(cur.data) {
				t.Fatalf("event data is not JSON: %s", cur.data)
			}
		default:
			t.Fatalf("unexpected stream line %q", line)
		}
	}
	if cur.typ != "" {
		t.Fatalf("stream ends mid-event:\n%s", body)
	}
	return events
}

// logBuffer collects log lines; safe for concurrent writes.
type logBuffer struct{ testdb.Buffer }

// lines returns the log lines decoded.
func (l *logBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		out = append(out, m)
	}
	return out
}

// text is a scripted final answer.
func text(s string) scripted.Step { return scripted.Reply(scripted.Text(s)) }

// createTask is a scripted batch asking for one create_task.
func createTask(id, title string) scripted.Step {
	return scripted.Reply(scripted.Calls(scripted.Call(id, "create_task", `{"title":"`+title+`"}`)))
}
