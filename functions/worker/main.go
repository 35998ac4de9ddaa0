// Command worker is the Lambda the run queue (SQS, STEWARD_RUN_QUEUE_URL) invokes: each
// record is {"owner_id","kind","key"}, one item of the work spine (internal/work) — a
// webhook's queued run, a turn that continues past its invocation, a Telegram update — handed
// on after its transaction committed, taken within seconds instead of at the scheduler's next
// tick (whose drain still takes what a lost message left). Records that fail are reported
// back (ReportBatchItemFailures), so only they are retried, then dead-lettered.
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
