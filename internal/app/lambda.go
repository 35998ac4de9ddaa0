package app

import (
	"context"
	"fmt"
	"os"

	"github.com/stewardhq/steward/internal/config"
)

// Lambda is the main of every function in functions/*: it reads the configuration, builds
// the App once for the cold start, and hands it to start, which runs the Lambda runtime's
// loop (lambda.Start and friends) and never returns — so nothing closes the App: its pools
// end with the execution environment. A failure before that prints "<name>: <error>" and
// exits 1, which Lambda reports as an init error.
func Lambda(name string, start func(*App)) {
	cfg, err := config.Load(os.Getenv)
	var a *App
	if err == nil {
		a, err = New(context.Background(), cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	start(a)
}
