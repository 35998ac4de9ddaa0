package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/deployment"
	"github.com/stewardhq/steward/internal/operator"
)

const remoteUsage = `Usage:
  steward remote owners add NAME [--json]
  steward remote owners list [--json]
  steward remote owners budget --owner ID [--messages N] [--cost-usd X] [--json]
  steward remote keys add --owner ID [--name NAME] [--json]
  steward remote keys list --owner ID [--json]
  steward remote keys revoke --owner ID KEY_ID
  steward remote control stop [--owner ID] [--reason TEXT]
  steward remote control resume [--owner ID]
  steward remote control status [--json]
  steward remote households create|add|remove|list|policy …
  steward remote jobs list|add|remove …
  steward remote webhooks add --source NAME [--owner ID] [--json]
  steward remote migrate
  each with [--stack NAME | --function NAME]

  The commands of the same names (steward owners|keys|control|households|jobs|webhooks
  help), done by a deployment's migrate function on AWS (docs/DEPLOY.md): the function is
  invoked with your AWS credentials and does the work in the database, so no connection
  from your machine is needed (with Database=aurora the database is in private subnets).
  jobs run is not among them: the scheduler function runs due jobs every 5 minutes.

  keys add    a new key for an owner who lost theirs (key recovery), printed once.
  migrate     bootstrap the roles and the database and apply the migrations (a deploy does
              this itself; run it after rotating a role's password).

  --stack     the CloudFormation stack's name (default steward): the function is
              <stack>-migrate
  --function  the function's name or ARN, instead of the stack's

Needs AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) with
lambda:InvokeFunction on the function, e.g.:
  eval "$(aws configure export-credentials --format env)"; export AWS_REGION=us-east-1
`

func runRemote(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, remoteUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"owners":     remoteCommand("owners", runOwners),
		"keys":       remoteCommand("keys", runKeys),
		"control":    remoteCommand("control", runControl),
		"households": remoteCommand("households", runHouseholds),
		"jobs":       remoteCommand("jobs", runJobs),
		"webhooks":   remoteCommand("webhooks", runWebhooks),
		"migrate":    remoteMigrate,
	})
}

// remoteCommand runs the local command run with the deployment's operator service: the
// --stack and --function flags name the migrate function, every other argument is the
// command's own.
func remoteCommand(name string, run func(context.Context, env, config.Config, []string) error) func(context.Context, env, config.Config, []string) error {
	return func(ctx context.Context, e env, cfg config.Config, args []string) error {
		target, rest, err := remoteTarget(args)
		if err != nil {
			return err
		}
		svc := operator.RemoteService(operator.Remote{Invoke: func(ctx context.Context, c operator.Call) (operator.Reply, error) {
			res, err := target.invoke(ctx, cfg, deployment.Event{Action: deployment.ActionOperator, Call: &c})
			if err != nil {
				return operator.Reply{}, err
			}
			if res.Reply == nil {
				return operator.Reply{}, fmt.Errorf("the function %s answered without a reply: is the deployment older than this CLI? upgrade it (git pull && sam build && sam deploy)", target.name())
			}
			return *res.Reply, nil
		}})
		e.remote = &svc
		if err := run(ctx, e, cfg, rest); err != nil {
			return fmt.Errorf("remote %s: %w", name, err)
		}
		return nil
	}
}

// remoteFlags name the migrate function.
type remoteFlags struct{ stack, function string }

// remoteTarget takes --stack and --function (--flag value or --flag=value) out of args.
func remoteTarget(args []string) (remoteFlags, []string, error) {
	f := remoteFlags{stack: "steward"}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (name != "stack" && name != "function") {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return f, nil, usageError{msg: "flag needs an argument: -" + name, usage: remoteUsage}
			}
			i++
			value = args[i]
		}
		if name == "stack" {
			f.stack = value
		} else {
			f.function = value
		}
	}
	return f, rest, nil
}

// name is the function's name or ARN.
func (f remoteFlags) name() string {
	if f.function != "" {
		return f.function
	}
	return f.stack + "-migrate"
}

// invoke sends ev to the migrate function and decodes its result.
func (f remoteFlags) invoke(ctx context.Context, cfg config.Config, ev deployment.Event) (deployment.Result, error) {
	var res deployment.Result
	fn, err := awsapi.NewFunction(cfg.AWS, f.name())
	if err != nil {
		return res, err
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return res, err
	}
	out, err := fn.Invoke(ctx, payload)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return res, fmt.Errorf("the function %s answered %.200q, not a result", f.name(), out)
	}
	return res, nil
}

func remoteMigrate(ctx context.Context, e env, cfg config.Config, args []string) error {
	target, rest, err := remoteTarget(args)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("remote migrate", flag.ContinueOnError)
	if _, err := parseFlags(fs, rest, remoteUsage, 0, 0); err != nil {
		return err
	}
	res, err := target.invoke(ctx, cfg, deployment.Event{Action: deployment.ActionMigrate})
	if err != nil {
		return fmt.Errorf("remote migrate: %w", err)
	}
	fmt.Fprintf(e.stdout, "Schema at version %d.\n", res.SchemaVersion)
	return nil
}
