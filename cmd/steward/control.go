package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/steward"
)

const controlUsage = `Usage:
  steward control stop [--owner ID] [--reason TEXT]
  steward control resume [--owner ID]
  steward control status [--json]
  steward control cap USD

  stop    engage the kill switch: for the whole deployment, or for one owner with --owner.
          In-flight turns stop at their next step (aborted, nothing lost); new turns,
          confirms, scheduled jobs and webhooks are refused until resume.
  resume  release it.
  status  show the deployment's switch, its daily cost cap and use, and stopped owners.
  cap     set the deployment's daily cost cap in dollars (e.g. 100 or 12.50): once every
          owner's model cost since midnight UTC reaches it, every owner's new turns are
          refused (503 daily_cap) until midnight UTC. 0 refuses every new turn; there is no
          "unlimited". New deployments start at $50; STEWARD_DAILY_COST_CAP_USD sets it at
          every steward migrate up (and every AWS deploy, the DailyCostCapUsd parameter).

Connects as DATABASE_URL (steward_owner). Owners can also stop themselves over the API
(POST /v1/control/stop).
`

func runControl(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, controlUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"stop": func(ctx context.Context, e env, cfg config.Config, args []string) error {
			return setKill(ctx, e, cfg, args, true)
		},
		"resume": func(ctx context.Context, e env, cfg config.Config, args []string) error {
			return setKill(ctx, e, cfg, args, false)
		},
		"status": controlStatus,
		"cap":    controlCap,
	})
}

func controlCap(ctx context.Context, e env, cfg config.Config, args []string) error {
	pos, err := parseFlags(flag.NewFlagSet("control cap", flag.ContinueOnError), args, controlUsage, 1, 1)
	if err != nil {
		return err
	}
	micros, err := steward.ParseDollars(pos[0])
	if err != nil {
		return fmt.Errorf("control cap: the cap %w", err)
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	if err := svc.SetCostCap(ctx, micros); err != nil {
		return fmt.Errorf("control cap: %w", err)
	}
	fmt.Fprintf(e.stdout, "The deployment's daily cost cap is $%s (across every owner, reset at midnight UTC).\n", formatMicros(micros))
	return nil
}

func setKill(ctx context.Context, e env, cfg config.Config, args []string, engaged bool) error {
	fs := flag.NewFlagSet("control", flag.ContinueOnError)
	owner := ownerFlag(fs) // unset: the whole deployment
	reason := fs.String("reason", "stopped by the operator", "why")
	if _, err := parseFlags(fs, args, controlUsage, 0, 0); err != nil {
		return err
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	if err := svc.SetKill(ctx, owner.id, engaged, *reason); err != nil {
		return fmt.Errorf("control: %w", err)
	}
	what := "the deployment"
	if owner.id != uuid.Nil {
		what = "owner " + owner.id.String()
	}
	state := "resumed"
	if engaged {
		state = "stopped"
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", what, state)
	return nil
}

func controlStatus(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("control status", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args, controlUsage, 0, 0); err != nil {
		return err
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	st, err := svc.Status(ctx)
	if err != nil {
		return fmt.Errorf("control status: %w", err)
	}
	if *asJSON {
		b, _ := json.Marshal(st)
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	if st.Stopped {
		fmt.Fprintf(e.stdout, "deployment: STOPPED since %s: %s\n", st.Since.Format("2006-01-02 15:04:05"), st.Reason)
	} else {
		fmt.Fprintln(e.stdout, "deployment: running")
	}
	fmt.Fprintf(e.stdout, "cost today: $%.4f of a $%.2f daily cap\n", float64(st.CostToday)/1e6, float64(st.CostCapMicros)/1e6)
	for _, o := range st.StoppedOwners {
		fmt.Fprintf(e.stdout, "owner %s (%s): STOPPED since %s: %s\n", o.OwnerID, o.Name, o.Since.Format("2006-01-02 15:04:05"), o.Reason)
	}
	return nil
}
