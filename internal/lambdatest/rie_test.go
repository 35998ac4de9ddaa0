//go:build unix

package lambdatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm/gemini/geminifake"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// rieInstall is how to get the emulator; `make rie` (a prerequisite of `make test`) does it.
const rieInstall = "go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// TestTwoProcessesUnderTheLambdaEmulator is the turn across two Lambda functions: the built
// functions/chat bootstrap, under the AWS Lambda Runtime Interface Emulator, gets a real
// Function URL event and suspends the turn on its write; the functions/confirm bootstrap, in
// a second emulator and process, gets an HTTP API v2 event approving it, and the write happens
// exactly once. Both talk to the real genai SDK against a fake Gemini, and to a real database.
func TestTwoProcessesUnderTheLambdaEmulator(t *testing.T) {
	t.Parallel()
	rie := findRIE(t)
	ctx := context.Background()
	db := testdb.New(t)
	door, err := store.OpenDoor(ctx, db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	owner, key, err := door.CreateOwner(ctx, "lambda")
	door.Close()
	if err != nil {
		t.Fatal(err)
	}
	gemini := newFakeGemini(t)
	env := []string{
		"APP_DATABASE_URL=" + db.AppURL,
		"DOOR_DATABASE_URL=" + db.DoorURL,
		"GEMINI_API_KEY=test",
		"GEMINI_BASE_URL=" + gemini.srv.URL,
		"STEWARD_LOG_LEVEL=debug",
		"AWS_LAMBDA_FUNCTION_TIMEOUT=120",
	}
	bins := buildBootstraps(t, runtime.GOARCH, "functions/chat", "functions/confirm")
	checkInitError(t, "chat", bins["functions/chat"])
	checkInitError(t, "confirm", bins["functions/confirm"])
	chat := startRIE(t, rie, "chat", bins["functions/chat"], env)
	confirm := startRIE(t, rie, "confirm", bins["functions/confirm"], env)

	// 1. chat, through a Function URL event: the turn suspends on create_task.
	status, body := chat.invokeFunctionURL(t, chatEvent(key, "application/json", "remind me to buy milk"))
	var suspended steward.View
	if status != http.StatusOK || json.Unmarshal(body, &suspended) != nil {
		t.Fatalf("chat: %d %s", status, body)
	}
	if suspended.Status != steward.StatusSuspended || len(suspended.Pending) != 1 || suspended.Pending[0].Tool != "create_task" {
		t.Fatalf("chat: want suspended with one pending create_task, got %s", body)
	}
	pending := suspended.Pending[0]
	if n := countTasks(t, db.AppURL, owner.ID); n != 0 {
		t.Fatalf("%d tasks exist before the owner approved", n)
	}

	// 2. confirm, in another process, through an HTTP API v2 event: approve → completed.
	turn := suspended.TurnID.String()
	decision, _ := json.Marshal(map[string]any{"decisions": []map[string]any{
		{"call_id": pending.CallID, "approve": true, "args_hash": pending.ArgsHash},
	}})
	status, body = confirm.invokeHTTPAPI(t, events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "POST /v1/turns/{id}/confirm", RawPath: "/v1/turns/" + turn + "/confirm",
		Headers:        map[string]string{"authorization": "Bearer " + key, "content-type": "application/json"},
		PathParameters: map[string]string{"id": turn},
		Body:           string(decision),
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: "POST /v1/turns/{id}/confirm", Stage: "$default", RequestID: "confirm-1",
			DomainName: "api.execute-api.test.amazonaws.com",
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/v1/turns/" + turn + "/confirm", Protocol: "HTTP/1.1", SourceIP: "127.0.0.1"},
		},
	})
	var done steward.View
	if status != http.StatusOK || json.Unmarshal(body, &done) != nil {
		t.Fatalf("confirm: %d %s", status, body)
	}
	if done.Status != steward.StatusCompleted || done.TurnID != suspended.TurnID || !strings.Contains(done.Answer, "buy milk") {
		t.Fatalf("confirm: want the same turn completed with an answer, got %s", body)
	}
	if want := int64(100 + 150); done.Usage.InputTokens != want {
		t.Errorf("usage across processes: input_tokens = %d, want %d (the chat call's and the confirm call's)", done.Usage.InputTokens, want)
	}

	// 3. The write happened exactly once, journaled as one succeeded execution.
	st, err := store.Open(ctx, db.AppURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var tasks []steward.Task
	var calls []steward.CallRecord
	err = st.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		var err error
		if tasks, err = tx.Tasks.ListTasks(ctx, ""); err != nil {
			return err
		}
		calls, err = tx.Journal.Calls(ctx, suspended.TurnID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || tasks[0].Title != "buy milk" {
		t.Errorf("tasks = %+v, want exactly one \"buy milk\"", tasks)
	}
	if len(calls) != 1 || calls[0].Status != steward.CallSucceeded || calls[0].CallID != pending.CallID {
		t.Errorf("journal = %+v, want one succeeded create_task execution", calls)
	}

	// 4. Gemini saw the thought signature come back, byte for byte, from the other process,
	// and no minted call id.
	reqs := gemini.Requests()
	if len(reqs) != 2 {
		t.Fatalf("fake Gemini got %d generateContent requests, want 2 (one per process)", len(reqs))
	}
	var echoed bool
	for _, c := range reqs[1].Contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				echoed = bytes.Equal(p.ThoughtSignature, geminifake.ThoughtSignature)
				if p.FunctionCall.ID != "" {
					t.Errorf("the minted call id %q was sent to Gemini", p.FunctionCall.ID)
				}
			}
		}
	}
	if !echoed {
		t.Errorf("the confirm process did not send the thought signature back on the function call part")
	}

	// 5. The Function URL streams: asked for text/event-stream, the client gets every event
	// of the turn, not only the first one (lambdaurl's writer cannot Flush).
	status, body = chat.invokeFunctionURL(t, chatEvent(key, "text/event-stream", "remind me to call mum"))
	var types []string
	for _, line := range strings.Split(string(body), "\n") {
		if typ, ok := strings.CutPrefix(line, "event: "); ok {
			types = append(types, typ)
		}
	}
	if status != http.StatusOK || len(types) < 3 || types[0] != "started" || types[1] != "tool_call" || types[len(types)-1] != "suspended" {
		t.Errorf("streamed chat: %d, events %v, want started, tool_call … suspended:\n%s", status, types, body)
	}
}

// chatEvent is the Function URL event of POST /v1/chat with message, accepting accept.
func chatEvent(key, accept, message string) events.LambdaFunctionURLRequest {
	body, _ := json.Marshal(map[string]string{"message": message})
	return events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: "/v1/chat",
		Headers: map[string]string{"authorization": "Bearer " + key, "content-type": "application/json", "accept": accept},
		Body:    string(body),
		RequestContext: events.LambdaFunctionURLRequestContext{
			DomainName: "chat.lambda-url.test.on.aws", RequestID: "chat-" + accept,
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/v1/chat", Protocol: "HTTP/1.1", SourceIP: "127.0.0.1"},
		},
	}
}

// checkInitError runs bootstrap outside the emulator with a malformed setting: the cold start
// must fail on its own (app.Lambda) — exit 1, "<name>: " and the variable on stderr, which
// Lambda reports as an init error — not in the runtime loop it never reached.
func checkInitError(t *testing.T, name, bootstrap string) {
	t.Helper()
	cmd := exec.Command(bootstrap)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "STEWARD_LOG_LEVEL=loud"}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.HasPrefix(string(out), name+": ") || !strings.Contains(string(out), "STEWARD_LOG_LEVEL") {
		t.Errorf("%s with STEWARD_LOG_LEVEL=loud: %v, output %q; want exit status 1 and %q", name, err, out, name+": …STEWARD_LOG_LEVEL…")
	}
}

// findRIE locates aws-lambda-rie on PATH or in GOBIN/GOPATH/bin. It fails — never skips —
// on a machine that is not Linux (the emulator runs Linux binaries), and
// when it is missing: the two-process test is part of the suite.
func findRIE(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Fatalf("the Lambda emulator runs Linux binaries; this needs linux, not %s", runtime.GOOS)
	}
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p
	}
	out, _ := exec.Command(goTool(t), "env", "GOBIN", "GOPATH").Output()
	for _, dir := range strings.Fields(string(out)) {
		for _, p := range []string{filepath.Join(dir, "aws-lambda-rie"), filepath.Join(dir, "bin", "aws-lambda-rie")} {
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				return p
			}
		}
	}
	t.Fatalf("aws-lambda-rie (the AWS Lambda Runtime Interface Emulator) is not installed; run make rie, or:\n\t%s", rieInstall)
	return ""
}

// emulator is one aws-lambda-rie process running one function's bootstrap.
type emulator struct {
	name string
	url  string
	logs *testdb.Buffer
}

// startRIE runs bootstrap under its own emulator, on free loopback ports, with env as the
// function's environment. The emulator and the bootstrap share a process group, which the
// test kills when it ends.
func startRIE(t testing.TB, rie, name, bootstrap string, env []string) *emulator {
	t.Helper()
	invokeAddr, runtimeAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", invokeAddr, "--runtime-api-address", runtimeAddr, bootstrap)
	cmd.Dir = filepath.Dir(bootstrap)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "AWS_LAMBDA_FUNCTION_NAME=" + name}, env...)
	logs := &testdb.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", rie, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // already gone is fine
		cmd.Wait()                                      //nolint:errcheck // killed
		if t.Failed() {
			t.Logf("%s emulator and function log:\n%s", name, logs.String())
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", invokeAddr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s emulator did not listen on %s: %v\n%s", name, invokeAddr, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &emulator{name: name, url: "http://" + invokeAddr + "/2015-03-31/functions/function/invocations", logs: logs}
}

// invoke sends one event and returns the raw invocation payload.
func (e *emulator) invoke(t testing.TB, event any) []byte {
	t.Helper()
	b, err := json.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 2 * time.Minute}
	resp, err := client.Post(e.url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("invoke %s: %v\n%s", e.name, err, e.logs.String())
	}
	defer resp.Body.Close()
	payload, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("invoke %s: %d %v\n%s\n%s", e.name, resp.StatusCode, err, payload, e.logs.String())
	}
	return payload
}

// invokeFunctionURL sends a Function URL event to a RESPONSE_STREAM function and decodes the
// streamed integration response: a JSON prelude (status, headers), eight NUL bytes, the body.
func (e *emulator) invokeFunctionURL(t *testing.T, req events.LambdaFunctionURLRequest) (int, []byte) {
	t.Helper()
	payload := e.invoke(t, req)
	prelude, body, ok := bytes.Cut(payload, make([]byte, 8))
	if !ok {
		t.Fatalf("%s: not a streamed Function URL response (no prelude separator): %q", e.name, payload)
	}
	var head struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(prelude, &head); err != nil {
		t.Fatalf("%s: prelude %q: %v", e.name, prelude, err)
	}
	return head.StatusCode, body
}

// invokeHTTPAPI sends an HTTP API (payload 2.0) event and decodes the proxy response.
func (e *emulator) invokeHTTPAPI(t testing.TB, req events.APIGatewayV2HTTPRequest) (int, []byte) {
	t.Helper()
	payload := e.invoke(t, req)
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(payload, &resp); err != nil {
		t.Fatalf("%s: not an HTTP API response: %q: %v", e.name, payload, err)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		t.Fatalf("%s: unexpected base64 body", e.name)
	}
	return resp.StatusCode, body
}

// countTasks counts the owner's tasks, as the app role under RLS.
func countTasks(t *testing.T, appURL string, owner uuid.UUID) int {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, appURL, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n int
	err = st.WithOwner(ctx, owner, func(tx *store.Tx) error {
		tasks, err := tx.Tasks.ListTasks(ctx, "")
		n = len(tasks)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// freeAddr returns a loopback address with a port nobody listens on right now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
