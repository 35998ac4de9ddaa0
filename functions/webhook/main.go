// Command webhook is the Lambda behind the HTTP API route POST /webhooks/{hook_id} (payload
// format 2.0): it verifies a Standard Webhooks delivery, queues its run and answers 202. The
// run itself is taken by the scheduler function's next tick (a frozen Lambda runs nothing
// after its response). Headers reach the router whole (see app.HTTPAPI).
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
		fmt.Fprintln(os.Stderr, "webhook:", err)
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
