// Command chat is the Lambda behind a Function URL with InvokeMode RESPONSE_STREAM: POST
// /v1/chat, streamed as server-sent events when the client asks for text/event-stream. It
// serves the same router as every other function (internal/httpapi); only the adapter differs.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
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
	lambdaurl.Start(app.WriteThrough(a.Handler()))
	return nil
}
