// Command chat is the Lambda behind a Function URL with InvokeMode RESPONSE_STREAM: POST
// /v1/chat, streamed as server-sent events when the client asks for text/event-stream. It
// serves the same router as every other function (internal/httpapi); only the adapter differs.
package main

import (
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/stewardhq/steward/internal/app"
)

func main() {
	app.Lambda("chat", func(a *app.App) { lambdaurl.Start(app.WriteThrough(a.Handler())) })
}
