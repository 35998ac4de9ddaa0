package benchscale

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/stewardhq/steward/internal/benchcycle"
	"github.com/stewardhq/steward/internal/llm/gemini/geminifake"
)

// target is an owner the benchmark measures, and what it holds.
type target struct {
	size    string // "empty", "small", "medium", "large"
	ownerID string
	apiKey  string
	turns   int64 // the owner's turns before the run
}

// sample is what one operation measured for one owner: each request's latency at the client
// and the CPU the batch used, in the serve process and in its PostgreSQL backends.
type sample struct {
	latencies     []time.Duration
	appCPU, dbCPU time.Duration
}

// cpuPerOp is the batch's CPU, server and PostgreSQL, per operation.
func (s sample) cpuPerOp() time.Duration {
	if len(s.latencies) == 0 {
		return 0
	}
	return (s.appCPU + s.dbCPU) / time.Duration(len(s.latencies))
}

// measure starts steward serve on database db (env: the role URLs pointing at it) against a
// fake Gemini and measures every operation for each owner in turn: Warmup cycles first, then
// one turn left suspended (the approvals inbox has something to show), then Samples requests
// of each operation in a batch of its own, its CPU sampled around the batch.
func measure(ctx context.Context, o Options, db string, env []string, owners []target) (map[string][]sample, error) {
	gemini := geminifake.New()
	gemini.Forget = true
	fake := httptest.NewServer(gemini)
	defer fake.Close()
	serve, err := benchcycle.StartServer(ctx, o.Steward, env, o.Log,
		"GEMINI_API_KEY", "fake", "GEMINI_BASE_URL", fake.URL, "STEWARD_LOG_LEVEL", "warn")
	if err != nil {
		return nil, err
	}
	defer serve.Stop() //nolint:errcheck // the error path only
	ops := operations()
	out := map[string][]sample{}
	for _, t := range owners {
		c := &client{base: serve.Base, key: t.apiKey, http: &http.Client{Timeout: time.Minute}}
		o.logf("%s: %s owner (%d turns): %d warm-up cycles, then %d of each operation", db, t.size, t.turns, o.Warmup, o.Samples)
		for range o.Warmup {
			if err := c.cycle(ctx); err != nil {
				return nil, fmt.Errorf("%s owner: warm-up: %w", t.size, err)
			}
		}
		if _, err := c.suspend(ctx); err != nil {
			return nil, fmt.Errorf("%s owner: %w", t.size, err)
		}
		for _, op := range ops {
			// The memory outbox of the cycles before drains in the background: let it.
			time.Sleep(time.Second)
			s, err := batch(ctx, o, db, serve.PID(), c, op)
			if err != nil {
				return nil, fmt.Errorf("%s owner: %s: %w", t.size, op.name, err)
			}
			out[t.size] = append(out[t.size], s)
		}
	}
	if err := serve.Stop(); err != nil {
		return nil, fmt.Errorf("steward serve: %w", err)
	}
	return out, gemini.Err()
}

// batch runs op Samples times, sequentially, with the CPU sampled around the batch.
func batch(ctx context.Context, o Options, db string, pid int, c *client, op operation) (sample, error) {
	var s sample
	cpu, err := benchcycle.SampleCPU(ctx, o.SuperuserDatabaseURL, pid, db)
	if err != nil {
		return s, err
	}
	for range o.Samples {
		t0 := time.Now()
		if err := op.run(ctx, c); err != nil {
			_, _, _ = cpu.Stop()
			return s, err
		}
		s.latencies = append(s.latencies, time.Since(t0))
	}
	s.appCPU, s.dbCPU, err = cpu.Stop()
	return s, err
}
