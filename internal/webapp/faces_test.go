package webapp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/household"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/mcpclient"
	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/sessions"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
	"github.com/stewardhq/steward/internal/undo"
	"github.com/stewardhq/steward/internal/webapp"
)

// facesEnv is the API with the web app on a fresh database, the ledger, channel and MCP
// services wired in, an owner signed in, and helpers to GET and POST as them.
type facesEnv struct {
	t     *testing.T
	o     testdb.Opened
	owner store.Owner
	srv   *httptest.Server
	c     *http.Client
	// location is the last answer's Location (a redirect's target).
	location string
}

// withServices is d with the services internal/app gives the web app that d leaves nil
// (sessions, activity, control, rules, undo, household) — for a test whose runner is not
// production's (a fixed clock, a handed-on turn); one that can use production's graph uses
// internal/apptest instead. They live over d.Store, check rules against d.Runner's tools, and
// run on its clock.
func withServices(d webapp.Deps) webapp.Deps {
	now, reg := steward.Clock(time.Now), (*tools.Registry)(nil)
	var confirmer agent.Confirmer
	if d.Runner != nil {
		now, reg, confirmer = d.Runner.Now, d.Runner.Tools, d.Runner
	}
	if d.Sessions == nil {
		d.Sessions = &sessions.Service{Store: d.Store, Door: d.Door, Now: now}
	}
	if d.Activity == nil {
		d.Activity = &activity.Service{Store: d.Store, Now: now}
	}
	if d.Control == nil {
		d.Control = &control.Service{Store: d.Store, Now: now}
	}
	if d.Rules == nil {
		d.Rules = &rules.Service{Store: d.Store, Tools: reg}
	}
	if d.Undo == nil {
		d.Undo = &undo.Service{Store: d.Store, Now: now}
	}
	if d.Household == nil {
		d.Household = &household.Service{Store: d.Store, Confirmer: confirmer, Now: now}
	}
	return d
}

// newFacesEnv builds the app on March 15th 2026; allow is what the egress guard lets through
// (the test's fake servers, which the guard knows as example.com).
func newFacesEnv(t *testing.T, rootCAs *httptest.Server, allow ...netip.AddrPort) *facesEnv {
	t.Helper()
	ctx := context.Background()
	o := testdb.Open(t, 10)
	owner, key := o.Owner(t, "alice")
	runner := agent.New(agent.Config{Store: o.Store, Tools: toolstest.Registry(), Now: func() time.Time { return time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC) }}, agent.Hooks{})
	door, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	sealer, err := secret.NewSealer([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	opts := egress.Options{Lookup: egresstest.Lookup, Allow: allow}
	if rootCAs != nil {
		opts.RootCAs = rootCAs.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	}
	h := httpapi.New(httpapi.Deps{Runner: runner, Store: o.Store, Auth: door, Logger: zerolog.Nop(),
		Web: webapp.Routes(withServices(webapp.Deps{Runner: runner, Store: o.Store, Door: door, Logger: zerolog.Nop(),
			Sessions:   &sessions.Service{Store: o.Store, Now: time.Now}, // sessions live in the database's time
			Ledger:     &ledger.Service{Store: o.Store},
			Channels:   &channel.Service{Store: o.Store, Sealer: sealer, Sender: &channel.Sender{Options: opts, Timeout: 5 * time.Second}},
			MCPServers: &mcpclient.Service{Store: o.Store, Guard: egress.NewGuard(opts), Timeout: 5 * time.Second, Sealer: sealer}}))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	e := &facesEnv{t: t, o: o, owner: owner, srv: srv,
		c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if a := signInAs(t, e.c, srv.URL, key); a.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", a.status)
	}
	return e
}

func (e *facesEnv) do(req *http.Request) (int, string) {
	e.t.Helper()
	resp, err := e.c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	e.location = resp.Header.Get("Location")
	return resp.StatusCode, string(b)
}

// redirected follows the last answer's redirect (a form that did what it was asked answers
// 303) and returns the page it leads to.
func (e *facesEnv) redirected() string {
	e.t.Helper()
	if e.location == "" {
		e.t.Fatal("the last answer was no redirect")
	}
	_, page := e.get(e.location)
	return page
}

func (e *facesEnv) get(path string) (int, string) {
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	return e.do(req)
}

func (e *facesEnv) post(path string, form url.Values) (int, string) {
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return e.do(req)
}

// csrf is the token of the page's forms.
func (e *facesEnv) csrf(path string) string {
	e.t.Helper()
	_, page := e.get(path)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		e.t.Fatalf("%s has no CSRF field: %s", path, page)
	}
	return m[1]
}

// upload posts a multipart form with the file as field statement.
func (e *facesEnv) upload(path string, fields url.Values, file string) (int, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, vs := range fields {
		for _, v := range vs {
			_ = mw.WriteField(k, v)
		}
	}
	fw, _ := mw.CreateFormFile("statement", "statement.csv")
	_, _ = io.WriteString(fw, file)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", e.srv.URL+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return e.do(req)
}

func (e *facesEnv) entries() int {
	e.t.Helper()
	n := 0
	err := e.o.Store.WithOwner(context.Background(), e.owner.ID, func(tx *store.Tx) error {
		es, err := tx.Ledger.Entries(context.Background(), time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
		n = len(es)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

const statement = "Date,Description,Amount\n" +
	"2026-02-27,Salary,2500.00\n" +
	"2026-03-01,Coffee,-3.20\n" +
	"2026-03-02,Lunch <b>bistro</b>,-12.50\n" +
	"2026-03-03,Broken amount,twelve\n" +
	"2026-03-04,Book,-20.00\n"

// TestMoneyPage: the Money page imports an uploaded statement (only with the CSRF token),
// shows the account's balance, this month's spending by category, a budget over its limit
// marked as such, and the recent transactions; a statement it cannot read comes back with
// the service's message and imports nothing.
func TestMoneyPage(t *testing.T) {
	t.Parallel()
	e := newFacesEnv(t, nil)
	status, page := e.get("/money")
	if status != http.StatusOK || !strings.Contains(page, "No accounts yet") || !strings.Contains(page, `aria-current="page">Money</a>`) {
		t.Fatalf("empty money page: %d %s", status, page)
	}
	token := e.csrf("/money")

	if status, _ := e.upload("/money/import", url.Values{"account": {"Giro"}}, statement); status != http.StatusForbidden || e.entries() != 0 {
		t.Fatalf("import without the CSRF token: %d, %d entries; want 403 and nothing imported", status, e.entries())
	}
	status, page = e.upload("/money/import", url.Values{"csrf": {token}, "account": {"Giro"}, "date_format": {""}}, "Date,Description,Amount\n03/04/2026,X,-1.00\n")
	if status != http.StatusUnprocessableEntity || !strings.Contains(page, `role="alert"`) || e.entries() != 0 {
		t.Fatalf("ambiguous statement: %d, %d entries %s; want 422 with the message and nothing imported", status, e.entries(), page)
	}
	// Imported: a redirect (a reload does not post the statement again) to the page, which
	// says once what was imported.
	status, _ = e.upload("/money/import", url.Values{"csrf": {token}, "account": {"Giro"}, "currency": {"EUR"}}, statement)
	if page = e.redirected(); status != http.StatusSeeOther || !strings.Contains(page, "Imported 4 transactions; 0 already in the book; 1 lines not read.") ||
		!strings.Contains(page, "line 5: ") {
		t.Fatalf("import: %d %s", status, page)
	}
	if _, again := e.get("/money"); strings.Contains(again, "Imported 4") {
		t.Errorf("a reload after the import says again what it imported:\n%s", again)
	}
	if e.entries() != 4 {
		t.Fatalf("%d entries after the import, want 4", e.entries())
	}
	// The same statement again: all duplicates.
	if e.upload("/money/import", url.Values{"csrf": {token}, "account": {"Giro"}}, statement); !strings.Contains(e.redirected(), "Imported 0 transactions; 4 already in the book") {
		t.Fatalf("re-import: %s", page)
	}

	err := e.o.Store.WithOwner(context.Background(), e.owner.ID, func(tx *store.Tx) error {
		_, err := tx.Ledger.SetBudget(context.Background(), steward.Budget{Category: steward.Uncategorized, MonthlyMinor: 3000, Currency: "EUR"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, page = e.get("/money")
	for _, want := range []string{
		`<tr><td data-label="Account">Giro</td><td data-label="Kind">asset</td><td class="num" data-label="Balance">2464.30 EUR</td></tr>`, // 2500 - 3.20 - 12.50 - 20
		`<h2>This month (2026-03)</h2>`,
		`<tr><td data-label="Category">Uncategorized</td><td class="num" data-label="Out">35.70 EUR</td>`, // February's salary is not this month's
		`<li class="budget over"><span class="label"><strong>Uncategorized</strong> 35.70 EUR of 30.00 EUR · <span class="overtext">over budget by 5.70 EUR</span>`,
		`<meter min="0" max="3000"`,
		`<td data-label="Date">2026-03-04</td><td data-label="Description">Book</td>`,
		`Lunch &lt;b&gt;bistro&lt;/b&gt;`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("money page lacks %s:\n%s", want, page)
		}
	}
	if strings.Index(page, "<td>2026-03-04</td>") > strings.Index(page, "<td>2026-02-27</td>") {
		t.Error("recent transactions are not newest first")
	}
}

// TestChannelsPage: Settings → Notification channels lists the owner's channels without
// their secrets, adds one, sends a test to it, and removes it; a channel the service refuses
// comes back with its message and stores nothing; without the CSRF token nothing changes.
func TestChannelsPage(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	fake := egresstest.NewTLSServer(t, func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusOK)
	})
	e := newFacesEnv(t, fake.Server, fake.Addr())
	status, page := e.get("/settings/channels")
	if status != http.StatusOK || !strings.Contains(page, "No channels") {
		t.Fatalf("empty channels page: %d %s", status, page)
	}
	if _, page := e.get("/settings"); !strings.Contains(page, `<a href="/settings/channels">Notification channels</a>`) {
		t.Fatal("settings do not link to the channels")
	}
	token := e.csrf("/settings/channels")
	ntfy := url.Values{"name": {"phone"}, "kind": {"ntfy"}, "url": {fmt.Sprintf("https://example.com:%d", fake.Addr().Port())},
		"topic": {"alerts"}, "token": {"tk_supersecret"}}

	if status, _ := e.post("/settings/channels", ntfy); status != http.StatusForbidden {
		t.Fatalf("add without the CSRF token: %d, want 403", status)
	}
	bad := url.Values{"csrf": {token}, "name": {"tg"}, "kind": {"telegram"}, "token": {"not-a-token"}, "chat_id": {"123"}}
	status, page = e.post("/settings/channels", bad)
	if status != http.StatusUnprocessableEntity || !strings.Contains(page, `<p role="alert" class="error">the Telegram bot token does not have the shape`) {
		t.Fatalf("bad channel: %d %s; want 422 with the service's message", status, page)
	}
	if strings.Contains(page, "<strong>tg</strong>") || !strings.Contains(page, "No channels") {
		t.Fatalf("a refused channel was stored: %s", page)
	}

	ntfy.Set("csrf", token)
	if status, _ := e.post("/settings/channels", ntfy); status != http.StatusSeeOther {
		t.Fatalf("add: %d, want 303", status)
	}
	_, page = e.get("/settings/channels")
	if !strings.Contains(page, "<strong>phone</strong> <span class=\"meta\">ntfy · default") || !strings.Contains(page, "secret stored") {
		t.Fatalf("channel not listed: %s", page)
	}
	if strings.Contains(page, "tk_supersecret") {
		t.Fatal("the page shows the channel's secret")
	}
	hook := url.Values{"csrf": {token}, "name": {"hook"}, "kind": {"webhook"}, "url": {fmt.Sprintf("https://example.com:%d/hook", fake.Addr().Port())}}
	if status, _ := e.post("/settings/channels", hook); status != http.StatusSeeOther {
		t.Fatalf("add hook: %d, want 303", status)
	}
	_, page = e.get("/settings/channels")
	if !strings.Contains(page, `<form method="post" action="/settings/channels/hook/default">`) ||
		strings.Contains(page, `action="/settings/channels/phone/default"`) {
		t.Fatalf("the Make default button is not on (only) the channel that is not the default: %s", page)
	}
	if status, _ := e.post("/settings/channels/hook/default", url.Values{}); status != http.StatusForbidden {
		t.Fatalf("make default without the CSRF token: %d, want 403", status)
	}
	if status, page := e.post("/settings/channels/nope/default", url.Values{"csrf": {token}}); status != http.StatusNotFound {
		t.Fatalf("make an unknown channel the default: %d %s", status, page)
	}
	if status, _ := e.post("/settings/channels/hook/default", url.Values{"csrf": {token}}); status != http.StatusSeeOther {
		t.Fatalf("make default: %d, want 303", status)
	}
	_, page = e.get("/settings/channels")
	if !strings.Contains(page, "<strong>hook</strong> <span class=\"meta\">webhook · default") || strings.Count(page, " · default") != 1 ||
		!strings.Contains(page, `action="/settings/channels/phone/default"`) {
		t.Fatalf("hook is not the only default: %s", page)
	}
	if status, _ := e.post("/settings/channels/hook/remove", url.Values{"csrf": {token}}); status != http.StatusSeeOther {
		t.Fatalf("remove hook: %d", status)
	}
	status, _ = e.post("/settings/channels/phone/test", url.Values{"csrf": {token}})
	if page = e.redirected(); status != http.StatusSeeOther || !strings.Contains(page, "A test message was sent to phone.") {
		t.Fatalf("test: %d %s", status, page)
	}
	if g, _ := got.Load().(string); g != "Bearer tk_supersecret" {
		t.Fatalf("the fake ntfy got %q", g)
	}
	if status, _ := e.post("/settings/channels/phone/remove", url.Values{"csrf": {token}}); status != http.StatusSeeOther {
		t.Fatalf("remove: %d", status)
	}
	if _, page = e.get("/settings/channels"); !strings.Contains(page, "No channels") {
		t.Fatalf("channel still listed after remove: %s", page)
	}
	if status, page := e.post("/settings/channels/phone/test", url.Values{"csrf": {token}}); status != http.StatusNotFound || !strings.Contains(page, "no longer exists") {
		t.Fatalf("test of a removed channel: %d %s", status, page)
	}
}

// TestMCPPage: Settings → MCP servers adds a server (with an Authorization header it sends
// but never shows), lists its tools with class and status, approves it again and deletes
// it; a server that does not answer comes back with the message and stores nothing.
func TestMCPPage(t *testing.T) {
	t.Parallel()
	var auth atomic.Value
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		auth.Store(r.Header.Get("Authorization"))
		s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
		schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"q": {Type: "string"}}}
		noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}
		s.AddTool(&mcp.Tool{Name: "lookup", Description: "Look a word up.", InputSchema: schema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, noop)
		s.AddTool(&mcp.Tool{Name: "send", Description: "Send a message.", InputSchema: schema}, noop)
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
	fake := egresstest.NewTLSServer(t, h.ServeHTTP)
	e := newFacesEnv(t, fake.Server, fake.Addr())
	token := e.csrf("/settings/mcp")
	add := url.Values{"name": {"dict"}, "url": {fmt.Sprintf("https://example.com:%d/mcp", fake.Addr().Port())}, "authorization": {"Bearer s3cret"}}

	if status, _ := e.post("/settings/mcp", add); status != http.StatusForbidden {
		t.Fatalf("add without the CSRF token: %d, want 403", status)
	}
	status, page := e.post("/settings/mcp", url.Values{"csrf": {token}, "name": {"Bad Name"}, "url": {"https://example.com/mcp"}})
	if status != http.StatusUnprocessableEntity || !strings.Contains(page, `role="alert"`) || !strings.Contains(page, "No MCP servers") {
		t.Fatalf("bad server: %d %s; want 422 with the message and nothing stored", status, page)
	}
	add.Set("csrf", token)
	if status, page := e.post("/settings/mcp", add); status != http.StatusSeeOther {
		t.Fatalf("add: %d %s", status, page)
	}
	if a, _ := auth.Load().(string); a != "Bearer s3cret" {
		t.Fatalf("the server got Authorization %q", a)
	}
	_, page = e.get("/settings/mcp")
	for _, want := range []string{"<h2>dict</h2>", "headers Authorization (values hidden)",
		`<tr class="enabled"><td><code>mcp_dict_lookup</code>`, `</td><td>read</td><td class="status">enabled</td>`,
		`<code>mcp_dict_send</code>`, `</td><td>write</td><td class="status">enabled</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("mcp page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, "s3cret") {
		t.Fatal("the page shows the header's value")
	}
	// Per-tool buttons: "Treat as write" only for the read-annotated lookup, "Disable" for both.
	if strings.Count(page, ">Treat as write</button>") != 1 || strings.Contains(page, "Allow as read") ||
		strings.Count(page, `value="disable">Disable</button>`) != 2 ||
		!strings.Contains(page, `<input type="hidden" name="tool" value="lookup"><button type="submit" name="set" value="write">Treat as write</button>`) {
		t.Fatalf("tool buttons:\n%s", page)
	}
	tool := func(values url.Values) int {
		t.Helper()
		status, _ := e.post("/settings/mcp/dict/tool", values)
		return status
	}
	if status := tool(url.Values{"tool": {"lookup"}, "set": {"write"}}); status != http.StatusForbidden {
		t.Fatalf("tool setting without the CSRF token: %d, want 403", status)
	}
	if _, page = e.get("/settings/mcp"); !strings.Contains(page, `</td><td>read</td><td class="status">enabled</td>`) {
		t.Fatalf("a refused form changed lookup:\n%s", page)
	}
	for _, c := range []struct {
		tool, set string
		want      int
	}{
		{"lookup", "write", http.StatusSeeOther},
		{"send", "disable", http.StatusSeeOther},
		{"nope", "disable", http.StatusNotFound},
		{"lookup", "bogus", http.StatusBadRequest},
		{"send", "read", http.StatusUnprocessableEntity}, // not annotated read-only: always a write
	} {
		if status := tool(url.Values{"csrf": {token}, "tool": {c.tool}, "set": {c.set}}); status != c.want {
			t.Errorf("set %s %s: %d, want %d", c.tool, c.set, status, c.want)
		}
	}
	_, page = e.get("/settings/mcp")
	for _, want := range []string{`<tr class="enabled"><td><code>mcp_dict_lookup</code>`, `</td><td>write</td><td class="status">enabled</td>`,
		`value="read">Allow as read</button>`, `<tr class="disabled"><td><code>mcp_dict_send</code>`, `value="enable">Enable</button>`} {
		if !strings.Contains(page, want) {
			t.Errorf("after the settings the page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, "Treat as write") {
		t.Errorf("lookup is a write but still offers Treat as write")
	}
	// A tool whose hash changed is not enabled by its button (only approving again does it).
	if err := pgxExec(t, e.o.SuperURL, `UPDATE mcp_tools SET changed_at = now() WHERE owner_id = $1 AND name = 'send'`, e.owner.ID); err != nil {
		t.Fatal(err)
	}
	status, page = e.post("/settings/mcp/dict/tool", url.Values{"csrf": {token}, "tool": {"send"}, "set": {"enable"}})
	if status != http.StatusUnprocessableEntity || !strings.Contains(page, "approve the server again") ||
		!strings.Contains(page, `<tr class="changed"><td><code>mcp_dict_send</code>`) || strings.Contains(page, `value="enable">Enable</button>`) {
		t.Fatalf("enable a changed tool: %d\n%s", status, page)
	}
	if status, _ := e.post("/settings/mcp/dict/approve", url.Values{"csrf": {token}}); status != http.StatusSeeOther {
		t.Fatalf("approve: %d", status)
	}
	// Approving again keeps the owner's choices: lookup a write, send disabled (no longer changed).
	if _, page = e.get("/settings/mcp"); !strings.Contains(page, `value="read">Allow as read</button>`) ||
		!strings.Contains(page, `<tr class="disabled"><td><code>mcp_dict_send</code>`) {
		t.Fatalf("after approving again:\n%s", page)
	}
	if status, _ := e.post("/settings/mcp/dict/delete", url.Values{"csrf": {token}}); status != http.StatusSeeOther {
		t.Fatalf("delete: %d", status)
	}
	if _, page = e.get("/settings/mcp"); !strings.Contains(page, "No MCP servers") {
		t.Fatalf("server still listed after delete: %s", page)
	}
}

// TestRoutesNeedsItsServices: the web app builds no service (docs/ARCHITECTURE.md §7); one it
// needs left nil is a programming error, named when the routes are built, not a page that
// fails later.
func TestRoutesNeedsItsServices(t *testing.T) {
	t.Parallel()
	defer func() {
		msg, _ := recover().(string)
		if want := "Deps.Sessions, Deps.Activity, Deps.Control, Deps.Rules, Deps.Undo, Deps.Household nil"; !strings.Contains(msg, want) {
			t.Fatalf("webapp.Routes without its services panicked with %q, want it to name %q", msg, want)
		}
	}()
	webapp.Routes(webapp.Deps{Logger: zerolog.Nop()})
}
