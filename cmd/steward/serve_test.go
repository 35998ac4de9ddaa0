package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/testdb"
)

func TestServeHealthzAndGracefulShutdown(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	env["STEWARD_ADDR"] = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testdb.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, &stdout, &stderr) }()

	addr := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stdout.String()); m != nil {
			base = "http://" + m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("server did not start; stdout %q stderr %q", stdout.String(), stderr.String())
		}
	}
	status, body := get(t, base+"/healthz")
	if status != http.StatusOK || body["status"] != "ok" || body["database"] != "ok" {
		t.Fatalf("healthz = %d %v", status, body)
	}
	if status, _ := get(t, base+"/v1/approvals"); status != http.StatusUnauthorized {
		t.Fatalf("the API is mounted and needs a key: got %d for /v1/approvals", status)
	}

	cancel() // what SIGINT/SIGTERM do through main's signal context
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down")
	}
}

func TestServeDatabaseUnreachable(t *testing.T) {
	t.Parallel()
	env := map[string]string{"APP_DATABASE_URL": "postgres://steward_app:pw@127.0.0.1:1/steward?sslmode=disable",
		"DOOR_DATABASE_URL": "postgres://steward_door:pw@127.0.0.1:1/steward?sslmode=disable", "STEWARD_ADDR": "127.0.0.1:0"}
	wantOneLineError(t, runCLI(t, env, "serve"), "open database")
}

// TestServeRefusesAnUnpricedModel: with Gemini, a model without a price stops `steward serve`
// before it listens, with one line naming the model and how to price it.
func TestServeRefusesAnUnpricedModel(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	env["STEWARD_ADDR"] = "127.0.0.1:0"
	env["GEMINI_API_KEY"] = "test-key"
	env["GEMINI_BASE_URL"] = "http://127.0.0.1:1"
	env["STEWARD_MODEL"] = "gemini-9-unpriced"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a server that starts is stopped here
	defer cancel()
	var stdout, stderr testdb.Buffer
	err := run(ctx, []string{"serve"}, func(k string) string { return env[k] }, &stdout, &stderr)
	code := exitCode(err, &stderr)
	r := result{stdout.String(), stderr.String(), code}
	wantOneLineError(t, r, "STEWARD_MODEL=gemini-9-unpriced has no price")
	if !strings.Contains(r.stderr, "STEWARD_MODEL_PRICES") || strings.Contains(r.stderr, "open database") {
		t.Fatalf("want how to price it, not a database error: %s", r.stderr)
	}
	if strings.Contains(r.stdout, "listening") {
		t.Fatalf("the server started: %s", r.stdout)
	}
}

func get(t *testing.T, url string) (int, map[string]string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]string
	json.NewDecoder(resp.Body).Decode(&body) //nolint:errcheck // a 404 is not JSON
	return resp.StatusCode, body
}

// TestServeSuspendAndApproveOverHTTP is the newcomer's path through `steward serve`: a chat
// asks for a write, the turn suspends, a separate request approves it, the write happens once.
func TestServeSuspendAndApproveOverHTTP(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	env := dbEnv(d)
	env["STEWARD_ADDR"] = "127.0.0.1:0"
	added := runCLI(t, env, "owners", "add", "alice", "--json")
	wantOK(t, added)
	var owner struct {
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal([]byte(added.stdout), &owner); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testdb.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, &stdout, &stderr) }()
	addr := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stdout.String()); m != nil {
			base = "http://" + m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("server did not start; stderr %q", stderr.String())
		}
	}
	post := func(path, body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+owner.APIKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		json.NewDecoder(resp.Body).Decode(&v) //nolint:errcheck
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %v", path, resp.StatusCode, v)
		}
		return v
	}
	v := post("/v1/chat", `{"message":"remind me to buy milk"}`)
	pending, _ := v["pending"].([]any)
	if v["status"] != "suspended" || len(pending) != 1 {
		t.Fatalf("chat: %v", v)
	}
	p := pending[0].(map[string]any)
	decision := fmt.Sprintf(`{"decisions":[{"call_id":%q,"approve":true,"args_hash":%q}]}`, p["call_id"], p["args_hash"])
	v = post("/v1/turns/"+v["turn_id"].(string)+"/confirm", decision)
	if v["status"] != "completed" || !strings.Contains(fmt.Sprint(v["answer"]), "buy milk") {
		t.Fatalf("confirm: %v", v)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
