// Command confirm is the Lambda behind the HTTP API route POST /v1/turns/{id}/confirm (payload
// format 2.0): it resumes a suspended turn with the owner's decisions, in a process that
// shares nothing with the one that suspended it but the database.
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
		fmt.Fprintln(os.Stderr, "confirm:", err)
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
