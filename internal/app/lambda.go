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
// end with the execution environment. A failure before that (the configuration, a secret,
// a malformed database URL) prints "<name>: <error>" and exits 1, which Lambda reports as an
// init error. The database connections and role checks run in the background meanwhile
// (docs/ARCHITECTURE.md §10): every invocation waits for them — App.Handler and Invocation
// — and is refused with their error if they failed, and the next invocation checks again.
func Lambda(name string, start func(*App)) {
	cfg, err := config.Load(os.Getenv)
	var a *App
	if err == nil {
		a, err = build(context.Background(), cfg, settings{logOut: os.Stderr, lazy: true})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	start(a)
}
