// Package benchload is the load run behind `make bench-load` (cmd/benchload): the real
// `steward serve` on loopback, against a database of its own and the fake Gemini
// (internal/llm/gemini/geminifake: every chat proposes create_task, so it suspends for
// approval), driven for a bounded time and count by many owners at once. Each owner runs a few
// conversations whose chats suspend and whose confirms — approvals, some denials, some sent
// several times at once on the same turn — resume them, and on the side webhook deliveries
// signed with its secret (some replayed), facts, documents and memory searches; every
// completed exchange feeds the memory outbox. Then it waits for the server's background work
// and reports throughput, p50/p99 per route and responses by status, and checks invariants by
// SQL as the superuser (invariants.go) and the serve process's RSS, sampled throughout
// (docs/PERFORMANCE.md). Internal/benchcycle starts the server and sets the database up.
package benchload

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/benchcycle"
	"github.com/stewardhq/steward/internal/llm/gemini/geminifake"
)

// Options are the load run's settings (cmd/benchload's flags).
type Options struct {
	// Bench holds the steward binary, the dev database's URLs, the database of this run
	// (Database) and the progress log (Log); its cycle counts are not used.
	Bench benchcycle.Options
	// Owners is how many owners run the Workload at once.
	Owners   int
	Workload Workload
	// RSSWindow is the end of the load over which the serve process's RSS must stay flat
	// (within ±10 % of its first sample there); at most 4/5 of the Duration.
	RSSWindow time.Duration
	// ServerLog is the file receiving steward serve's log.
	ServerLog string
}

// Run sets up o.Bench.Database and the owners (with `steward owners add`, `owners budget` and
// `webhooks add`), starts `steward serve` with the fake Gemini, drives the workload
// (Drive), stops the server (SIGTERM: its graceful shutdown) and checks the invariants. The
// report is written to w; Report.OK says whether the run passed.
func Run(ctx context.Context, o Options, w io.Writer) (*Report, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(o.Bench.Log, "bench-load: "+format+"\n", args...) }
	env, err := benchcycle.Prepare(ctx, o.Bench, logf)
	if err != nil {
		return nil, err
	}
	owners, err := addOwners(ctx, o, env, logf)
	if err != nil {
		return nil, err
	}
	gemini := geminifake.New()
	gemini.Forget = true
	fake := httptest.NewServer(gemini)
	defer fake.Close()
	logFile, err := os.Create(o.ServerLog)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	debugAddr, err := benchcycle.FreeAddr()
	if err != nil {
		return nil, err
	}
	serve, err := benchcycle.StartServer(ctx, o.Bench.Steward, env, logFile, "STEWARD_DEBUG_ADDR", debugAddr,
		"GEMINI_API_KEY", "fake", "GEMINI_BASE_URL", fake.URL, "STEWARD_LOG_LEVEL", "warn", "STEWARD_LOG_FORMAT", "json")
	if err != nil {
		return nil, err
	}
	defer serve.Stop() //nolint:errcheck // the error path only; the run stops it below
	logf("steward serve up on %s (pid %d, log %s, profiles on http://%s/debug/pprof/); %d owners × %d conversations for %s",
		serve.Base, serve.PID(), o.ServerLog, debugAddr, len(owners), o.Workload.Conversations, o.Workload.Duration)

	rss := startRSS(ctx, serve.PID(), debugAddr, min(5*time.Second, max(o.Workload.Duration/20, 500*time.Millisecond)))
	// Heap profiles at the start of the RSS window and at the end of the load: what grew.
	window := min(o.RSSWindow, o.Workload.Duration*4/5)
	profiles := heapProfiles(ctx, debugAddr, strings.TrimSuffix(o.ServerLog, ".log"),
		o.Workload.Duration-window, o.Workload.Duration-time.Second)
	r, err := Drive(ctx, serve.Base, o.Bench.SuperuserDatabaseURL, o.Bench.Database, owners, o.Workload)
	samples := rss.stop()
	if err != nil {
		return nil, err
	}
	r.Profiles = profiles()
	r.ServerLog = o.ServerLog
	r.RSS = samples
	r.Checks = append(r.Checks, rssFlat(samples, o.Workload.Duration, o.RSSWindow))
	stopErr := serve.Stop()
	r.Checks = append(r.Checks, Check{Name: "steward serve shut down cleanly on SIGTERM", OK: stopErr == nil, Detail: fmt.Sprint("exit: ", orOK(stopErr))})
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	if err := gemini.Err(); err != nil {
		r.Checks = append(r.Checks, Check{Name: "the fake Gemini read every request", Detail: err.Error()})
	}
	r.Write(w)
	return r, nil
}

func orOK(err error) string {
	if err == nil {
		return "0"
	}
	return err.Error()
}

// addOwners adds o.Owners owners, each with a budget that does not bind and an incoming
// webhook, four at a time.
func addOwners(ctx context.Context, o Options, env []string, logf func(string, ...any)) ([]Owner, error) {
	logf("adding %d owners with their webhooks", o.Owners)
	owners := make([]Owner, o.Owners)
	errs := make([]error, o.Owners)
	next := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range next {
				owners[i], errs[i] = addOwner(ctx, o, env, fmt.Sprintf("load %d", i))
			}
		})
	}
	for i := range o.Owners {
		next <- i
	}
	close(next)
	wg.Wait()
	return owners, errors.Join(errs...)
}

func addOwner(ctx context.Context, o Options, env []string, name string) (Owner, error) {
	added, err := benchcycle.AddOwner(ctx, o.Bench, env, name)
	if err != nil {
		return Owner{}, err
	}
	out, err := benchcycle.Command(ctx, o.Bench.Steward, env, "webhooks", "add", "--source", "load", "--owner", added.ID, "--json")
	if err != nil {
		return Owner{}, err
	}
	var hook struct {
		HookID string `json:"hook_id"`
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(out, &hook); err != nil {
		return Owner{}, fmt.Errorf("webhooks add --json: %w: %s", err, out)
	}
	return Owner{ID: added.ID, APIKey: added.APIKey, HookID: hook.HookID, HookSecret: hook.Secret}, nil
}

// Drive runs w against the server at base as owners, then waits up to w.Grace for the
// server's background work — webhook runs, memory ingestion — read in database db as the
// superuser (superURL). Report.check then checks the invariants.
func Drive(ctx context.Context, base, superURL, db string, owners []Owner, w Workload) (*Report, error) {
	conn, err := benchcycle.Connect(ctx, superURL, db)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	start := time.Now()
	work, stopWork := context.WithDeadline(ctx, start.Add(w.Duration))
	defer stopWork()
	grace, stopGrace := context.WithDeadline(ctx, start.Add(w.Duration+w.Grace))
	defer stopGrace()
	l := &load{w: w, base: base, stats: newStats(), ledger: newLedger(), work: work, grace: grace,
		http: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
			MaxIdleConnsPerHost: len(owners) * (w.Conversations + 1), IdleConnTimeout: time.Minute}}}
	l.drive(owners)
	r := &Report{Owners: len(owners), Workload: w, Load: time.Since(start), stats: l.stats, ledger: l.ledger,
		superURL: superURL, db: db}
	fmt.Fprintf(w.Log, "bench-load: load done in %s; waiting for the server's background work\n", r.Load.Round(time.Millisecond))
	t0 := time.Now()
	r.Drained, err = drain(grace, conn)
	r.Drain = time.Since(t0)
	if err != nil && grace.Err() == nil {
		return nil, err
	}
	return r, nil
}

// drain waits until no webhook run is queued or running, the memory outbox is done and no
// turn runs, or ctx ends (false).
func drain(ctx context.Context, conn *pgx.Conn) (bool, error) {
	for {
		var busy int
		err := conn.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM job_runs WHERE status IN ('queued', 'running')) +
			(SELECT count(*) FROM memory_outbox WHERE done_at IS NULL) +
			(SELECT count(*) FROM turns WHERE status IN ('running', 'resuming'))`).Scan(&busy)
		if err != nil {
			return false, err
		}
		if busy == 0 {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Report is a load run's outcome.
type Report struct {
	Owners   int
	Workload Workload
	// Load is how long the load ran (its Duration and the last turns' confirms); Drain how
	// long the server's background work took after it, Drained whether it ended in the Grace.
	Load, Drain time.Duration
	Drained     bool
	Checks      []Check
	RSS         []RSSSample
	// ServerLog is the file with steward serve's log (Run's): the 5xx's lines are quoted.
	ServerLog string
	// Profiles are the files of the serve process's heap profiles (Run's), at the start of
	// the RSS window and at the end of the load.
	Profiles []string

	stats        *stats
	ledger       *ledger
	superURL, db string
}

// check adds the invariants read from the database.
func (r *Report) check(ctx context.Context) error {
	conn, err := benchcycle.Connect(ctx, r.superURL, r.db)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	checks, err := checkInvariants(ctx, conn, r.ledger)
	if err != nil {
		return err
	}
	r.Checks = append(append(checks, Check{Name: "the server's background work ended in the grace period",
		OK: r.Drained, Detail: fmt.Sprintf("%.1f s after the load", r.Drain.Seconds())}), r.Checks...)
	return nil
}

// Failures are the responses 5xx and the requests that got no answer.
func (r *Report) Failures() int {
	r.stats.mu.Lock()
	defer r.stats.mu.Unlock()
	n := 0
	for _, rt := range r.stats.routes {
		for status, c := range rt.statuses {
			if status == 0 || status >= 500 {
				n += c
			}
		}
	}
	return n
}

// OK is true when no response was a 5xx, every request got an answer and every invariant held.
func (r *Report) OK() bool {
	return r.Failures() == 0 && !slices.ContainsFunc(r.Checks, func(c Check) bool { return !c.OK })
}

// Write prints the report: what ran, the routes' table, responses by status, the invariants,
// the RSS and the failures with the server's log lines.
func (r *Report) Write(w io.Writer) {
	s, l := r.stats, r.ledger
	s.mu.Lock()
	defer s.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	total, byStatus := 0, map[int]int{}
	for _, rt := range s.routes {
		for status, n := range rt.statuses {
			total += n
			byStatus[status] += n
		}
	}
	approvals := 0
	for _, ok := range l.decisions {
		if ok {
			approvals++
		}
	}
	secs := r.Load.Seconds()
	fmt.Fprintf(w, "%d owners × %d conversations for %s (think %s): %d requests in %.1f s, %.1f requests/s; "+
		"%d chats accepted (%.1f/s), %d approved, %d denied, %d concurrent confirms; %d webhook deliveries (%d replays), %d facts, %d documents\n\n",
		r.Owners, r.Workload.Conversations, r.Workload.Duration, r.Workload.Think, total, secs, float64(total)/secs,
		len(l.chats), float64(len(l.chats))/secs, approvals, len(l.decisions)-approvals, l.races,
		len(l.deliveries), l.replays, sum(l.facts), sum(l.documents))
	writeRoutes(w, s)
	parts := statusParts(byStatus)
	fmt.Fprintf(w, "\nresponses by status: %s\n\ninvariants:\n", strings.Join(parts, ", "))
	for _, c := range r.Checks {
		verdict := "ok  "
		if !c.OK {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "  %s %s — %s\n", verdict, c.Name, c.Detail)
	}
	r.writeRSS(w)
	if len(r.Profiles) == 2 {
		fmt.Fprintf(w, "heap profiles: %s, %s (what grew: go tool pprof -sample_index=inuse_space -top -diff_base %[1]s bin/steward %[2]s)\n", r.Profiles[0], r.Profiles[1])
	}
	r.writeFailures(w, s)
	verdict := "PASS"
	if !r.ok() {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "\nbench-load: %s\n", verdict)
}

// writeRoutes prints the routes' table: requests, latencies and responses by class.
func writeRoutes(w io.Writer, s *stats) {
	fmt.Fprintln(w, "| route | requests | p50 | p99 | 2xx | 409 | 429 | other 4xx | 5xx | no answer |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, name := range s.names() {
		rt := s.routes[name]
		var ok, conflict, limited, other4xx, fivexx int
		for status, n := range rt.statuses {
			switch {
			case status >= 200 && status < 300:
				ok += n
			case status == http.StatusConflict:
				conflict += n
			case status == http.StatusTooManyRequests:
				limited += n
			case status >= 400 && status < 500:
				other4xx += n
			case status >= 500:
				fivexx += n
			}
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %d | %d | %d | %d | %d | %d |\n", name, len(rt.latencies),
			msText(benchcycle.Percentile(rt.latencies, .5)), msText(benchcycle.Percentile(rt.latencies, .99)),
			ok, conflict, limited, other4xx, fivexx, rt.statuses[0])
	}
}

// statusParts describes the responses by status, in order ("no answer" for status 0).
func statusParts(byStatus map[int]int) []string {
	var statuses []int
	for status := range byStatus {
		statuses = append(statuses, status)
	}
	slices.Sort(statuses)
	var parts []string
	for _, status := range statuses {
		name := fmt.Sprint(status)
		if status == 0 {
			name = "no answer"
		}
		parts = append(parts, fmt.Sprintf("%s: %d", name, byStatus[status]))
	}
	return parts
}

// writeRSS prints the server's memory over the run, about 20 rows.
func (r *Report) writeRSS(w io.Writer) {
	if len(r.RSS) == 0 {
		return
	}
	fmt.Fprintf(w, "\nsteward serve over the run (MB; fds are its open files and connections):\n")
	fmt.Fprintln(w, "| s | RSS | anonymous | file pages | Go heap in use | fds |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	step := max(len(r.RSS)/20, 1)
	for i, x := range r.RSS {
		if i%step == 0 || i == len(r.RSS)-1 {
			fmt.Fprintf(w, "| %.0f | %.1f | %.1f | %.1f | %.1f | %d |\n", x.At.Seconds(), x.MB, x.AnonMB, x.FileMB, x.HeapMB, x.FDs)
		}
	}
}

// writeFailures prints the 5xx and unanswered requests with the server's log lines for them.
func (r *Report) writeFailures(w io.Writer, s *stats) {
	if len(s.failed) == 0 {
		return
	}
	fmt.Fprintf(w, "\n5xx and requests without an answer (the first %d):\n", len(s.failed))
	var ids []string
	for _, f := range s.failed {
		fmt.Fprintf(w, "  %s %s: %d %.300s\n", f.requestID, f.route, f.status, f.detail)
		ids = append(ids, f.requestID)
	}
	if lines := logLines(r.ServerLog, ids); len(lines) > 0 {
		fmt.Fprintf(w, "steward serve's log lines for them, and its errors (%s):\n  %s\n", r.ServerLog, strings.Join(lines, "\n  "))
	}
}

// ok is OK with the stats already locked.
func (r *Report) ok() bool {
	for _, rt := range r.stats.routes {
		for status, n := range rt.statuses {
			if (status == 0 || status >= 500) && n > 0 {
				return false
			}
		}
	}
	return !slices.ContainsFunc(r.Checks, func(c Check) bool { return !c.OK })
}

func msText(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// logLines are the lines of the log file that name one of ids, or are errors (the first 40).
func logLines(path string, ids []string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() && len(out) < 40 {
		line := sc.Text()
		if strings.Contains(line, `"level":"error"`) || slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(line, `"`+id+`"`) }) {
			out = append(out, line)
		}
	}
	return out
}

// heapProfiles saves the serve process's heap profile (after a garbage collection) at each of
// the times since now to prefix-heap-<seconds>s.pb.gz; the returned func waits for them and
// lists the files written.
func heapProfiles(ctx context.Context, debugAddr, prefix string, at ...time.Duration) func() []string {
	start := time.Now()
	files := make([]string, len(at))
	var wg sync.WaitGroup
	for i, d := range at {
		wg.Go(func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(start.Add(d))):
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+debugAddr+"/debug/pprof/heap?gc=1", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			name := fmt.Sprintf("%s-heap-%.0fs.pb.gz", prefix, d.Seconds())
			if b, err := io.ReadAll(resp.Body); err == nil && resp.StatusCode == http.StatusOK && os.WriteFile(name, b, 0o644) == nil {
				files[i] = name
			}
		})
	}
	return func() []string {
		wg.Wait()
		return slices.DeleteFunc(files, func(f string) bool { return f == "" })
	}
}

// RSSSample is the serve process's VmRSS at a time since the load started, and its parts:
// anonymous memory (the Go heap, stacks) and file pages (the binary's code, read as it runs),
// with its Go heap in use and its open file descriptors (HTTP and database connections).
type RSSSample struct {
	At                 time.Duration
	MB, AnonMB, FileMB float64
	HeapMB             float64
	FDs                int
}

type rssSampler struct {
	done    chan struct{}
	wg      sync.WaitGroup
	samples []RSSSample
}

// startRSS samples process pid every period until stop; debugAddr is its STEWARD_DEBUG_ADDR.
func startRSS(ctx context.Context, pid int, debugAddr string, every time.Duration) *rssSampler {
	s := &rssSampler{done: make(chan struct{})}
	start := time.Now()
	s.wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if v, err := benchcycle.ProcStatus(pid, "VmRSS", "RssAnon", "RssFile"); err == nil {
				x := RSSSample{At: time.Since(start), MB: v[0], AnonMB: v[1], FileMB: v[2]}
				if m, err := benchcycle.ReadMemStats(ctx, debugAddr); err == nil {
					x.HeapMB = float64(m.HeapInuse) / (1 << 20)
				}
				if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
					x.FDs = len(fds)
				}
				s.samples = append(s.samples, x)
			}
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	})
	return s
}

func (s *rssSampler) stop() []RSSSample {
	close(s.done)
	s.wg.Wait()
	return s.samples
}

// rssFlat checks the RSS over the last window of the load (at most 4/5 of it): its trend
// across the window is within ±10 % of its level at the window's start. The trend is the
// Theil–Sen slope (the median of the slopes between every two samples), so that a sample
// caught just before a garbage collection is not read as growth; the extremes are reported.
func rssFlat(samples []RSSSample, load, window time.Duration) Check {
	window = min(window, load*4/5)
	c := Check{Name: fmt.Sprintf("RSS of steward serve flat (±10 %%) over the last %s of the load", window)}
	var in []RSSSample
	for _, x := range samples {
		if x.At >= load-window && x.At <= load {
			in = append(in, x)
		}
	}
	if len(in) < 4 {
		c.Detail = fmt.Sprintf("%d samples in the window: too few to judge", len(in))
		return c
	}
	var slopes, mbs []float64 // MB per second
	for i, a := range in {
		mbs = append(mbs, a.MB)
		for _, b := range in[i+1:] {
			slopes = append(slopes, (b.MB-a.MB)/(b.At-a.At).Seconds())
		}
	}
	slope := median(slopes)
	// The level at the window's start: the line through the median point with that slope.
	var offsets []float64
	for _, x := range in {
		offsets = append(offsets, x.MB-slope*(x.At-in[0].At).Seconds())
	}
	start, change := median(offsets), slope*window.Seconds()
	c.OK = math.Abs(change) <= 0.1*start
	// Each open connection holds buffers and a goroutine: say how many there were.
	c.Detail = fmt.Sprintf("trend %+.1f MB over the window from %.1f MB (%+.1f %%); samples %.1f–%.1f MB; open fds %d at its start, %d at its end",
		change, start, 100*change/start, slices.Min(mbs), slices.Max(mbs), in[0].FDs, in[len(in)-1].FDs)
	return c
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
