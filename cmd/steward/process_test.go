package main

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// Steward as a process (docs/ARCHITECTURE.md §2, "A turn outlives its process"): these tests
// run `steward serve` as a child process — this test binary, started again as the command
// (TestMain) — and stop it as an operator or a machine does: SIGTERM, SIGKILL.

// TestMain runs the command itself when the test starts it as a child process.
func TestMain(m *testing.M) {
	if os.Getenv("STEWARD_TEST_AS_COMMAND") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// child is one `steward serve` process.
type child struct {
	cmd    *exec.Cmd
	base   string
	exited chan error
	out    *testdb.Buffer
}

// serve starts `steward serve` with env on a free port and waits until it listens.
func serve(t *testing.T, env map[string]string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env = []string{"STEWARD_TEST_AS_COMMAND=1", "STEWARD_ADDR=127.0.0.1:0", "GORACE=atexit_sleep_ms=0",
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out := &testdb.Buffer{}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, exited: make(chan error, 1), out: out}
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		addr := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
		for sc.Scan() {
			if m := addr.FindStringSubmatch(sc.Text()); m != nil {
				listening <- m[1]
			}
		}
		c.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	select {
	case c.base = <-listening:
	case err := <-c.exited:
		t.Fatalf("steward serve exited before listening: %v\n%s", err, out.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("steward serve did not listen within 30 s\n%s", out.String())
	}
	return c
}

// do sends a request with key and decodes the JSON answer.
func (c *child) do(t *testing.T, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, map[string]any{"transport": err.Error()}
	}
	defer resp.Body.Close()
	var v map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &v)
	return resp.StatusCode, v
}

// fakeGemini is the Gemini REST API: each request is answered by the current handler.
type fakeGemini struct {
	mu      sync.Mutex
	answer  func(w http.ResponseWriter, r *http.Request)
	entered chan struct{} // a request arrived
	srv     *egresstest.Server
}

func newFakeGemini(t *testing.T) *fakeGemini {
	g := &fakeGemini{entered: make(chan struct{}, 16)}
	g.srv = egresstest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		g.entered <- struct{}{}
		g.mu.Lock()
		answer := g.answer
		g.mu.Unlock()
		answer(w, r)
	})
	return g
}

func (g *fakeGemini) set(answer func(w http.ResponseWriter, r *http.Request)) {
	g.mu.Lock()
	g.answer = answer
	g.mu.Unlock()
}

// hang answers nothing until the request is abandoned.
func hang(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// reply answers with parts (JSON).
func reply(parts string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"candidates":[{"content":{"role":"model","parts":%s},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3,"totalTokenCount":13}}`, parts)
	}
}

// processEnv is a fresh database with an owner, and the environment of `steward serve` on it
// with the fake Gemini.
func processEnv(t *testing.T, g *fakeGemini) (env map[string]string, key string, d testdb.DB) {
	t.Helper()
	d = testdb.New(t)
	door, err := store.OpenDoor(t.Context(), d.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	_, key, err = door.CreateOwner(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	env = map[string]string{"APP_DATABASE_URL": d.AppURL, "DOOR_DATABASE_URL": d.DoorURL,
		"GEMINI_API_KEY": "test-key", "GEMINI_BASE_URL": g.srv.URL, "STEWARD_SECRET_KEY": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}
	return env, key, d
}

// turnOf waits up to 20 s for turn id to reach status, read through c.
func (c *child) turnOf(t *testing.T, key, id string, status string) map[string]any {
	t.Helper()
	var v map[string]any
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var code int
		if code, v = c.do(t, "GET", "/v1/turns/"+id, key, ""); code == 200 && v["status"] == status {
			return v
		}
	}
	t.Fatalf("turn %s: %v, want %s", id, v, status)
	return nil
}

// TestServeSIGTERMSavesRunningTurns: SIGTERM while a chat waits on its model. New requests
// are refused, the chat's answer comes back within the grace period with its turn saved
// continuing, the process exits 0 in time, and the next process takes the turn to its end.
func TestServeSIGTERMSavesRunningTurns(t *testing.T) {
	t.Parallel()
	g := newFakeGemini(t)
	env, key, _ := processEnv(t, g)
	env["STEWARD_SHUTDOWN_GRACE"] = "4s"
	g.set(hang)
	a := serve(t, env)
	chat := make(chan map[string]any, 1)
	go func() {
		_, v := a.do(t, "POST", "/v1/chat", key, `{"message":"what is on today"}`)
		chat <- v
	}()
	<-g.entered
	stopped := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	select {
	case v = <-chat:
	case <-time.After(6 * time.Second):
		t.Fatalf("the chat did not answer within 6 s of SIGTERM\n%s", a.out.String())
	}
	if v["status"] != "continuing" {
		t.Fatalf("the chat answered %v, want its turn continuing", v)
	}
	if code, _ := a.do(t, "GET", "/healthz", "", ""); code != 0 {
		t.Errorf("a new request during the shutdown got %d, want it refused", code)
	}
	select {
	case err := <-a.exited:
		if err != nil {
			t.Fatalf("steward serve exited with %v\n%s", err, a.out.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("steward serve still runs 5 s after SIGTERM (grace 4 s)")
	}
	if took := time.Since(stopped); took > 4500*time.Millisecond {
		t.Errorf("shutting down took %v, grace 4 s", took)
	}

	g.set(reply(`[{"text":"Nothing but the dentist."}]`))
	b := serve(t, env)
	done := b.turnOf(t, key, v["turn_id"].(string), "completed")
	if done["answer"] != "Nothing but the dentist." {
		t.Fatalf("the next process finished the turn with %v", done)
	}
}

// TestServeSIGKILLMidTurn: the process dies while a chat waits on its model. The turn shows
// failed in words: once its lease lapsed (a 2 s lease, the next process started after it), or
// — under the default 15-minute lease — as soon as the next process starts on the same host,
// which sees the turn's holder is gone.
func TestServeSIGKILLMidTurn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		lease string        // STEWARD_LEASE; "" is the default
		wait  time.Duration // before the next process starts
	}{
		{"the lease lapses", "2s", 2500 * time.Millisecond},
		{"a restart on the same host", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := newFakeGemini(t)
			env, key, _ := processEnv(t, g)
			if c.lease != "" {
				env["STEWARD_LEASE"] = c.lease
			}
			g.set(hang)
			a := serve(t, env)
			id := a.streamChat(t, key)
			<-g.entered
			if err := a.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-a.exited
			time.Sleep(c.wait)
			b := serve(t, env)
			v := b.turnOf(t, key, id, "failed")
			if !strings.Contains(fmt.Sprint(v["error"]), "the process running this turn stopped") {
				t.Fatalf("turn after the kill: %v", v)
			}
		})
	}
}

// streamChat starts a streamed chat as key and returns its turn's id once the stream names it
// (the chat goes on in the background; "" fails the test).
func (c *child) streamChat(t *testing.T, key string) string {
	t.Helper()
	started := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("POST", c.base+"/v1/chat", strings.NewReader(`{"message":"hello"}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			started <- ""
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if id := regexp.MustCompile(`"turn_id":"([0-9a-f-]{36})"`).FindStringSubmatch(sc.Text()); id != nil {
				started <- id[1]
				return
			}
		}
		started <- ""
	}()
	id := <-started
	if id == "" {
		t.Fatal("the chat's stream named no turn")
	}
	return id
}

// TestServeSIGKILLMidExternalWrite: the process dies while an approved write to the world (an
// MCP server's tool) is in flight. Approving again is refused in words; once the claim's
// lease lapsed the next process's sweep recovers the turn: the call is journaled unknown and
// never sent again, and the model is told so.
func TestServeSIGKILLMidExternalWrite(t *testing.T) {
	t.Parallel()
	var calls int32
	var mu sync.Mutex
	sending, release := make(chan struct{}, 4), make(chan struct{})
	mcpSrv := egresstest.NewTLSServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "outbox", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "send", Description: "Send a message.", InputSchema: &jsonschema.Schema{Type: "object"}},
			func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				mu.Lock()
				calls++
				mu.Unlock()
				sending <- struct{}{}
				select { // the process dies before an answer
				case <-ctx.Done():
				case <-release:
				}
				return &mcp.CallToolResult{}, nil
			})
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true}).ServeHTTP)
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for the call
	certFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: mcpSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	g := newFakeGemini(t)
	env, key, d := processEnv(t, g)
	const lease = 10 * time.Second // long enough for the next process to start within it
	env["STEWARD_LEASE"] = lease.String()
	env["STEWARD_EGRESS_ALLOW"] = mcpSrv.Addr().String()
	env["SSL_CERT_FILE"] = certFile
	a := serve(t, env)
	if code, v := a.do(t, "POST", "/v1/mcp/servers", key, fmt.Sprintf(`{"name":"outbox","url":"https://%s/mcp"}`, mcpSrv.Addr())); code != 201 {
		t.Fatalf("add MCP server: %d %v", code, v)
	}
	if code, v := a.do(t, "POST", "/v1/mcp/servers/outbox/approve", key, ""); code != 200 {
		t.Fatalf("approve MCP server: %d %v", code, v)
	}
	g.set(reply(`[{"functionCall":{"name":"mcp_outbox_send","args":{"to":"bob"}}}]`))
	code, v := a.do(t, "POST", "/v1/chat", key, `{"message":"tell bob"}`)
	if code != 200 || v["status"] != "suspended" {
		t.Fatalf("chat: %d %v, want suspended", code, v)
	}
	id := v["turn_id"].(string)
	pending := v["pending"].([]any)[0].(map[string]any)
	approve := fmt.Sprintf(`{"decisions":[{"call_id":%q,"approve":true,"args_hash":%q}]}`, pending["call_id"], pending["args_hash"])
	go a.do(t, "POST", "/v1/turns/"+id+"/confirm", key, approve)
	<-sending
	claimed := time.Now()
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.exited

	g.set(reply(`[{"text":"I could not confirm the message reached bob."}]`))
	b := serve(t, env) // within the dead confirm's lease
	if took := time.Since(claimed); took > lease-time.Second {
		t.Fatalf("the next process took %v to start: past the dead confirm's lease (%v)", took, lease)
	}
	code, v = b.do(t, "POST", "/v1/turns/"+id+"/confirm", key, approve)
	if code != http.StatusConflict || !strings.Contains(fmt.Sprint(v), "not waiting for decisions") {
		t.Fatalf("approving again: %d %v, want 409 in words", code, v)
	}
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-b.exited
	time.Sleep(time.Until(claimed.Add(lease + 500*time.Millisecond))) // the dead confirm's lease lapses
	c := serve(t, env)
	done := c.turnOf(t, key, id, "completed")
	if done["answer"] != "I could not confirm the message reached bob." {
		t.Fatalf("recovered turn: %v", done)
	}
	conn := testdb.Connect(t, d.SuperURL)
	var status string
	if err := conn.QueryRow(t.Context(), `SELECT status FROM tool_calls WHERE turn_id = $1`, id).Scan(&status); err != nil || status != "unknown" {
		t.Fatalf("the interrupted call is %q (%v), want unknown", status, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Fatalf("the MCP tool was called %d times, want once", calls)
	}
}
