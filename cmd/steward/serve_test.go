package main

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
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
	var stdout, stderr syncBuffer
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
		"DATABASE_URL": "postgres://steward_owner:pw@127.0.0.1:1/steward?sslmode=disable", "STEWARD_ADDR": "127.0.0.1:0"}
	wantOneLineError(t, steward(t, env, "serve"), "open database")
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
