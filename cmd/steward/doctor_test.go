package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/testdb"
)

// execAs runs sql on the database at url.
func execAs(t *testing.T, url, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// doctorLines maps each check's name to its line of `steward doctor` output.
func doctorLines(t *testing.T, stdout string) map[string]string {
	t.Helper()
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			t.Fatalf("malformed doctor line %q", l)
		}
		name := strings.TrimSpace(l[len(f[0]):])
		for _, n := range []string{"database as steward_owner", "database as steward_app", "database as steward_door", "pgvector", "migrations",
			"row-level security", "roles", "api keys", "security definer", "views", "audit log", "app role without owner", "model", "shell", "oauth", "configuration"} {
			if strings.HasPrefix(name, n+" ") {
				lines[n] = l
			}
		}
	}
	return lines
}

func TestDoctorGreenOnMigratedDatabase(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	wantOK(t, runCLI(t, env, "owners", "add", "dora")) // so "sees 0 of 1 owners" means something
	r := runCLI(t, env, "doctor")
	wantOK(t, r)
	lines := doctorLines(t, r.stdout)
	for _, name := range []string{"database as steward_owner", "database as steward_app", "database as steward_door", "pgvector", "migrations",
		"row-level security", "roles", "api keys", "security definer", "views", "audit log", "app role without owner"} {
		if !strings.HasPrefix(lines[name], "✔ ") {
			t.Errorf("%s: want a ✔ line, got %q", name, lines[name])
		}
	}
	if !strings.Contains(lines["app role without owner"], "sees 0 of 1 owners") {
		t.Errorf("isolation line: %q", lines["app role without owner"])
	}
	if got := lines["model"]; !strings.HasPrefix(got, "! ") || !strings.Contains(got, "demo model (offline), set GEMINI_API_KEY for Gemini") {
		t.Errorf("model without a key: want a warning, got %q", got)
	}

	if got := lines["shell"]; !strings.Contains(got, "run_command off (STEWARD_SHELL); its sandbox (bubblewrap) is available") {
		t.Errorf("shell line: %q; want run_command off with its sandbox available", got)
	}

	env["GEMINI_API_KEY"] = "test-key"
	r = runCLI(t, env, "doctor", "--json")
	wantOK(t, r)
	var report struct {
		OK     bool `json:"ok"`
		Checks []struct{ Name, Status, Detail string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || !report.OK || len(report.Checks) != 17 {
		t.Fatalf("doctor --json = %s (%v)", r.stdout, err)
	}
	// gemini-3.8-flash's price depends on the date (an introductory price until 2027).
	if last := report.Checks[len(report.Checks)-1]; last.Name != "model" || last.Status != "ok" ||
		!strings.HasPrefix(last.Detail, "gemini gemini-3.8-flash ($") || !strings.HasSuffix(last.Detail, "; fast gemini-3.5-flash-lite ($0.30/$2.50 per 1M tokens in/out)") {
		t.Fatalf("model with a key: %+v", last)
	}
	if strings.Contains(r.stdout, "test-key") {
		t.Fatal("doctor printed the Gemini key")
	}
}

func TestDoctorRedWhenRowLevelSecurityBroken(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ sql, want string }{
		"not forced": {"ALTER TABLE tasks NO FORCE ROW LEVEL SECURITY", "tasks: row-level security is not forced"},
		"disabled":   {"ALTER TABLE tasks DISABLE ROW LEVEL SECURITY", "tasks: row-level security is not enabled"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := testdb.New(t)
			execAs(t, d.OwnerURL, tc.sql) // the owner role owns the tables: no superuser needed
			r := runCLI(t, dbEnv(d), "doctor")
			wantOneLineError(t, r, "doctor: 1 of 17 checks failed")
			line := doctorLines(t, r.stdout)["row-level security"]
			if !strings.HasPrefix(line, "✘ ") || !strings.Contains(line, tc.want) {
				t.Fatalf("want a ✘ line saying %q, got %q\n%s", tc.want, line, r.stdout)
			}
		})
	}
}

// TestDoctorRedWhenModelUnpriced: a Gemini model without a price fails the model check, saying
// which model and how to price it; STEWARD_MODEL_PRICES turns it green.
func TestDoctorRedWhenModelUnpriced(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	env["GEMINI_API_KEY"] = "test-key"
	env["STEWARD_FAST_MODEL"] = "gemini-9-lite"
	r := runCLI(t, env, "doctor")
	wantOneLineError(t, r, "doctor: 1 of 17 checks failed")
	line := doctorLines(t, r.stdout)["model"]
	for _, want := range []string{"✘ ", "STEWARD_FAST_MODEL=gemini-9-lite has no price", "STEWARD_MODEL_PRICES=gemini-9-lite="} {
		if !strings.Contains(line, want) {
			t.Fatalf("model line %q does not say %q", line, want)
		}
	}

	env["STEWARD_MODEL_PRICES"] = "gemini-9-lite=0.5:3"
	r = runCLI(t, env, "doctor")
	wantOK(t, r)
	if line := doctorLines(t, r.stdout)["model"]; !strings.HasPrefix(line, "✔ ") || !strings.Contains(line, "gemini-9-lite ($0.50/$3.00") {
		t.Fatalf("model line with the operator's price: %q", line)
	}
}

func TestDoctorRedWhenDatabaseUnreachable(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	env := dbEnv(d)
	env["APP_DATABASE_URL"] = "postgres://steward_app:pw@127.0.0.1:1/steward?sslmode=disable"
	r := runCLI(t, env, "doctor")
	wantOneLineError(t, r, "checks failed")
	lines := doctorLines(t, r.stdout)
	if !strings.HasPrefix(lines["database as steward_app"], "✘ ") || !strings.Contains(lines["database as steward_app"], "APP_DATABASE_URL") {
		t.Fatalf("app role line: %q", lines["database as steward_app"])
	}
	if !strings.HasPrefix(lines["pgvector"], "✔ ") || !strings.HasPrefix(lines["migrations"], "✔ ") {
		t.Fatalf("the owner role's checks should still run: %s", r.stdout)
	}

	r = runCLI(t, nil, "doctor")
	wantOneLineError(t, r, "checks failed")
	if line := doctorLines(t, r.stdout)["configuration"]; !strings.HasPrefix(line, "✘ ") || !strings.Contains(line, "DATABASE_URL is not set") {
		t.Fatalf("no configuration: %s", r.stdout)
	}
}

// TestDoctorFlagsARuntimeURLOfTheTableOwner: the runtime's URLs (DOOR_DATABASE_URL for the
// door, APP_DATABASE_URL) set to the table owner's, which could switch off row-level
// security, are failures that say so.
func TestDoctorFlagsARuntimeURLOfTheTableOwner(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	for variable, check := range map[string]string{"DOOR_DATABASE_URL": "database as steward_door", "APP_DATABASE_URL": "database as steward_app"} {
		env := dbEnv(d)
		env[variable] = d.OwnerURL
		r := runCLI(t, env, "doctor")
		wantOneLineError(t, r, "checks failed")
		line := doctorLines(t, r.stdout)[check]
		for _, want := range []string{"✘ ", variable + " connects as steward_owner", "owns api_keys", "could disable row-level security"} {
			if !strings.Contains(line, want) {
				t.Errorf("%s set to DATABASE_URL: the %q line is %q, want it to say %q\n%s", variable, check, line, want, r.stdout)
			}
		}
	}
}

// TestDoctorRunsAShellCommand: with run_command on, doctor runs a command in its sandbox: a
// fresh workspace root works (as root, the tests' user, the root is made passable by nobody)
// and says the memory bound that applies; a root nobody cannot reach fails, naming the
// directory in the way.
func TestDoctorRunsAShellCommand(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	env["STEWARD_SHELL"] = "on"
	root := filepath.Join(os.TempDir(), "steward-doctor-"+uuid.NewString())
	t.Cleanup(func() { os.RemoveAll(root) })
	env["STEWARD_SHELL_ROOT"] = root
	r := runCLI(t, env, "doctor")
	line := doctorLines(t, r.stdout)["shell"]
	if !strings.Contains(line, "a command ran") || !strings.Contains(line, "/tmp and /dev/shm 64 MB each") || !strings.Contains(line, "memory 512 MB per command (cgroup ") {
		t.Errorf("fresh root: %q", line)
	}

	hidden := t.TempDir() // 0700: nobody cannot pass it
	env["STEWARD_SHELL_ROOT"] = filepath.Join(hidden, "ws")
	r = runCLI(t, env, "doctor")
	if line := doctorLines(t, r.stdout)["shell"]; !strings.HasPrefix(line, "✘ ") || !strings.Contains(line, "cannot pass "+filepath.Dir(hidden)) {
		t.Errorf("unreachable root: %q", line)
	}
}
