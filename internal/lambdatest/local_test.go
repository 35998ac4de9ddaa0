//go:build unix

package lambdatest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/deployment"
)

// localEnv is a function's environment under `sam local` with events/env.json: the
// variables the template declares for it (SAM sets no other), each taken from the file's
// Parameters, then from its section for the function, else the template's value.
func localEnv(t *testing.T, s stack, fnID string, file map[string]map[string]string) map[string]string {
	t.Helper()
	env := s.env(s.functions()[fnID])
	for _, section := range []string{"Parameters", fnID} {
		for k, v := range file[section] {
			if _, declared := env[k]; declared {
				env[k] = v
			}
		}
	}
	return env
}

// checkDeclared: every variable events/env.json sets is declared by a function it applies to
// (Parameters: any function; a function's section: that function); sam local ignores others.
func checkDeclared(t *testing.T, s stack, file map[string]map[string]string) {
	t.Helper()
	fns := s.functions()
	for section, vars := range file {
		for k := range vars {
			var declared bool
			for id, fn := range fns {
				if _, ok := s.env(fn)[k]; ok && (section == "Parameters" || section == id) {
					declared = true
				}
			}
			if !declared {
				t.Errorf("events/env.json %s sets %s, which no function it applies to declares: sam local would ignore it", section, k)
			}
		}
	}
}

// TestLocalEnvironment: events/env.json runs every function of the template offline against
// the development database — only variables the template declares (sam local ignores
// others), no *_SSM reference left (so no AWS call), no value only a deploy knows, plain
// database URLs for the right roles — and, under the Lambda emulator
// with that environment (on a database of the test's own), the migrate function bootstraps
// and migrates from an {"action":"migrate"} event (events/migrate.json), and the api and
// webhook functions serve.
func TestLocalEnvironment(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "events", "env.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]map[string]string
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("events/env.json: %v", err)
	}
	s := deployed(t, nil)
	checkDeclared(t, s, file)
	envs := map[string]map[string]string{}
	for id := range s.functions() {
		env := localEnv(t, s, id, file)
		envs[id] = env
		for k, v := range env {
			if strings.Contains(v, "Ref(") || strings.Contains(v, "GetAtt(") {
				t.Errorf("%s: %s=%s is known only to a deploy: events/env.json must set it", id, k, v)
			}
			if strings.HasSuffix(k, "_SSM") && v != "" {
				t.Errorf("%s: %s=%q would read AWS: events/env.json must blank it", id, k, v)
			}
		}
		cfg, err := load(env)
		if err != nil {
			t.Errorf("%s: events/env.json's environment does not load: %v", id, err)
			continue
		}
		for role, u := range map[string]string{"steward_app": cfg.AppDatabaseURL, "steward_door": cfg.DoorDatabaseURL} {
			if c, err := pgx.ParseConfig(u); err != nil || c.User != role || c.Host != "127.0.0.1" {
				t.Errorf("%s: the local URL of %s is not the development database's (%v)", id, role, err)
			}
		}
	}
	var ev deployment.Event
	if raw, err := os.ReadFile(filepath.Join(repoRoot, "events", "migrate.json")); err != nil || json.Unmarshal(raw, &ev) != nil || ev.Action != deployment.ActionMigrate {
		t.Fatalf("events/migrate.json is not the migrate action: %v", err)
	}

	// Under the emulator, on a database of the test's own: the file's URLs with the test
	// server's credentials, the roles' naming this database.
	rie := findRIE(t)
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	name := "steward_local_" + hex.EncodeToString(b)
	local := func(env map[string]string) []string {
		var out []string
		for k, v := range env {
			for local, test := range map[string]string{"SUPERUSER_DATABASE_URL": "SUPERUSER_DATABASE_URL", "DATABASE_URL": "DATABASE_URL", "APP_DATABASE_URL": "APP_DATABASE_URL", "DOOR_DATABASE_URL": "DOOR_DATABASE_URL"} {
				if k == local && v != "" {
					u, err := url.Parse(os.Getenv(test))
					if err != nil || u.Host == "" {
						t.Fatalf("%s is not set: the test needs the development database", test)
					}
					if local != "SUPERUSER_DATABASE_URL" { // it connects to a database that exists
						u.Path = "/" + name
					}
					v = u.String()
				}
			}
			out = append(out, k+"="+v)
		}
		return append(out, "AWS_LAMBDA_FUNCTION_TIMEOUT=120")
	}
	t.Cleanup(func() { dropDatabase(t, name) })
	bins := buildBootstraps(t, runtime.GOARCH, "functions/migrate", "functions/api", "functions/webhook")
	migrate := startRIE(t, rie, "migrate", bins["functions/migrate"], local(envs["MigrateFunction"]))
	var res deployment.Result
	if out := migrate.invoke(t, ev); json.Unmarshal(out, &res) != nil || res.SchemaVersion == 0 {
		t.Fatalf("sam local invoke MigrateFunction -e events/migrate.json: %s", out)
	}
	api := startRIE(t, rie, "api", bins["functions/api"], local(envs["ApiFunction"]))
	if status, body := api.invokeHTTPAPI(t, apiEvent("GET", "/healthz", "")); status != http.StatusOK {
		t.Fatalf("GET /healthz with events/env.json: %d %s", status, body)
	}
	// The webhook function, told of no Telegram or Web Push secret and no document bucket
	// (its role reads none: docs/DEPLOY.md, Roles), starts and serves: an unknown hook is 404.
	webhook := startRIE(t, rie, "webhook", bins["functions/webhook"], local(envs["WebhookFunction"]))
	if status, body := webhook.invokeHTTPAPI(t, apiEvent("POST", "/webhooks/whk_unknown0000000000000000", "{}")); status != http.StatusNotFound {
		t.Fatalf("POST /webhooks/<unknown> with events/env.json: %d %s; want 404", status, body)
	}
}
