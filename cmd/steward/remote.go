package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/deployment"
)

const remoteUsage = `Usage:
  steward remote owners add NAME [--stack NAME | --function NAME] [--json]
  steward remote migrate [--stack NAME | --function NAME]

  The same work as owners add and migrate, done by a deployment's migrate function on AWS
  (docs/DEPLOY.md): the function is invoked with your AWS credentials, so no database
  connection from your machine is needed.

  owners add  create an owner and its first API key. The key is printed once and cannot
              be shown again. --json prints {"owner_id","name","api_key"}.
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
		"owners": func(ctx context.Context, e env, cfg config.Config, args []string) error {
			return subcommand(ctx, e, cfg, args, remoteUsage, map[string]func(context.Context, env, config.Config, []string) error{
				"add": remoteOwnersAdd,
			})
		},
		"migrate": remoteMigrate,
	})
}

// remoteFlags are the flags naming the migrate function.
type remoteFlags struct{ stack, function *string }

func newRemoteFlags(fs *flag.FlagSet) remoteFlags {
	return remoteFlags{
		stack:    fs.String("stack", "steward", "the CloudFormation stack's name"),
		function: fs.String("function", "", "the migrate function's name or ARN"),
	}
}

// invoke sends ev to the migrate function and decodes its result.
func (f remoteFlags) invoke(ctx context.Context, cfg config.Config, ev deployment.Event) (deployment.Result, error) {
	var res deployment.Result
	name := *f.function
	if name == "" {
		name = *f.stack + "-migrate"
	}
	fn, err := awsapi.NewFunction(cfg.AWS, name)
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
		return res, fmt.Errorf("the function %s answered %.200q, not a result", name, out)
	}
	return res, nil
}

func remoteOwnersAdd(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("remote owners add", flag.ContinueOnError)
	rf := newRemoteFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args, remoteUsage, 1, 1)
	if err != nil {
		return err
	}
	res, err := rf.invoke(ctx, cfg, deployment.Event{Action: deployment.ActionAddOwner, Name: pos[0]})
	if err != nil {
		return fmt.Errorf("remote owners add: %w", err)
	}
	if res.APIKey == "" {
		return fmt.Errorf("remote owners add: the function created no key")
	}
	if *asJSON {
		return writeJSON(e.stdout, struct {
			OwnerID string `json:"owner_id"`
			Name    string `json:"name"`
			APIKey  string `json:"api_key"`
		}{res.OwnerID, res.Name, res.APIKey})
	}
	fmt.Fprintf(e.stdout, "Created owner %q (id %s).\nAPI key: %s\n", res.Name, res.OwnerID, res.APIKey)
	fmt.Fprintln(e.stderr, "Save this API key now: it will not be shown again (only its hash is stored).\n"+
		"Open the WebAppUrl output of the stack and sign in with it.")
	return nil
}

func remoteMigrate(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("remote migrate", flag.ContinueOnError)
	rf := newRemoteFlags(fs)
	if _, err := parseFlags(fs, args, remoteUsage, 0, 0); err != nil {
		return err
	}
	res, err := rf.invoke(ctx, cfg, deployment.Event{Action: deployment.ActionMigrate})
	if err != nil {
		return fmt.Errorf("remote migrate: %w", err)
	}
	fmt.Fprintf(e.stdout, "Schema at version %d.\n", res.SchemaVersion)
	return nil
}
