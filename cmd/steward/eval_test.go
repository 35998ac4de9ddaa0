package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/testdb"
)

// TestEvalLeavesTheUsersDataAlone: steward eval runs in a database it creates and drops — the
// configured database gains no owner, and the scratch database it names is gone afterwards —
// says first which model it uses and that the demo model is expected to fail most tasks, and
// logs only on stderr, in words (no JSON line anywhere).
func TestEvalLeavesTheUsersDataAlone(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	r := runCLI(t, dbEnv(d), "eval", "--dir", "../../evals", "--filter", "approvals")
	wantOK(t, r)
	lines := strings.Split(r.stdout, "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "model: demo") || !strings.Contains(lines[0], "expected to fail most tasks") {
		t.Errorf("the report does not begin with the model and the demo model's warning:\n%s", r.stdout)
	}
	scratch := regexp.MustCompile(`steward_eval_[0-9a-f]+`).FindString(r.stdout)
	if scratch == "" {
		t.Errorf("the report does not name the database it ran in:\n%s", r.stdout)
	}
	for _, out := range []string{r.stdout, r.stderr} {
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "{") {
				t.Errorf("a JSON log line in the output: %s", line)
			}
		}
	}
	if !strings.Contains(r.stderr, "demo model") {
		t.Errorf("stderr lacks the demo model's warning in words:\n%s", r.stderr)
	}

	env := dbEnv(d)
	delete(env, "SUPERUSER_DATABASE_URL")
	wantOneLineError(t, runCLI(t, env, "eval", "--dir", "../../evals", "--filter", "approvals"), "SUPERUSER_DATABASE_URL is not set")

	ctx := context.Background()
	su := testdb.Connect(t, d.SuperURL)
	var owners, left int
	if err := su.QueryRow(ctx, `SELECT count(*) FROM owners`).Scan(&owners); err != nil || owners != 0 {
		t.Errorf("the configured database has %d owners after eval (%v); want none", owners, err)
	}
	if err := su.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname = $1`, scratch).Scan(&left); err != nil || left != 0 {
		t.Errorf("the scratch database %s is still there (%d, %v)", scratch, left, err)
	}
}
