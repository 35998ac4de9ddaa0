// Command scheduler is the Lambda EventBridge Scheduler invokes (a ScheduleV2 rule): its input
// is autonomy.Event — a tick {"scheduled_time"} (the idempotency key, never the execution
// id), a direct job {"job","owner_id"}, or a queued webhook run {"owner_id","run_id"}. Each
// tick runs every due job once and drains webhook runs, notifications and memory ingestion.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stewardhq/steward/internal/app"
)

func main() {
	// The logger rides on every invocation's context; a misspelt Input field is an error
	// (retried, then dead-lettered), not a silent tick.
	app.Lambda("scheduler", func(a *app.App) {
		lambda.StartWithOptions(app.Invocation(a, a.Scheduler.Handle),
			lambda.WithContext(a.Logger.WithContext(context.Background())), lambda.WithDisallowUnknownFields(true))
	})
}
