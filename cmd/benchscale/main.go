// Command benchscale is `make bench-scale`: the approval cycle and the read routes of the
// real `steward serve` for small, medium and large owners of a generated database holding a
// year of many households, against an empty database in the same run (internal/benchscale
// says what is generated and measured).
//
//	benchscale [-steward bin/steward] [-scale 1] [-memory 0.2] [-seed 1] [-samples 200] [-warmup 20]
//
// The filled database is kept between runs, named by the generator's version, seed and
// scale: a re-run with the same ones skips the fill. The database URLs are the dev
// database's (scripts/devdb env); the benchmark makes databases of its own on that server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/stewardhq/steward/internal/benchscale"
	"github.com/stewardhq/steward/internal/config"
)

func main() {
	o := benchscale.Options{Log: os.Stderr}
	flag.StringVar(&o.Steward, "steward", "bin/steward", "the steward binary")
	scale := flag.Float64("scale", 1, "the filled database's size as a fraction of the full one (10,000 owners, 1,000,000 turns)")
	memory := flag.Float64("memory", 0.2, "conversation memory chunks per turn (1 is the full 1,000,000; the HNSW index build is the fill's slowest part)")
	seed := flag.Int64("seed", 1, "the generator's seed")
	flag.IntVar(&o.Samples, "samples", 200, "requests of each operation measured per owner")
	flag.IntVar(&o.Warmup, "warmup", 20, "warm-up cycles per owner before measuring")
	flag.Parse()
	if *scale <= 0 || *scale > 10 || *memory < 0 || *memory > 1 || o.Samples < 1 || o.Warmup < 0 {
		fmt.Fprintln(os.Stderr, "benchscale: -scale must be in (0, 10], -memory in [0, 1], -samples at least 1, -warmup at least 0")
		os.Exit(2)
	}
	full := benchscale.Full(*seed)
	full.MemoryPerTurn = *memory
	o.Sizes = full.Scaled(*scale)
	cfg, err := config.Load(os.Getenv)
	if err == nil {
		err = cfg.Require("DATABASE_URL", "APP_DATABASE_URL", "DOOR_DATABASE_URL", "SUPERUSER_DATABASE_URL")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(2)
	}
	o.DatabaseURL, o.AppDatabaseURL, o.DoorDatabaseURL = cfg.DatabaseURL, cfg.AppDatabaseURL, cfg.DoorDatabaseURL
	o.SuperuserDatabaseURL = cfg.SuperuserDatabaseURL
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := benchscale.Run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(1)
	}
}
