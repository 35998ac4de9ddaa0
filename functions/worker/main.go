// Command worker is the Lambda the run queue (SQS, STEWARD_RUN_QUEUE_URL) invokes: each
// record is {"owner_id","run_id"}, a webhook's queued run the webhook function sent after
// its transaction committed, taken within seconds instead of at the scheduler's next tick
// (which still drains what a lost message left). Records that fail are reported back
// (ReportBatchItemFailures), so only they are retried, then dead-lettered.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stewardhq/steward/internal/app"
)

func main() {
	app.Lambda("worker", func(a *app.App) {
		lambda.StartWithOptions(app.Invocation(a, a.Work.HandleMessages), lambda.WithContext(a.Logger.WithContext(context.Background())))
	})
}
