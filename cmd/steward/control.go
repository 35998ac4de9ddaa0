package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/config"
)

const controlUsage = `Usage:
  steward control stop [--owner ID] [--reason TEXT]
  steward control resume [--owner ID]
  steward control status [--json]

  stop    engage the kill switch: for the whole deployment, or for one owner with --owner.
          In-flight turns stop at their next step (aborted, nothing lost); new turns,
          confirms, scheduled jobs and webhooks are refused until resume.
  resume  release it.
  status  show the deployment's switch, its daily cost cap and use, and stopped owners.

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
	})
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
