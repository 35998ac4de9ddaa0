// Command benchcycle is `make bench-cycle`: the approval cycle of the real `steward serve`
// against a fake Gemini, then the LangGraph.js peer, on the same PostgreSQL server, printed
// as one table (internal/benchcycle says what is measured and how).
//
//	benchcycle [-steward bin/steward] [-peer DIR] [-cycles N] [-clients N] [-owners N]
//	benchcycle -soak N [-steward bin/steward]
//	benchcycle -cold N [-steward bin/steward] [-baseline OTHER] [-cycles 100] [-clients 8]
//
// With -soak N (make bench-soak) it runs only steward serve, N sequential cycles, and prints
// the serve process's RSS at N/2 and N cycles (benchcycle.Soak). With -cold N (make
// bench-cold) it starts a new steward serve N times (and the -baseline binary's, in turn) and
// measures its first cycles, on a pool whose connections are all new (benchcycle.Cold).
//
// The database URLs are the dev database's (scripts/devdb env); the benchmark bootstraps and
// resets databases of its own on that server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/stewardhq/steward/internal/benchcycle"
	"github.com/stewardhq/steward/internal/config"
)

func main() {
	o := benchcycle.Options{Database: "steward_bench", PeerDatabase: "steward_bench_peer", Log: os.Stderr}
	flag.StringVar(&o.Steward, "steward", "bin/steward", "the steward binary")
	flag.StringVar(&o.PeerDir, "peer", "bin/peer-langgraph", "the LangGraph.js peer: bench.mjs with node_modules installed")
	flag.IntVar(&o.Cycles, "cycles", 300, "cycles per phase (sequential, concurrent)")
	flag.IntVar(&o.Warmup, "warmup", 20, "warm-up cycles before measuring")
	flag.IntVar(&o.Clients, "clients", 8, "clients of the concurrent phase")
	flag.IntVar(&o.Owners, "owners", 1, "owners the concurrent phase's clients drive (client i the owner i mod N); -owners 8 -clients 8: one owner each")
	flag.StringVar(&o.Database, "db", o.Database, "Steward's database on the dev server (made afresh)")
	flag.StringVar(&o.PeerDatabase, "peer-db", o.PeerDatabase, "the peer's database on the dev server (made afresh)")
	trace := flag.String("trace", "", "write one line per round trip of steward serve to PostgreSQL, naming its statements, to this file")
	flag.BoolVar(&o.NoPeer, "no-peer", false, "skip the LangGraph.js peer")
	soak := flag.Int("soak", 0, "run N cycles against steward serve only and print its RSS at N/2 and N (no peer)")
	cold := flag.Int("cold", 0, "start a new steward serve N times and measure its first -cycles cycles (no peer, no warm-up)")
	baseline := flag.String("baseline", "", "with -cold: another steward binary, run in turn with -steward (first)")
	flag.Parse()
	if *trace != "" {
		f, err := os.Create(*trace)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchcycle:", err)
			os.Exit(2)
		}
		defer f.Close()
		o.Trace = f
	}
	cfg, err := config.Load(os.Getenv)
	if err == nil {
		err = cfg.Require("DATABASE_URL", "APP_DATABASE_URL", "DOOR_DATABASE_URL", "SUPERUSER_DATABASE_URL")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcycle:", err)
		os.Exit(2)
	}
	o.DatabaseURL, o.AppDatabaseURL, o.DoorDatabaseURL = cfg.DatabaseURL, cfg.AppDatabaseURL, cfg.DoorDatabaseURL
	o.SuperuserDatabaseURL = cfg.SuperuserDatabaseURL
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *soak > 0 {
		o.Database = "steward_bench_soak"
		if _, err := benchcycle.Soak(ctx, o, *soak, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "benchcycle:", err)
			os.Exit(1)
		}
		return
	}
	if *cold > 0 {
		o.Database = "steward_bench_cold"
		bins := []string{o.Steward}
		if *baseline != "" {
			bins = []string{*baseline, o.Steward}
		}
		if err := benchcycle.Cold(ctx, o, bins, *cold, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "benchcycle:", err)
			os.Exit(1)
		}
		return
	}
	if err := benchcycle.Run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchcycle:", err)
		os.Exit(1)
	}
}
