// Command webhook is the Lambda behind the HTTP API route POST /webhooks/{hook_id} (payload
// format 2.0): it verifies a Standard Webhooks delivery, queues its run and answers 202. The
// run itself is taken by the scheduler function's next tick (a frozen Lambda runs nothing
// after its response). Headers reach the router whole (see app.HTTPAPI).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stewardhq/steward/internal/app"
)

func main() {
	app.Lambda("webhook", func(a *app.App) { lambda.Start(app.HTTPAPI(a.Handler())) })
}
