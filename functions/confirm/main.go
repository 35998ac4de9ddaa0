// Command confirm is the Lambda behind the HTTP API route POST /v1/turns/{id}/confirm (payload
// format 2.0): it resumes a suspended turn with the owner's decisions, in a process that
// shares nothing with the one that suspended it but the database.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stewardhq/steward/internal/app"
)

func main() {
	app.Lambda("confirm", func(a *app.App) { lambda.Start(app.HTTPAPI(a.Handler())) })
}
