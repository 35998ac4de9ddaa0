package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestNewFromSSMWithTheDemoModel builds the App as a Lambda cold start does — database URLs
// from SSM by name, no Gemini key — and serves a turn through its handler.
func TestNewFromSSMWithTheDemoModel(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ssm := newFakeSSM(t, map[string]string{"/steward/database-url": db.OwnerURL, "/steward/app-database-url": db.AppURL})
	cfg := loadConfig(t, map[string]string{
		"DATABASE_URL_SSM":     "/steward/database-url",
		"APP_DATABASE_URL_SSM": "/steward/app-database-url",
		// what the Lambda runtime sets for the function's role
		"AWS_REGION": testAWS.Region, "AWS_ACCESS_KEY_ID": testAWS.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY": testAWS.SecretAccessKey, "AWS_SESSION_TOKEN": testAWS.SessionToken,
	})
	var logs bytes.Buffer
	ctx := context.Background()
	a, err := build(ctx, cfg, settings{logOut: &logs, ssm: ssm.settings()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	if !strings.Contains(logs.String(), `"level":"warn"`) || !strings.Contains(logs.String(), "offline demo model") {
		t.Errorf("the demo model was not announced with a warning; log:\n%s", logs.String())
	}
	if a.Runner.Model.Name() != demo.Name {
		t.Errorf("model = %q, want the demo model", a.Runner.Model.Name())
	}

	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz = %d", resp.StatusCode)
	}

	_, key, err := a.Door.CreateOwner(ctx, "app-test")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat", strings.NewReader(`{"message":"remind me to water the plants"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v agent.View
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/chat = %d, %v", resp.StatusCode, err)
	}
	if v.Status != agent.StatusSuspended || len(v.Pending) != 1 || v.Pending[0].Tool != "create_task" {
		t.Errorf("chat = %+v, want suspended on create_task", v)
	}
}

func TestNewNeedsBothDatabases(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, map[string]string{"APP_DATABASE_URL": "postgres://steward_app@127.0.0.1:1/steward"})
	_, err := build(context.Background(), cfg, settings{logOut: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL is not set") {
		t.Fatalf("err = %v, want DATABASE_URL is not set", err)
	}
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		env        map[string]string
		debugShown bool
		wantJSON   bool
	}{
		{env: map[string]string{}, wantJSON: true},
		{env: map[string]string{"STEWARD_LOG_LEVEL": "debug"}, debugShown: true, wantJSON: true},
		{env: map[string]string{"STEWARD_LOG_FORMAT": "console"}},
	} {
		var buf bytes.Buffer
		log := NewLogger(loadConfig(t, tt.env), &buf)
		log.Debug().Msg("dbg")
		log.Info().Str("k", "v").Msg("hello")
		out := buf.String()
		if strings.Contains(out, "dbg") != tt.debugShown {
			t.Errorf("%v: debug shown = %v:\n%s", tt.env, !tt.debugShown, out)
		}
		if json.Valid([]byte(strings.TrimSpace(strings.Split(out, "\n")[0]))) != tt.wantJSON {
			t.Errorf("%v: JSON = %v:\n%s", tt.env, !tt.wantJSON, out)
		}
	}
}

// TestWriteThroughKeepsLambdaStreamsFlowing: behind lambdaurl (no Flush on its writer) a
// handler that flushes after each event keeps writing; without WriteThrough the flush fails.
func TestWriteThroughKeepsLambdaStreamsFlowing(t *testing.T) {
	t.Parallel()
	events3 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		for _, e := range []string{"one", "two", "three"} {
			io.WriteString(w, "event: "+e+"\n\n")
			if err := rc.Flush(); err != nil {
				io.WriteString(w, "flush failed: "+err.Error())
				return
			}
		}
	})
	tests := []struct {
		name    string
		handler http.Handler
		want    string
	}{
		{"bare", events3, "event: one\n\nflush failed: feature not supported"},
		{"write-through", WriteThrough(events3), "event: one\n\nevent: two\n\nevent: three\n\n"},
	}
	for _, tt := range tests {
		resp, err := lambdaurl.Wrap(tt.handler)(context.Background(), &events.LambdaFunctionURLRequest{
			RawPath:        "/v1/chat",
			RequestContext: events.LambdaFunctionURLRequestContext{HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if string(body) != tt.want {
			t.Errorf("%s: body %q, want %q", tt.name, body, tt.want)
		}
	}
	// A writer that can flush is passed through untouched.
	rec := httptest.NewRecorder()
	WriteThrough(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(*httptest.ResponseRecorder); !ok {
			t.Errorf("a flushable writer was wrapped: %T", w)
		}
	})).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
}

// loadConfig is config.Load over a map.
func loadConfig(t *testing.T, env map[string]string) config.Config {
	t.Helper()
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
