package eval_test

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/eval"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// updateBaseline rewrites evals/baseline.json from this run: go test ./internal/eval -run
// TestSuiteAgainstBaseline -update-baseline.
var updateBaseline = flag.Bool("update-baseline", false, "rewrite evals/baseline.json from this run")

const evalsDir = "../../evals"

// TestSuiteAgainstBaseline is the CI gate: the whole suite, with the offline demo model (no
// key in CI), on a real database through the real loop; it fails when fewer tasks pass than
// evals/baseline.json records, or a task that passed there fails.
func TestSuiteAgainstBaseline(t *testing.T) {
	tasks, err := eval.Load(evalsDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 40 {
		t.Fatalf("%d tasks, want at least 40", len(tasks))
	}
	db := testdb.New(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"APP_DATABASE_URL": db.AppURL, "DOOR_DATABASE_URL": db.DoorURL, "STEWARD_LOG_LEVEL": "error", "STEWARD_TRADING": "paper"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := app.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Runner.Model.Name() != demo.Name {
		t.Fatalf("model %q, want the demo model", a.Runner.Model.Name())
	}
	door, err := store.OpenDoor(ctx, db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	rep := eval.Run(ctx, eval.Env{Runner: a.Runner, Store: a.Store, Documents: a.Documents, Ledger: a.Ledger, Trading: a.Trading,
		NewOwner: func(ctx context.Context, name string) (uuid.UUID, error) {
			o, _, err := door.CreateOwner(ctx, name)
			return o.ID, err
		}}, tasks)
	for _, r := range rep.Results {
		if r.Error != "" {
			t.Errorf("task %s could not run: %s", r.ID, r.Error)
		}
	}
	for _, c := range rep.Classes {
		t.Logf("%-12s %d/%d", c.Class, c.Passed, c.Total)
	}
	t.Logf("total %d/%d, unverified claims %d", rep.Passed, rep.Total, rep.UnverifiedClaims)
	path := filepath.Join(evalsDir, "baseline.json")
	if *updateBaseline {
		if err := eval.BaselineOf(rep).Write(path); err != nil {
			t.Fatal(err)
		}
		return
	}
	base, err := eval.ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range eval.Regressions(base, rep) {
		t.Error(r)
	}
}
