// Command api is the Lambda behind the other HTTP API routes (payload format 2.0): healthz,
// turns, approvals, conversations, activity, control and rules — everything but chat (a
// streaming Function URL) and confirm (its own function).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		return err
	}
	a, err := app.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	lambda.Start(app.HTTPAPI(a.Handler()))
	return nil
}
