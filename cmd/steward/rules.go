package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/steward"
)

const rulesUsage = `Usage:
  steward rules list [--json] [--owner ID]
  steward rules add TOOL --effect allow|deny [--predicate JSON] [--match exact|pattern] [--note TEXT] [--owner ID]
  steward rules remove ID [--owner ID]

  list    the owner's standing rules, one a line: id, effect, which calls it covers in
          words, where it came from; --json prints each as JSON (with its "match")
  add     a standing rule, like POST /v1/rules: TOOL is a write tool or "*" for every one;
          --predicate names arguments of the tool. --match exact (the default when the
          predicate names an argument) covers only a call whose arguments are exactly the
          predicate; --match pattern covers any call whose arguments have the predicate's
          values, other arguments anything. Without a predicate the rule covers any
          arguments. Prints the rule as list does.
  remove  delete a rule by its id (rules list)
`

func runRules(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, rulesUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"list":   rulesList,
		"add":    rulesAdd,
		"remove": rulesRemove,
	})
}

// printRule writes one rule as a line: id, effect, what it covers, its source and note.
func printRule(w io.Writer, r steward.Rule) {
	fmt.Fprintf(w, "%s  %s %s  (%s)", r.ID, r.Effect, rules.Describe(r), r.Source)
	if r.Note != "" {
		fmt.Fprintf(w, " — %s", r.Note)
	}
	fmt.Fprintln(w)
}

func rulesList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("rules list", flag.ContinueOnError)
	owner, asJSON := ownerFlag(fs), fs.Bool("json", false, "print JSON lines")
	if _, err := parseFlags(fs, args, rulesUsage, 0, 0); err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		list, err := a.Rules.List(ctx, owners[0])
		if err != nil {
			return fmt.Errorf("rules list: %w", err)
		}
		for _, r := range list {
			if *asJSON {
				b, _ := json.Marshal(r)
				fmt.Fprintln(e.stdout, string(b))
				continue
			}
			printRule(e.stdout, r)
		}
		return nil
	})
}

func rulesAdd(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("rules add", flag.ContinueOnError)
	owner := ownerFlag(fs)
	var nr rules.NewRule
	var pred string
	fs.StringVar(&nr.Effect, "effect", "", "allow or deny")
	fs.StringVar(&pred, "predicate", "", "a JSON object of argument values")
	fs.StringVar(&nr.Match, "match", "", "exact or pattern")
	fs.StringVar(&nr.Note, "note", "", "a note")
	names, err := parseFlags(fs, args, rulesUsage, 1, 1)
	if err != nil {
		return err
	}
	if nr.Effect == "" {
		return usageError{msg: "--effect allow or --effect deny is required", usage: rulesUsage}
	}
	nr.Tool = names[0]
	if pred != "" {
		if !json.Valid([]byte(pred)) {
			return usageError{msg: `--predicate must be a JSON object, like {"title":"buy milk"}`, usage: rulesUsage}
		}
		nr.Predicate = json.RawMessage(pred)
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		r, err := a.Rules.Create(ctx, owners[0], nr)
		if err != nil {
			return fmt.Errorf("rules add: %w", err)
		}
		printRule(e.stdout, r)
		return nil
	})
}

func rulesRemove(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("rules remove", flag.ContinueOnError)
	owner := ownerFlag(fs)
	ids, err := parseFlags(fs, args, rulesUsage, 1, 1)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(ids[0])
	if err != nil {
		return usageError{msg: fmt.Sprintf("%q is not a rule id (steward rules list)", ids[0]), usage: rulesUsage}
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		if err := a.Rules.Delete(ctx, owners[0], id); err != nil {
			return fmt.Errorf("rules remove: %w", err)
		}
		return nil
	})
}
