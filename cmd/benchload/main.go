// Command benchload is `make bench-load`: many owners at once against the real `steward
// serve` on loopback for a bounded time, then the figures and the invariants
// (internal/benchload says what runs and what is checked).
//
//	benchload [-steward bin/steward] [-owners 200] [-conversations 3] [-duration 5m] [-think 5s] …
//
// It exits 1 when a response was a 5xx, a request got no answer or an invariant failed. The
// database URLs are the dev database's (scripts/devdb env); the run bootstraps and resets a
// database of its own on that server, named after the dev database's (STEWARD_DB_NAME,
// steward by default): steward_bench_load.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/stewardhq/steward/internal/benchcycle"
	"github.com/stewardhq/steward/internal/benchload"
	"github.com/stewardhq/steward/internal/config"
)

func main() {
	o := benchload.Options{Bench: benchcycle.Options{Database: cmp.Or(os.Getenv("STEWARD_DB_NAME"), "steward") + "_bench_load", Log: os.Stderr}}
	w := &o.Workload
	flag.StringVar(&o.Bench.Steward, "steward", "bin/steward", "the steward binary")
	flag.IntVar(&o.Owners, "owners", 200, "owners, each with its API key and webhook")
	flag.IntVar(&w.Conversations, "conversations", 3, "conversations each owner runs at once")
	flag.IntVar(&w.Turns, "turns", 8, "turns of a conversation before it is left for a new one")
	flag.DurationVar(&w.Duration, "duration", 5*time.Minute, "how long new work starts")
	flag.IntVar(&w.MaxCycles, "max-cycles", 200000, "at most this many chats over the run (0: no bound but -duration)")
	flag.DurationVar(&w.Think, "think", 5*time.Second, "mean pause between two actions of a conversation (side actions: twice that)")
	flag.IntVar(&w.RaceEvery, "race-every", 5, "every n-th confirm is sent -race-width times at once (0: never)")
	flag.IntVar(&w.RaceWidth, "race-width", 3, "confirms sent at once on one turn")
	flag.IntVar(&w.DenyEvery, "deny-every", 5, "every n-th decision is a denial (0: never)")
	flag.DurationVar(&w.Grace, "grace", 2*time.Minute, "after -duration: how long suspended turns are still confirmed and background work waited for")
	flag.DurationVar(&o.RSSWindow, "rss-window", 4*time.Minute, "the end of the load over which RSS must stay within ±10 %")
	flag.StringVar(&o.ServerLog, "server-log", "bin/bench-load-serve.log", "file receiving steward serve's log")
	flag.Parse()
	w.Log = os.Stderr
	cfg, err := config.Load(os.Getenv)
	if err == nil {
		err = cfg.Require("DATABASE_URL", "APP_DATABASE_URL", "DOOR_DATABASE_URL", "SUPERUSER_DATABASE_URL")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchload:", err)
		os.Exit(2)
	}
	o.Bench.DatabaseURL, o.Bench.AppDatabaseURL, o.Bench.DoorDatabaseURL = cfg.DatabaseURL, cfg.AppDatabaseURL, cfg.DoorDatabaseURL
	o.Bench.SuperuserDatabaseURL = cfg.SuperuserDatabaseURL
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r, err := benchload.Run(ctx, o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchload:", err)
		os.Exit(1)
	}
	if !r.OK() {
		os.Exit(1)
	}
}
