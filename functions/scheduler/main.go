// Command scheduler is the Lambda EventBridge Scheduler invokes (a ScheduleV2 rule): its input
// is autonomy.Event — a tick {"scheduled_time"} (the idempotency key, never the execution
// id), a direct job {"job","owner_id"}, or a queued webhook run {"owner_id","run_id"}. Each
// tick runs every due job once and drains webhook runs, notifications and memory ingestion.
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
		fmt.Fprintln(os.Stderr, "scheduler:", err)
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
	// The logger rides on every invocation's context; a misspelt Input field is an error
	// (retried, then dead-lettered), not a silent tick.
	lambda.StartWithOptions(a.Scheduler.Handle, lambda.WithContext(a.Logger.WithContext(ctx)), lambda.WithDisallowUnknownFields(true))
	return nil
}
