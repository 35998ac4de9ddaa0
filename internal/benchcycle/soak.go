package benchcycle

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/stewardhq/steward/internal/llm/gemini/geminifake"
)

// SoakResult is what Soak measured: the serve process's VmRSS after each sampled cycle count.
type SoakResult struct {
	Cycles  []int
	RSSMB   []float64
	Elapsed time.Duration
}

// Soak is `benchcycle -soak N` (make bench-soak), the memory target (docs/PERFORMANCE.md): it sets up
// o.Database as Run does, starts the real `steward serve` (directly on PostgreSQL, no
// counting proxy) with the fake Gemini, drives n sequential suspend → approve cycles over
// HTTP, and samples the serve process's RSS (VmRSS of /proc/<pid>/status) every n/10 cycles,
// n/2 and n included. It writes the samples and the growth from n/2 to n to w.
func Soak(ctx context.Context, o Options, n int, w io.Writer) (SoakResult, error) {
	var res SoakResult
	if n < 2 {
		return res, fmt.Errorf("soak: want at least 2 cycles, got %d", n)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(o.Log, "bench-soak: "+format+"\n", args...) }
	env, apiKey, err := setUp(ctx, o, "soak", logf)
	if err != nil {
		return res, err
	}
	gemini := geminifake.New()
	fake := httptest.NewServer(gemini)
	defer fake.Close()
	serve, err := StartServer(ctx, o.Steward, env, o.Log, "GEMINI_API_KEY", "fake", "GEMINI_BASE_URL", fake.URL, "STEWARD_LOG_LEVEL", "warn")
	if err != nil {
		return res, err
	}
	defer serve.Stop() //nolint:errcheck // the process's exit is not what is measured
	base := serve.Base
	client := &driver{base: base, key: apiKey, http: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: time.Minute}}
	sample := func(done int) error {
		mb, err := RSS(serve.PID())
		if err != nil {
			return err
		}
		res.Cycles, res.RSSMB = append(res.Cycles, done), append(res.RSSMB, mb)
		logf("%6d cycles: RSS %.1f MB", done, mb)
		return nil
	}
	if err := sample(0); err != nil {
		return res, err
	}
	step := max(n/10, 1)
	start := time.Now()
	for done := 1; done <= n; done++ {
		if _, _, err := client.cycle(ctx, client.key); err != nil {
			return res, fmt.Errorf("cycle %d: %w", done, err)
		}
		if done%step == 0 || done == n/2 || done == n {
			if err := sample(done); err != nil {
				return res, err
			}
		}
	}
	res.Elapsed = time.Since(start)
	if err := gemini.Err(); err != nil {
		return res, err
	}
	half, full := res.at(n/2), res.at(n)
	fmt.Fprintf(w, "steward serve RSS over %d suspend → approve cycles (%.1f cycles/s):\n", n, float64(n)/res.Elapsed.Seconds())
	for i, c := range res.Cycles {
		fmt.Fprintf(w, "  %6d cycles  %6.1f MB\n", c, res.RSSMB[i])
	}
	fmt.Fprintf(w, "RSS at %d cycles %.1f MB, at %d cycles %.1f MB: growth %+.1f MB\n", n/2, half, n, full, full-half)
	return res, nil
}

// at is the RSS sampled after cycles cycles.
func (r SoakResult) at(cycles int) float64 {
	for i, c := range r.Cycles {
		if c == cycles {
			return r.RSSMB[i]
		}
	}
	return 0
}
