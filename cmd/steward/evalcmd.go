package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/admin"
	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/eval"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/llm/fixture"
	"github.com/stewardhq/steward/internal/store"
)

const evalUsage = `Usage:
  steward eval [--filter CLASS] [--record] [--json FILE] [--dir DIR]
  steward eval --calibrate [--record] [--json FILE] [--dir DIR]

  Runs the eval suite (the tasks in DIR, default evals) through the real agent loop, each task
  on a fresh owner, and prints passed/total per class. It never touches your data: it runs in
  a scratch database it creates (steward_eval_…, migrated, next to DATABASE_URL's) and drops
  at the end. The model, named first: the fixtures in DIR/fixtures/model.json (or
  STEWARD_MODEL_FIXTURES) replayed when present, else the configured model — the offline demo
  model without GEMINI_API_KEY, which understands a few fixed phrasings and is expected to
  fail most tasks.
  --record runs the real model and records its calls to the fixture file (needs a key).
  --json writes the full report. Exits 1 when a task fails.

  --calibrate compares the context budget's token estimate with Gemini's countTokens on the
  calibration set (the tasks' messages, tool results of their data, generated prose and JSON),
  replayed from DIR/fixtures/count_tokens.json; with --record it asks the real API (needs
  GEMINI_API_KEY) and records the counts there. It prints the error per class (prose, json)
  and the rates the counts suggest; without recorded counts it fails. It needs no database.

Needs SUPERUSER_DATABASE_URL (to create and drop the scratch database; RDS: the master user),
and DATABASE_URL, APP_DATABASE_URL and DOOR_DATABASE_URL for the roles (steward migrate
bootstrap made them).
`

func runEval(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	filter := fs.String("filter", "", "only the tasks of this class")
	record := fs.Bool("record", false, "record the real model's calls to the fixture file")
	out := fs.String("json", "", "write the JSON report to this file")
	dir := fs.String("dir", "evals", "the directory of the task files")
	calibrate := fs.Bool("calibrate", false, "calibrate the token estimate against countTokens")
	if _, err := parseFlags(fs, args, evalUsage, 0, 0); err != nil {
		return err
	}
	tasks, err := eval.Load(*dir)
	if err != nil {
		return err
	}
	if *calibrate {
		if *filter != "" {
			return usageError{msg: "--calibrate takes no --filter: the calibration set is fixed", usage: evalUsage}
		}
		return runCalibrate(ctx, e, cfg, tasks, *dir, *record, *out)
	}
	if tasks = eval.Filter(tasks, *filter); len(tasks) == 0 {
		return usageError{msg: fmt.Sprintf("no tasks of class %q", *filter), usage: evalUsage}
	}
	if cfg, err = eval.ModelConfig(cfg, *dir, *record); err != nil {
		return err
	}
	if err := cfg.Require("SUPERUSER_DATABASE_URL", "DATABASE_URL", "APP_DATABASE_URL", "DOOR_DATABASE_URL"); err != nil {
		return err
	}
	scratch, err := admin.CreateScratch(ctx, cfg.SuperuserDatabaseURL,
		admin.RoleURLs{Owner: cfg.DatabaseURL, App: cfg.AppDatabaseURL, Door: cfg.DoorDatabaseURL}, "steward_eval")
	if err != nil {
		return fmt.Errorf("create the eval's scratch database: %w", store.VectorError(err))
	}
	defer func() {
		if err := admin.DropDatabase(context.WithoutCancel(ctx), cfg.SuperuserDatabaseURL, scratch.Name); err != nil {
			fmt.Fprintf(e.stderr, "steward eval: could not drop the scratch database %s: %v\n", scratch.Name, err)
		}
	}()
	// No *_SSM parameter may lead the App back to the user's database.
	cfg.AppDatabaseURLParam, cfg.DoorDatabaseURLParam = "", ""
	cfg.DatabaseURL, cfg.AppDatabaseURL, cfg.DoorDatabaseURL = scratch.URLs.Owner, scratch.URLs.App, scratch.URLs.Door
	if cfg.Trading.Mode != "paper" {
		// The trading tasks run on the paper broker of the scratch database, never a real one.
		cfg.Trading = config.Trading{Mode: "paper", OrderCap: 1000, DailyCap: 5000, StartingCash: 100_000}
	}
	door, err := openDoor(ctx, cfg)
	if err != nil {
		return err
	}
	defer door.Close()
	a, err := app.NewLoggingTo(ctx, cfg, e.stderr)
	if err != nil {
		return fmt.Errorf("open database: %w", store.VectorError(err))
	}
	defer a.Close()
	fmt.Fprintf(e.stdout, "model: %s\n", modelNote(a.Runner.Model.Name(), cfg))
	fmt.Fprintf(e.stdout, "database: %s, a scratch database dropped at the end (your data is not touched)\n", scratch.Name)
	rep := eval.Run(ctx, eval.Env{Runner: a.Runner, Store: a.Store, Documents: a.Documents, Ledger: a.Ledger, Trading: a.Trading,
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

// modelNote is the model's name with what a reader of the report must know about it: replayed
// or recorded calls, or the demo model's expected failures.
func modelNote(name string, cfg config.Config) string {
	switch {
	case cfg.ModelFixtures != "" && cfg.ModelFixturesMode == "replay":
		return name + " (replaying the calls recorded in " + cfg.ModelFixtures + ")"
	case cfg.ModelFixtures != "" && cfg.ModelFixturesMode == "record":
		return name + " (recording its calls to " + cfg.ModelFixtures + ")"
	case name == demo.Name:
		return name + ": the offline demo model understands a few fixed phrasings and is expected to fail most tasks; set GEMINI_API_KEY (or STEWARD_MODELS) for a real model"
	}
	return name
}

// runCalibrate is steward eval --calibrate.
func runCalibrate(ctx context.Context, e env, cfg config.Config, tasks []eval.Task, dir string, record bool, out string) error {
	counter, path, err := eval.CountCounter(ctx, cfg, dir, record)
	if err != nil {
		return err
	}
	cal, err := eval.Calibrate(ctx, counter, app.TokenRates(cfg), eval.CalibrationSet(tasks))
	if errors.Is(err, fixture.ErrMiss) {
		return fmt.Errorf("%s does not hold this calibration set's counts (the set, the tasks or STEWARD_MODEL changed since it was recorded); record it again: GEMINI_API_KEY=… steward eval --calibrate --record (%w)", path, err)
	}
	if err != nil {
		return err
	}
	cal.Model, cal.Fixtures = counter.Name(), path
	cal.Print(e.stdout)
	if out != "" {
		return cal.WriteJSON(out)
	}
	return nil
}
