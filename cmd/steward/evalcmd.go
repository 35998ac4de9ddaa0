package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/eval"
	"github.com/stewardhq/steward/internal/store"
)

const evalUsage = `Usage:
  steward eval [--filter CLASS] [--record] [--json FILE] [--dir DIR]

  Runs the eval suite (the tasks in DIR, default evals) through the real agent loop, each task
  on a fresh owner (named eval-…) in the database, and prints passed/total per class. The
  model: the fixtures in DIR/fixtures/model.json (or STEWARD_MODEL_FIXTURES) replayed when
  present, else the configured model (the offline demo model without GEMINI_API_KEY).
  --record runs the real model and records its calls to the fixture file (needs a key).
  --json writes the full report. Exits 1 when a task fails.

Needs DATABASE_URL (to create the owners), APP_DATABASE_URL and DOOR_DATABASE_URL.
`

func runEval(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	filter := fs.String("filter", "", "only the tasks of this class")
	record := fs.Bool("record", false, "record the real model's calls to the fixture file")
	out := fs.String("json", "", "write the JSON report to this file")
	dir := fs.String("dir", "evals", "the directory of the task files")
	if _, err := parseFlags(fs, args, evalUsage, 0, 0); err != nil {
		return err
	}
	tasks, err := eval.Load(*dir)
	if err != nil {
		return err
	}
	if tasks = eval.Filter(tasks, *filter); len(tasks) == 0 {
		return usageError{msg: fmt.Sprintf("no tasks of class %q", *filter), usage: evalUsage}
	}
	if cfg, err = eval.ModelConfig(cfg, *dir, *record); err != nil {
		return err
	}
	door, err := openDoor(ctx, cfg)
	if err != nil {
		return err
	}
	defer door.Close()
	a, err := app.New(ctx, cfg)
	if err != nil {
		return fmt.Errorf("open database: %w", store.VectorError(err))
	}
	defer a.Close()
	rep := eval.Run(ctx, eval.Env{Runner: a.Runner, Store: a.Store, Documents: a.Documents, Ledger: a.Ledger,
		NewOwner: func(ctx context.Context, name string) (uuid.UUID, error) {
			o, _, err := door.CreateOwner(ctx, name+"-"+uuid.NewString()[:8])
			return o.ID, err
		}}, tasks)
	rep.Print(e.stdout)
	for _, r := range rep.Failed() {
		fmt.Fprintf(e.stderr, "FAIL %s: %v\n", r.ID, r.Failures)
	}
	if *out != "" {
		if err := rep.WriteJSON(*out); err != nil {
			return err
		}
	}
	if rep.Passed < rep.Total {
		return exitError{code: 1, msg: fmt.Sprintf("%d of %d eval tasks failed", rep.Total-rep.Passed, rep.Total)}
	}
	return nil
}
