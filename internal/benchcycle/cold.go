package benchcycle

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"time"

	"github.com/stewardhq/steward/internal/llm/gemini/geminifake"
)

// Cold is `benchcycle -cold N` (make bench-cold): the first cycles a freshly started `steward
// serve` runs, on a pool whose every connection is new — what a deploy, a restart or a
// recycled connection costs (docs/PERFORMANCE.md). It sets up o.Database as Run does, once;
// then, runs times, for each binary in turn (so that a baseline and a candidate share the
// machine's state), starts the binary's `steward serve` (directly on PostgreSQL, with the
// fake Gemini), drives o.Cycles suspend → approve cycles with o.Clients clients from its first
// request, then as many again on the now warm process (the reference), and stops it. It
// writes one row per process and, per binary, the median of each column over its runs.
func Cold(ctx context.Context, o Options, binaries []string, runs int, w io.Writer) error {
	if len(binaries) == 0 || runs < 1 || o.Cycles < 1 || o.Clients < 1 {
		return fmt.Errorf("cold: want a binary, a run, a cycle and a client (got %d, %d, %d, %d)", len(binaries), runs, o.Cycles, o.Clients)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(o.Log, "bench-cold: "+format+"\n", args...) }
	o.Steward = binaries[0] // the set-up's commands
	env, apiKey, err := setUp(ctx, o, "cold", logf)
	if err != nil {
		return err
	}
	gemini := geminifake.New()
	fake := httptest.NewServer(gemini)
	defer fake.Close()
	type row struct {
		binary  string
		p, warm phase
	}
	var rows []row
	for run := 1; run <= runs; run++ {
		for _, bin := range binaries {
			serve, err := StartServer(ctx, bin, env, o.Log, "GEMINI_API_KEY", "fake", "GEMINI_BASE_URL", fake.URL,
				"STEWARD_MAX_TURNS_PER_OWNER", fmt.Sprint(max(o.Clients*2, 4)), "STEWARD_LOG_LEVEL", "warn")
			if err != nil {
				return fmt.Errorf("%s: %w", bin, err)
			}
			client := &driver{base: serve.Base, key: apiKey, http: &http.Client{
				Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}}
			var p, warm phase
			err = client.run(ctx, o.Cycles, o.Clients, &p)
			if err == nil { // the same again on the now warm process: the reference
				err = client.run(ctx, o.Cycles, o.Clients, &warm)
			}
			if stopErr := serve.Stop(); err == nil && stopErr != nil {
				err = fmt.Errorf("steward serve: %w", stopErr)
			}
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", bin, run, err)
			}
			logf("run %d, %s: chat p99 %s, confirm p99 %s", run, bin, ms(Percentile(p.suspend, .99)), ms(Percentile(p.resume, .99)))
			rows = append(rows, row{bin, p, warm})
		}
	}
	if err := gemini.Err(); err != nil {
		return err
	}
	fmt.Fprintf(w, "The first %d cycles of a new steward serve, %d clients (chat → suspended, confirm → completed), and the next %[1]d (warm):\n\n", o.Cycles, o.Clients)
	fmt.Fprintln(w, "| run | binary | chat p50 | chat p99 | confirm p50 | confirm p99 | cycles/s | warm: chat p99 | warm: confirm p99 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	cols := func(r row) []float64 {
		return []float64{float64(Percentile(r.p.suspend, .5)), float64(Percentile(r.p.suspend, .99)),
			float64(Percentile(r.p.resume, .5)), float64(Percentile(r.p.resume, .99)), r.p.perSecond(),
			float64(Percentile(r.warm.suspend, .99)), float64(Percentile(r.warm.resume, .99))}
	}
	line := func(run, bin string, c []float64) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %.1f | %s | %s |\n", run, bin,
			ms(time.Duration(c[0])), ms(time.Duration(c[1])), ms(time.Duration(c[2])), ms(time.Duration(c[3])), c[4],
			ms(time.Duration(c[5])), ms(time.Duration(c[6])))
	}
	for i, r := range rows {
		line(fmt.Sprint(i/len(binaries)+1), r.binary, cols(r))
	}
	for _, bin := range binaries {
		var per [7][]float64
		for _, r := range rows {
			if r.binary == bin {
				for i, v := range cols(r) {
					per[i] = append(per[i], v)
				}
			}
		}
		med := make([]float64, len(per))
		for i := range per {
			med[i] = median(per[i])
		}
		line("median", bin, med)
	}
	return nil
}

// median is the middle value of xs (the mean of the two middle ones for an even count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
