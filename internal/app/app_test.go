package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stewardhq/steward/internal/awsapi/awsapitest"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestNewFromSSMWithTheDemoModel builds the App as a Lambda cold start does — database URLs
// from SSM by name, no Gemini key — and serves a turn through its handler. It never asks
// for the owner role's URL, even when a parameter for it is named.
func TestNewFromSSMWithTheDemoModel(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ssm := awsapitest.NewSSM(t, map[string]string{"/steward/database-url": db.OwnerURL, "/steward/app-database-url": db.AppURL,
		"/steward/door-database-url": db.DoorURL})
	cfg := loadConfig(t, map[string]string{
		"DATABASE_URL_SSM":      "/steward/database-url",
		"APP_DATABASE_URL_SSM":  "/steward/app-database-url",
		"DOOR_DATABASE_URL_SSM": "/steward/door-database-url",
		// what the Lambda runtime sets for the function's role
		"AWS_REGION": testAWS.Region, "AWS_ACCESS_KEY_ID": testAWS.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY": testAWS.SecretAccessKey, "AWS_SESSION_TOKEN": testAWS.SessionToken,
	})
	var logs bytes.Buffer
	ctx := context.Background()
	a, err := build(ctx, cfg, settings{logOut: &logs, ssm: ssmAt(ssm)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, r := range ssm.Asked() {
		if r.Name == "/steward/database-url" {
			t.Errorf("the App read DATABASE_URL (steward_owner) from SSM; the runtime must never hold it")
		}
	}

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

	admin, err := store.OpenDoor(ctx, db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	_, key, err := admin.CreateOwner(ctx, "app-test")
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
	var v steward.View
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/chat = %d, %v", resp.StatusCode, err)
	}
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 || v.Pending[0].Tool != "create_task" {
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

// TestRuntimeRolesCannotDisableRowLevelSecurity: every role the running App connects as —
// what `steward serve` and the Lambda functions hold, even with DATABASE_URL in their
// environment — is refused switching off row-level security or the audit log's trigger:
// none of them owns a table.
func TestRuntimeRolesCannotDisableRowLevelSecurity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	cfg := loadConfig(t, map[string]string{"DATABASE_URL": db.OwnerURL, "APP_DATABASE_URL": db.AppURL, "DOOR_DATABASE_URL": db.DoorURL})
	a, err := build(ctx, cfg, settings{logOut: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	su, err := pgx.Connect(ctx, db.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	rows, err := su.Query(ctx, `SELECT DISTINCT usename::text FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	roles, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) < 2 {
		t.Fatalf("the App holds connections as %v; want its two pools' roles", roles)
	}
	for _, role := range roles {
		for _, sql := range []string{
			"ALTER TABLE tasks DISABLE ROW LEVEL SECURITY",
			"ALTER TABLE api_keys NO FORCE ROW LEVEL SECURITY",
			"ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update",
			"DROP POLICY owner_isolation ON turns",
		} {
			tx, err := su.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "SET LOCAL ROLE "+pgx.Identifier{role}.Sanitize()); err != nil {
				t.Fatal(err)
			}
			_, err = tx.Exec(ctx, sql)
			tx.Rollback(ctx) //nolint:errcheck
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
				t.Errorf("the App connects as %s, which may %s (err %v); want 42501 must be owner", role, sql, err)
			}
		}
	}
}

// TestNewRefusesARuntimeURLOfTheTableOwner: the App does not start with either runtime URL
// connecting as steward_owner, which could switch off row-level security.
func TestNewRefusesARuntimeURLOfTheTableOwner(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	for _, variable := range []string{"DOOR_DATABASE_URL", "APP_DATABASE_URL"} {
		env := map[string]string{"APP_DATABASE_URL": db.AppURL, "DOOR_DATABASE_URL": db.DoorURL}
		env[variable] = db.OwnerURL
		a, err := build(context.Background(), loadConfig(t, env), settings{logOut: io.Discard})
		if err == nil {
			a.Close()
			t.Fatalf("%s set to the owner's URL: the App started", variable)
		}
		for _, want := range []string{variable + " connects as steward_owner", "owns api_keys", "could disable row-level security"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s set to the owner's URL: err = %v, want it to say %q", variable, err, want)
			}
		}
	}
}

// adminDoor is the operator's door (steward_owner), for what the runtime's door may not do:
// creating owners, setting limits and the deployment's cap.
func adminDoor(t *testing.T, db *testdb.DB) *store.Door {
	t.Helper()
	d, err := store.OpenDoor(context.Background(), db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}
