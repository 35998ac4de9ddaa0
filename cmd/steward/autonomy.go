package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/operator"
	"github.com/stewardhq/steward/internal/store"
)

const jobsUsage = `Usage:
  steward jobs list [--owner ID] [--json]
  steward jobs add NAME --cron EXPR [--tz ZONE] [--payload JSON] [--allow-notify] [--owner ID]
  steward jobs remove NAME [--owner ID]
  steward jobs run NAME [--owner ID]

Jobs: morning-briefing, weekly-review, inbox-scan (off unless scheduled; hourly is
"0 * * * *"). A schedule is a cron expression (5 fields, e.g. "0 7 * * *") in an IANA time zone (default UTC). A job delivers
through notify, which asks you each time unless a standing rule allows it: --allow-notify
adds that rule (printed; remove it with "steward rules remove ID"). "run" runs a job now,
as the scheduler would.
--owner may be left out when there is exactly one owner.
`

const webhooksUsage = `Usage:
  steward webhooks add --source NAME [--owner ID] [--json]

Creates an incoming webhook: a public id and a Standard Webhooks secret (whsec_…), printed
once. Deliveries go to POST /webhooks/{hook_id}, signed with the secret. Their payload
reaches the model only as data, and their writes always wait for the owner's approval.
--json prints {"hook_id","secret","url_path"}.
`

const memoryUsage = `Usage:
  steward memory consolidate [--owner ID]

Supersedes near-duplicate memories and summarises old conversations, for one owner or all.
`

func runJobs(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, jobsUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"list": jobsList, "add": jobsAdd, "remove": jobsRemove, "run": jobsRun,
	})
}

func runWebhooks(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, webhooksUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"add": webhooksAdd,
	})
}

func runMemory(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, memoryUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"consolidate": memoryConsolidate,
	})
}

// withApp builds the whole application (as a server would) for a command, and resolves
// --owner: given, or the only owner there is ("" with all=true means every owner).
func withApp(ctx context.Context, cfg config.Config, owner *uuidFlag, all bool, fn func(a *app.App, owners []uuid.UUID) error) error {
	if err := cfg.Require("APP_DATABASE_URL", "DOOR_DATABASE_URL"); err != nil {
		return err
	}
	a, err := app.New(ctx, cfg)
	if err != nil {
		return fmt.Errorf("open database: %w", store.VectorError(err))
	}
	defer a.Close()
	ids, err := ownersOf(ctx, a.Door.ListOwners, owner, all)
	if err != nil {
		return err
	}
	return fn(a, ids)
}

// ownersOf resolves --owner: given, or the owners list returns — exactly one unless all.
func ownersOf(ctx context.Context, list func(context.Context) ([]store.Owner, error), owner *uuidFlag, all bool) ([]uuid.UUID, error) {
	if owner.id != uuid.Nil {
		return []uuid.UUID{owner.id}, nil
	}
	owners, err := list(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(owners))
	for i, o := range owners {
		ids[i] = o.ID
	}
	if !all && len(ids) != 1 {
		return nil, fmt.Errorf("there are %d owners: say which with --owner ID (steward owners list)", len(ids))
	}
	return ids, nil
}

// withJobs runs fn with the operator's service and the owner whose jobs these are: under
// `steward remote` the deployment's, else the whole application's scheduler.
func withJobs(ctx context.Context, e env, cfg config.Config, owner *uuidFlag, fn func(svc operator.Service, owner uuid.UUID) error) error {
	if e.remote != nil {
		ids, err := ownersOf(ctx, e.remote.ListOwners, owner, false)
		if err != nil {
			return err
		}
		return fn(*e.remote, ids[0])
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		return fn(operator.LocalService(operator.Local{Door: a.Door, Jobs: a.Scheduler}), owners[0])
	})
}

func jobsList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("jobs list", flag.ContinueOnError)
	owner, asJSON := ownerFlag(fs), fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args, jobsUsage, 0, 0); err != nil {
		return err
	}
	return withJobs(ctx, e, cfg, owner, func(svc operator.Service, owner uuid.UUID) error {
		scheds, err := svc.ListJobs(ctx, owner)
		if err != nil {
			return err
		}
		if *asJSON {
			b, _ := json.Marshal(scheds)
			fmt.Fprintln(e.stdout, string(b))
			return nil
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "JOB\tCRON\tZONE\tENABLED\tNEXT")
		for _, s := range scheds {
			next := "-"
			if s.Next != nil {
				next = s.Next.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", s.Job, s.Cron, s.Timezone, s.Enabled, next)
		}
		return tw.Flush()
	})
}

func jobsAdd(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("jobs add", flag.ContinueOnError)
	owner := ownerFlag(fs)
	cron, tz, payload := fs.String("cron", "", "cron expression"), fs.String("tz", "UTC", "IANA time zone"), fs.String("payload", "", "JSON payload")
	allowNotify := fs.Bool("allow-notify", false, `also add the standing rule "allow notify", so jobs deliver without asking`)
	pos, err := parseFlags(fs, args, jobsUsage, 1, 1)
	if err != nil {
		return err
	}
	if *cron == "" {
		return usageError{msg: "--cron is required", usage: jobsUsage}
	}
	var raw json.RawMessage
	if *payload != "" {
		if !json.Valid([]byte(*payload)) {
			return usageError{msg: "--payload is not valid JSON", usage: jobsUsage}
		}
		raw = json.RawMessage(*payload)
	}
	return withJobs(ctx, e, cfg, owner, func(svc operator.Service, owner uuid.UUID) error {
		s, rule, err := svc.AddJob(ctx, owner, pos[0], *cron, *tz, raw, *allowNotify)
		if err != nil {
			return fmt.Errorf("jobs add: %w", err)
		}
		next := ""
		if s.Next != nil {
			next = ", next " + s.Next.Format(time.RFC3339)
		}
		fmt.Fprintf(e.stdout, "scheduled %s: %q in %s%s\n", s.Job, s.Cron, s.Timezone, next)
		if !*allowNotify {
			fmt.Fprintln(e.stdout, "its notification waits for your approval unless a rule allows notify (add one with --allow-notify)")
			return nil
		}
		if rule != nil {
			fmt.Fprintf(e.stdout, "added standing rule %s: allow notify, so jobs deliver without asking; a notify carrying a link in a turn that read outside content still asks (remove: steward rules remove %s)\n", rule.ID, rule.ID)
		}
		return nil
	})
}

func jobsRemove(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("jobs remove", flag.ContinueOnError)
	owner := ownerFlag(fs)
	pos, err := parseFlags(fs, args, jobsUsage, 1, 1)
	if err != nil {
		return err
	}
	return withJobs(ctx, e, cfg, owner, func(svc operator.Service, owner uuid.UUID) error {
		if err := svc.RemoveJob(ctx, owner, pos[0]); err != nil {
			return fmt.Errorf("jobs remove %s: %w", pos[0], err)
		}
		fmt.Fprintf(e.stdout, "removed the schedule of %s\n", pos[0])
		return nil
	})
}

func jobsRun(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("jobs run", flag.ContinueOnError)
	owner := ownerFlag(fs)
	pos, err := parseFlags(fs, args, jobsUsage, 1, 1)
	if err != nil {
		return err
	}
	if e.remote != nil {
		return usageError{msg: "jobs run runs locally only: on AWS the scheduler function runs due jobs every 5 minutes", usage: remoteUsage}
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		run, _, err := a.Scheduler.RunJob(ctx, owners[0], pos[0], time.Now().Truncate(time.Second), store.RunByCLI)
		if err != nil {
			return fmt.Errorf("jobs run %s: %w", pos[0], err)
		}
		fmt.Fprintf(e.stdout, "%s: %s", run.Job, run.Status)
		if run.TurnID != nil {
			fmt.Fprintf(e.stdout, " (turn %s)", run.TurnID)
		}
		if run.Error != "" {
			fmt.Fprintf(e.stdout, ": %s", run.Error)
		}
		fmt.Fprintln(e.stdout)
		return nil
	})
}

func webhooksAdd(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("webhooks add", flag.ContinueOnError)
	owner, source, asJSON := ownerFlag(fs), fs.String("source", "", "name of the sending service"), fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args, webhooksUsage, 0, 0); err != nil {
		return err
	}
	if *source == "" {
		return usageError{msg: "--source is required", usage: webhooksUsage}
	}
	return withJobs(ctx, e, cfg, owner, func(svc operator.Service, owner uuid.UUID) error {
		hook, err := svc.CreateWebhook(ctx, owner, *source)
		if err != nil {
			return fmt.Errorf("webhooks add: %w", err)
		}
		if *asJSON {
			b, _ := json.Marshal(hook)
			fmt.Fprintln(e.stdout, string(b))
			return nil
		}
		fmt.Fprintf(e.stdout, "hook id:  %s\nurl path: %s\nsecret:   %s\n", hook.HookID, hook.URLPath, hook.Secret)
		fmt.Fprintln(e.stderr, "The secret is shown once: give it to the sending service now.")
		return nil
	})
}

func memoryConsolidate(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("memory consolidate", flag.ContinueOnError)
	owner := ownerFlag(fs)
	if _, err := parseFlags(fs, args, memoryUsage, 0, 0); err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, true, func(a *app.App, owners []uuid.UUID) error {
		for _, id := range owners {
			c, err := a.Memory.Consolidate(ctx, id)
			if err != nil {
				return fmt.Errorf("consolidate %s: %w", id, err)
			}
			b, _ := json.Marshal(c)
			fmt.Fprintf(e.stdout, "%s: %s\n", id, b)
		}
		return nil
	})
}
