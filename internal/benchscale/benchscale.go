// Package benchscale is the benchmark behind `make bench-scale` (cmd/benchscale): is an
// owner's request as cheap when the database holds a year of many households' lives as when
// it is empty? It fills a database of its own with generated data (fill.go: reproducible
// from a seed, set-based SQL, kept between runs), VACUUM ANALYZEs it, then measures the
// approval cycle and the read routes through the real `steward serve` for a small, a medium
// and a large owner of it, and for an owner of an empty database in the same run: p50/p99 at
// the client and CPU per operation (the serve process and its PostgreSQL backends, as
// internal/benchcycle measures the cycle's), with the ratio to empty (target ≤ 1.3×).
package benchscale

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stewardhq/steward/internal/benchcycle"
)

// Options are the benchmark's settings (cmd/benchscale's flags).
type Options struct {
	// Steward is the steward binary.
	Steward string
	// The dev database's URLs (scripts/devdb env, through internal/config); the benchmark
	// makes databases of its own on that server.
	DatabaseURL, AppDatabaseURL, DoorDatabaseURL, SuperuserDatabaseURL string
	// Sizes are what the filled database holds (Full scaled).
	Sizes Sizes
	// Samples is the requests of each operation measured per owner, after Warmup cycles.
	Samples, Warmup int
	// Log receives progress lines.
	Log io.Writer
}

func (o Options) logf(format string, args ...any) {
	fmt.Fprintf(o.Log, "bench-scale: "+format+"\n", args...)
}

// emptyDatabase is the database the empty side runs on (reset on every run).
const emptyDatabase = "steward_scale_empty"

// Run fills (or reuses) the scale database, measures both databases and writes the table to w.
func Run(ctx context.Context, o Options, w io.Writer) error {
	filled := o.Sizes.Database()
	fenv, err := ensureFilled(ctx, o, filled)
	if err != nil {
		return fmt.Errorf("fill %s: %w", filled, err)
	}
	owners, err := pickOwners(ctx, o, filled, fenv)
	if err != nil {
		return err
	}

	bo := o.cycleOptions(emptyDatabase)
	eenv, err := benchcycle.Prepare(ctx, bo, o.logf)
	if err != nil {
		return fmt.Errorf("%s: %w", emptyDatabase, err)
	}
	eo, err := benchcycle.AddOwner(ctx, bo, eenv, "empty")
	if err != nil {
		return err
	}
	empty, err := measure(ctx, o, emptyDatabase, eenv, []target{{size: "empty", apiKey: eo.APIKey}})
	if err != nil {
		return fmt.Errorf("%s: %w", emptyDatabase, err)
	}
	full, err := measure(ctx, o, filled, fenv, owners)
	if err != nil {
		return fmt.Errorf("%s: %w", filled, err)
	}
	if err := describe(ctx, o, filled, w); err != nil {
		return err
	}
	return writeTable(w, empty["empty"], owners, full)
}

// describe writes what the filled database holds: its rows per table (the planner's counts,
// after VACUUM ANALYZE) and its size.
func describe(ctx context.Context, o Options, db string, w io.Writer) error {
	conn, err := benchcycle.Connect(ctx, o.SuperuserDatabaseURL, db)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var line string
	err = conn.QueryRow(ctx, `SELECT string_agg(to_char(n, 'FM999,999,999') || ' ' || t, ', ' ORDER BY o) || '; '
		|| pg_size_pretty(pg_database_size(current_database()))
		FROM (SELECT o, t, (SELECT coalesce(sum(c.reltuples), 0)::bigint FROM pg_class c
			WHERE c.relkind = 'r' AND (c.relname = t OR c.relname ~ ('^' || t || '_p[0-9]+$'))) AS n
			FROM unnest(ARRAY['owners', 'turns', 'tool_calls', 'messages', 'audit_log', 'memory_chunks', 'documents',
				'ledger_postings', 'job_runs']) WITH ORDINALITY AS x (t, o)) r`).Scan(&line)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s holds %s.\n\n", db, line)
	return err
}

// cycleOptions are o as internal/benchcycle's options on database db.
func (o Options) cycleOptions(db string) benchcycle.Options {
	return benchcycle.Options{Steward: o.Steward, DatabaseURL: o.DatabaseURL, AppDatabaseURL: o.AppDatabaseURL,
		DoorDatabaseURL: o.DoorDatabaseURL, SuperuserDatabaseURL: o.SuperuserDatabaseURL, Database: db, Log: o.Log}
}

// Target is the ratio to empty every operation should stay within.
const Target = 1.3

// writeTable prints one Markdown table: per operation and owner, p50, p99 and CPU per
// operation, empty and filled, with the ratio of each.
func writeTable(w io.Writer, empty []sample, owners []target, full map[string][]sample) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintf(tw, "| operation\t owner (turns)\t p50 empty → filled\t ×\t p99 empty → filled\t ×\t CPU/op empty → filled\t × |\n")
	fmt.Fprintf(tw, "|---\t---\t---\t---\t---\t---\t---\t---|\n")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
	ratio := func(e, f time.Duration) string {
		if e <= 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f", float64(f)/float64(e))
	}
	for i, op := range operations() {
		for _, t := range owners {
			e, f := empty[i], full[t.size][i]
			p50e, p50f := benchcycle.Percentile(e.latencies, .5), benchcycle.Percentile(f.latencies, .5)
			p99e, p99f := benchcycle.Percentile(e.latencies, .99), benchcycle.Percentile(f.latencies, .99)
			fmt.Fprintf(tw, "| %s\t %s (%d)\t %s → %s ms\t %s\t %s → %s ms\t %s\t %s → %s ms\t %s |\n",
				op.name, t.size, t.turns, ms(p50e), ms(p50f), ratio(p50e, p50f), ms(p99e), ms(p99f), ratio(p99e, p99f),
				ms(e.cpuPerOp()), ms(f.cpuPerOp()), ratio(e.cpuPerOp(), f.cpuPerOp()))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
