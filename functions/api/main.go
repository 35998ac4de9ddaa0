// Command api is the Lambda behind the other HTTP API routes (payload format 2.0): healthz,
// turns, approvals, conversations, activity, control and rules — everything but chat (a
// streaming Function URL) and confirm (its own function).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stewardhq/steward/internal/app"
)

func main() {
	app.Lambda("api", func(a *app.App) { lambda.Start(app.HTTPAPI(a.Handler())) })
}
