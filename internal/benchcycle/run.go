// Package benchcycle is the approval-cycle benchmark behind `make bench-cycle`
// (cmd/benchcycle): the real `steward serve` against PostgreSQL and a fake Gemini REST server
// (internal/llm/gemini/geminifake), driven over HTTP through suspend → approve cycles,
// sequentially and with concurrent clients, then the LangGraph.js peer against the same
// PostgreSQL server, and one table comparing the two.
//
// What is measured, and how:
//   - cycles/s and per-step latency at the client (chat → suspended, confirm → completed);
//   - round trips to PostgreSQL: a counting TCP proxy between the process and the server
//     (Proxy), over the measured cycles, background work of the process included;
//   - transactions: pg_stat_database xact_commit + xact_rollback of the process's own
//     database, over the process's whole life (statistics are flushed when its connections
//     close), divided by every request it served (warm-up included);
//   - bytes stored: pg_total_relation_size of every table of the public schema (indexes and
//     TOAST included), before and after, per cycle;
//   - allocations: Mallocs of the serve process (expvar on STEWARD_DEBUG_ADDR) over the
//     measured cycles — everything the process allocated, background work included;
//   - CPU per cycle: user + system time of the process and of its database's PostgreSQL
//     backends (/proc, sampled every 50 ms: cpu.go), over the measured cycles — what a
//     busy machine disturbs least;
//   - RSS: VmRSS of the serve process after the run (/proc).
package benchcycle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/llm/gemini/geminifake"
)

// Options are the benchmark's settings (cmd/benchcycle's flags).
type Options struct {
	// Steward is the steward binary; PeerDir a directory holding the peer's bench.mjs with
	// its node_modules installed.
	Steward, PeerDir string
	// Cycles per phase, after Warmup cycles; Clients is the concurrent phase's client count.
	Cycles, Warmup, Clients int
	// Owners is how many owners the concurrent phase's clients drive, client i the owner
	// i mod Owners (1, the default: every client on one owner, queueing on its admission
	// lock; Owners = Clients: each client an owner of its own, the realistic load).
	Owners int
	// The dev database's URLs (scripts/devdb env, through internal/config); the benchmark
	// uses databases of its own on that server: Database (Steward) and PeerDatabase.
	DatabaseURL, AppDatabaseURL, DoorDatabaseURL string
	SuperuserDatabaseURL                         string
	Database, PeerDatabase                       string
	// Log receives progress lines.
	Log io.Writer
	// Trace, when set, receives one line per round trip of steward serve to PostgreSQL,
	// naming the statements in it (the breakdown behind the round-trip count).
	Trace io.Writer
	// NoPeer skips the LangGraph.js peer (its column stays empty).
	NoPeer bool
}

// ownerWarmup is the warm-up cycles of each owner after the first, with Options.Owners.
const ownerWarmup = 3

// phase is one measured run of cycles.
type phase struct {
	cycles          int
	wall            time.Duration
	suspend, resume []time.Duration
	rt              Counts
	mallocs         uint64
	cpu             cpuUse        // CPU of the phase: the application process and its backends
	driver          time.Duration // CPU of this process in the phase: the clients and the fake Gemini
}

func (p phase) perSecond() float64 { return float64(p.cycles) / p.wall.Seconds() }

// result is what one side measured.
type result struct {
	seq, conc     phase
	txPerRequest  float64
	rtPerRequest  float64 // over both phases
	bytesPerCycle float64
	allocsSeq     float64 // per cycle
	allocsConc    float64
	rssMB         float64
	generate      float64 // Gemini generateContent requests per cycle
	embeds        float64 // Gemini batchEmbedContents requests per cycle
	peerOwnBytes  float64 // the peer's own checkpoint_bytes_per_cycle
}

// Run runs the whole benchmark and writes the table to w.
func Run(ctx context.Context, o Options, w io.Writer) error {
	su, err := pgx.ParseConfig(o.SuperuserDatabaseURL)
	if err != nil {
		return fmt.Errorf("SUPERUSER_DATABASE_URL: %w", err)
	}
	monitor, err := Connect(ctx, o.SuperuserDatabaseURL, "postgres")
	if err != nil {
		return err
	}
	defer monitor.Close(context.WithoutCancel(ctx))
	target := fmt.Sprintf("%s:%d", su.Host, su.Port)

	s, err := runSteward(ctx, o, monitor, target)
	if err != nil {
		return fmt.Errorf("steward: %w", err)
	}
	var p result
	if !o.NoPeer {
		if p, err = runPeer(ctx, o, monitor, target); err != nil {
			return fmt.Errorf("peer: %w", err)
		}
	}
	return WriteTable(w, "LangGraph.js", rows(o, s, p))
}

func rows(o Options, s, p result) []Row {
	lat := func(name string, sd, pd time.Duration) Row {
		r := Row{Metric: name, S: float64(sd), P: float64(pd), Steward: ms(sd)}
		if pd > 0 {
			r.Peer = ms(pd)
		}
		return r
	}
	num := func(name, format string, sv, pv float64, higher bool) Row {
		r := Row{Metric: name, S: sv, P: pv, HigherIsBetter: higher}
		if sv > 0 {
			r.Steward = fmt.Sprintf(format, sv)
		}
		if pv > 0 {
			r.Peer = fmt.Sprintf(format, pv)
		}
		return r
	}
	cpu := func(name string, sp, pp phase, of func(cpuUse) time.Duration) Row {
		per := func(p phase) time.Duration {
			if p.cycles == 0 {
				return 0
			}
			return of(p.cpu) / time.Duration(p.cycles)
		}
		return lat(name, per(sp), per(pp))
	}
	c := fmt.Sprintf("%d clients", o.Clients)
	if o.Owners > 1 {
		c += fmt.Sprintf(" on %d owners", o.Owners)
	}
	return []Row{
		num("cycles/s, sequential", "%.1f", s.seq.perSecond(), p.seq.perSecond(), true),
		num("cycles/s, "+c, "%.1f", s.conc.perSecond(), p.conc.perSecond(), true),
		lat("chat → suspended p50, sequential", Percentile(s.seq.suspend, .5), Percentile(p.seq.suspend, .5)),
		lat("chat → suspended p99, sequential", Percentile(s.seq.suspend, .99), Percentile(p.seq.suspend, .99)),
		lat("confirm → completed p50, sequential", Percentile(s.seq.resume, .5), Percentile(p.seq.resume, .5)),
		lat("confirm → completed p99, sequential", Percentile(s.seq.resume, .99), Percentile(p.seq.resume, .99)),
		lat("chat → suspended p50, "+c, Percentile(s.conc.suspend, .5), Percentile(p.conc.suspend, .5)),
		lat("chat → suspended p99, "+c, Percentile(s.conc.suspend, .99), Percentile(p.conc.suspend, .99)),
		lat("confirm → completed p50, "+c, Percentile(s.conc.resume, .5), Percentile(p.conc.resume, .5)),
		lat("confirm → completed p99, "+c, Percentile(s.conc.resume, .99), Percentile(p.conc.resume, .99)),
		num("transactions per request", "%.2f", s.txPerRequest, p.txPerRequest, false),
		num("round trips per request", "%.2f", s.rtPerRequest, p.rtPerRequest, false),
		num("bytes stored per cycle (all tables)", "%.0f B", s.bytesPerCycle, p.bytesPerCycle, false),
		num("bytes per cycle, peer's checkpoint tables", "%.0f B", 0, p.peerOwnBytes, false),
		cpu("CPU per cycle, sequential: the process", s.seq, p.seq, func(u cpuUse) time.Duration { return u.app }),
		cpu("CPU per cycle, sequential: its PostgreSQL backends", s.seq, p.seq, func(u cpuUse) time.Duration { return u.db }),
		cpu("CPU per cycle, "+c+": the process", s.conc, p.conc, func(u cpuUse) time.Duration { return u.app }),
		cpu("CPU per cycle, "+c+": its PostgreSQL backends", s.conc, p.conc, func(u cpuUse) time.Duration { return u.db }),
		lat("CPU per cycle, "+c+": the benchmark's clients and fake Gemini", perCycle(s.conc.driver, s.conc.cycles), 0),
		num("allocations per cycle, sequential (serve process)", "%.0f", s.allocsSeq, 0, false),
		num("allocations per cycle, "+c+" (serve process)", "%.0f", s.allocsConc, 0, false),
		num("RSS after the run", "%.1f MB", s.rssMB, 0, false),
		num("Gemini generateContent requests per cycle", "%.2f", s.generate, 0, false),
		num("Gemini batchEmbedContents requests per cycle", "%.2f", s.embeds, 0, false),
	}
}

// perCycle is d per cycle, 0 without cycles.
func perCycle(d time.Duration, cycles int) time.Duration {
	if cycles == 0 {
		return 0
	}
	return d / time.Duration(cycles)
}

// withDatabase returns rawURL with its database replaced by db.
func withDatabase(rawURL, db string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", errors.New("malformed database URL")
	}
	u.Path = "/" + db
	return u.String(), nil
}

// withHost returns rawURL with its host:port replaced by addr.
func withHost(rawURL, addr string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", errors.New("malformed database URL")
	}
	u.Host = addr
	return u.String(), nil
}

// Connect connects to database db of the server rawURL names, as rawURL's user.
func Connect(ctx context.Context, rawURL, db string) (*pgx.Conn, error) {
	u, err := withDatabase(rawURL, db)
	if err != nil {
		return nil, err
	}
	return pgx.Connect(ctx, u)
}

// xacts is the committed and rolled-back transactions of database db so far.
func xacts(ctx context.Context, monitor *pgx.Conn, db string) (int64, error) {
	var n int64
	err := monitor.QueryRow(ctx, `SELECT coalesce(sum(xact_commit + xact_rollback), 0)::bigint
		FROM pg_stat_database WHERE datname = $1`, db).Scan(&n)
	return n, err
}

// settle waits until no session is connected to db, so that every backend of the process
// that used it has flushed its statistics (a backend flushes them when it exits).
func settle(ctx context.Context, monitor *pgx.Conn, db string) error {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var n int
		if err := monitor.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, db).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			// pg_stat_database is read from shared memory: give the last exits a moment.
			time.Sleep(200 * time.Millisecond)
			return nil
		}
	}
	return fmt.Errorf("sessions on %s did not end within 30 s", db)
}

// tableBytes is the size of every table of the public schema of db, indexes and TOAST included.
func tableBytes(ctx context.Context, superURL, db string) (int64, error) {
	conn, err := Connect(ctx, superURL, db)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int64
	err = conn.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind = 'r'`).Scan(&n)
	return n, err
}

// FreeAddr returns a free 127.0.0.1 port.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Command runs the steward CLI binary with env and returns its stdout; its stderr is in the
// error.
func Command(ctx context.Context, binary string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("steward %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// setEnv returns env with name=value replacing any earlier value.
func setEnv(env []string, kv ...string) []string {
	out := make([]string, 0, len(env)+len(kv)/2)
	for _, e := range env {
		keep := true
		for i := 0; i < len(kv); i += 2 {
			if strings.HasPrefix(e, kv[i]+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	for i := 0; i < len(kv); i += 2 {
		out = append(out, kv[i]+"="+kv[i+1])
	}
	return out
}

// meter measures one phase of cycles: allocations of the server, round trips through the
// proxy, the driver's and the database's CPU.
type meter struct {
	o         Options
	proxy     *Proxy
	client    *driver
	debugAddr string
	pid       int
}

func (m meter) measure(ctx context.Context, clients int, p *phase) error {
	m0, err := mallocs(ctx, m.debugAddr)
	if err != nil {
		return err
	}
	c0 := m.proxy.Counts()
	d0, err := cpuTime(os.Getpid())
	if err != nil {
		return err
	}
	cpu, err := sampleCPU(ctx, m.o.SuperuserDatabaseURL, m.pid, m.o.Database)
	if err != nil {
		return err
	}
	if err := m.client.run(ctx, m.o.Cycles, clients, p); err != nil {
		_, _ = cpu.stop()
		return err
	}
	if p.cpu, err = cpu.stop(); err != nil {
		return err
	}
	d1, err := cpuTime(os.Getpid())
	if err != nil {
		return err
	}
	p.driver = d1 - d0
	p.rt = m.proxy.Counts().Sub(c0)
	m1, err := mallocs(ctx, m.debugAddr)
	p.mallocs = m1 - m0
	return err
}

// ownerKeys returns the API keys of o.Owners owners: the first one's, and the others added.
func ownerKeys(ctx context.Context, o Options, env []string, apiKey string) ([]string, error) {
	keys := []string{apiKey}
	for i := 1; i < o.Owners; i++ {
		owner, err := AddOwner(ctx, o, env, fmt.Sprintf("bench %d", i))
		if err != nil {
			return nil, err
		}
		keys = append(keys, owner.APIKey)
	}
	return keys, nil
}

// startThroughProxy starts steward serve with its database connections through proxy and
// Gemini at fakeURL; it returns the server and the address of its profiles.
func startThroughProxy(ctx context.Context, o Options, env []string, proxy *Proxy, fakeURL string) (*Server, string, error) {
	debugAddr, err := FreeAddr()
	if err != nil {
		return nil, "", err
	}
	appURL, err := withHost(envValue(env, "APP_DATABASE_URL"), proxy.Addr())
	if err != nil {
		return nil, "", err
	}
	doorURL, err := withHost(envValue(env, "DOOR_DATABASE_URL"), proxy.Addr())
	if err != nil {
		return nil, "", err
	}
	serve, err := StartServer(ctx, o.Steward, env, o.Log,
		"APP_DATABASE_URL", appURL, "DOOR_DATABASE_URL", doorURL, "STEWARD_DEBUG_ADDR", debugAddr,
		"GEMINI_API_KEY", "fake", "GEMINI_BASE_URL", fakeURL,
		// One owner runs every client's turns: the per-owner cap must not refuse them.
		"STEWARD_MAX_TURNS_PER_OWNER", fmt.Sprint(max(o.Clients*2, 4)),
		"STEWARD_LOG_LEVEL", "warn")
	return serve, debugAddr, err
}

func runSteward(ctx context.Context, o Options, monitor *pgx.Conn, target string) (result, error) {
	var r result
	logf := func(format string, args ...any) { fmt.Fprintf(o.Log, "bench-cycle: "+format+"\n", args...) }

	env, apiKey, err := setUp(ctx, o, "bench", logf)
	if err != nil {
		return r, err
	}
	keys, err := ownerKeys(ctx, o, env, apiKey)
	if err != nil {
		return r, err
	}

	gemini := geminifake.New()
	fake := httptest.NewServer(gemini)
	defer fake.Close()
	proxy, err := NewProxy(target)
	if err != nil {
		return r, err
	}
	defer proxy.Close()
	if o.Trace != nil {
		proxy.SetTrace(o.Trace)
	}

	bytesBefore, err := tableBytes(ctx, o.SuperuserDatabaseURL, o.Database)
	if err != nil {
		return r, err
	}
	if err := settle(ctx, monitor, o.Database); err != nil {
		return r, err
	}
	txBefore, err := xacts(ctx, monitor, o.Database)
	if err != nil {
		return r, err
	}

	serve, debugAddr, err := startThroughProxy(ctx, o, env, proxy, fake.URL)
	if err != nil {
		return r, err
	}
	defer serve.Stop() //nolint:errcheck // the error path only
	base := serve.Base
	logf("steward serve up on %s (profiles on http://%s/debug/pprof/; fake Gemini %s; PostgreSQL through the counting proxy %s)", base, debugAddr, fake.URL, proxy.Addr())

	client := &driver{base: base, key: apiKey, keys: keys, http: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}}
	if err := client.warmUp(ctx, o.Warmup, keys); err != nil {
		return r, fmt.Errorf("warm-up: %w", err)
	}
	extraWarm := ownerWarmup * (len(keys) - 1)
	gen0, emb0 := len(gemini.Requests()), gemini.Embeds()
	m := meter{o: o, proxy: proxy, client: client, debugAddr: debugAddr, pid: serve.PID()}
	logf("steward: %d cycles sequential", o.Cycles)
	if err := m.measure(ctx, 1, &r.seq); err != nil {
		return r, fmt.Errorf("sequential: %w", err)
	}
	logf("steward: %d cycles, %d clients on %d owner(s)", o.Cycles, o.Clients, len(keys))
	if err := m.measure(ctx, o.Clients, &r.conc); err != nil {
		return r, fmt.Errorf("%d clients: %w", o.Clients, err)
	}
	// Both phases: 2·Cycles cycles.
	r.generate = float64(len(gemini.Requests())-gen0) / float64(2*o.Cycles)
	r.embeds = float64(gemini.Embeds()-emb0) / float64(2*o.Cycles)
	if r.rssMB, err = RSS(serve.PID()); err != nil {
		return r, err
	}
	if err := serve.Stop(); err != nil {
		return r, fmt.Errorf("steward serve: %w", err)
	}
	if err := gemini.Err(); err != nil {
		return r, err
	}

	if err := settle(ctx, monitor, o.Database); err != nil {
		return r, err
	}
	txAfter, err := xacts(ctx, monitor, o.Database)
	if err != nil {
		return r, err
	}
	bytesAfter, err := tableBytes(ctx, o.SuperuserDatabaseURL, o.Database)
	if err != nil {
		return r, err
	}
	total := o.Warmup + extraWarm + 2*o.Cycles
	r.txPerRequest = float64(txAfter-txBefore) / float64(2*total)
	r.rtPerRequest = float64(r.seq.rt.RoundTrips+r.conc.rt.RoundTrips) / float64(4*o.Cycles)
	r.bytesPerCycle = float64(bytesAfter-bytesBefore) / float64(total)
	r.allocsSeq = float64(r.seq.mallocs) / float64(o.Cycles)
	r.allocsConc = float64(r.conc.mallocs) / float64(o.Cycles)
	logf("steward: %d transactions, %d round trips (%d new connections) in the measured cycles",
		txAfter-txBefore, r.seq.rt.RoundTrips+r.conc.rt.RoundTrips, r.seq.rt.Connections+r.conc.rt.Connections)
	return r, nil
}

// warmUp runs n cycles of the first owner, then every other owner's first cycles (its
// memory's first exchange), none of them measured.
func (d *driver) warmUp(ctx context.Context, n int, keys []string) error {
	warm := phase{}
	if err := d.run(ctx, n, 1, &warm); err != nil {
		return err
	}
	for _, key := range keys[1:] {
		for range ownerWarmup {
			if _, _, err := d.cycle(ctx, key); err != nil {
				return err
			}
		}
	}
	return nil
}

// BenchEnv is this process's environment (inherited by the commands it runs) with the three
// role URLs pointing at o.Database.
func BenchEnv(o Options) ([]string, error) {
	var kv []string
	for name, v := range map[string]string{"DATABASE_URL": o.DatabaseURL, "APP_DATABASE_URL": o.AppDatabaseURL, "DOOR_DATABASE_URL": o.DoorDatabaseURL} {
		u, err := withDatabase(v, o.Database)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		kv = append(kv, name, u)
	}
	return setEnv(os.Environ(), kv...), nil
}

func envValue(env []string, name string) string {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, name+"="); ok {
			return v
		}
	}
	return ""
}

func waitHealthy(ctx context.Context, base string) error {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return errors.New("steward serve did not answer GET /healthz within 30 s")
}

// MemStats are the runtime counters of a serve process the benchmarks read.
type MemStats struct {
	Mallocs   uint64 // cumulative heap allocations
	HeapInuse uint64 // bytes in in-use heap spans
}

// ReadMemStats reads a serve process's runtime counters (expvar memstats, served on its
// STEWARD_DEBUG_ADDR, addr).
func ReadMemStats(ctx context.Context, addr string) (MemStats, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/vars", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return MemStats{}, err
	}
	defer resp.Body.Close()
	var vars struct {
		Memstats MemStats `json:"memstats"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		return MemStats{}, fmt.Errorf("debug vars: %w", err)
	}
	return vars.Memstats, nil
}

// mallocs reads the serve process's cumulative heap allocations.
func mallocs(ctx context.Context, addr string) (uint64, error) {
	m, err := ReadMemStats(ctx, addr)
	return m.Mallocs, err
}

// RSS is the resident set size of process pid, in MB (VmRSS of /proc/pid/status).
func RSS(pid int) (float64, error) {
	v, err := ProcStatus(pid, "VmRSS")
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// ProcStatus reads the named fields of /proc/pid/status, in kB there, as MB.
func ProcStatus(pid int, names ...string) ([]float64, error) {
	f, err := os.Open(filepath.Join("/proc", fmt.Sprint(pid), "status"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make([]float64, len(names))
	found := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		name, v, _ := strings.Cut(sc.Text(), ":")
		if i := slices.Index(names, name); i >= 0 {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%f kB", &kb); err != nil {
				return nil, fmt.Errorf("/proc/%d/status %s: %w", pid, name, err)
			}
			out[i] = kb / 1024
			found++
		}
	}
	if found < len(names) {
		return nil, fmt.Errorf("/proc/%d/status: not all of %v", pid, names)
	}
	return out, nil
}

// driver runs cycles against steward serve over HTTP, as the owner whose API key is key; in
// run, with keys, client i as the owner keys[i mod len(keys)].
type driver struct {
	base, key string
	keys      []string
	http      *http.Client
}

// turnView is the part of a TurnView the driver reads.
type turnView struct {
	TurnID  string `json:"turn_id"`
	Status  string `json:"status"`
	Answer  string `json:"answer"`
	Pending []struct {
		CallID   string `json:"call_id"`
		Tool     string `json:"tool"`
		ArgsHash string `json:"args_hash"`
	} `json:"pending"`
}

// run runs n cycles with clients concurrent clients, recording into p.
func (d *driver) run(ctx context.Context, n, clients int, p *phase) error {
	var next atomic.Int64
	var mu sync.Mutex
	errs := make(chan error, clients)
	start := time.Now()
	for i := range clients {
		key := d.key
		if len(d.keys) > 0 {
			key = d.keys[i%len(d.keys)]
		}
		go func() {
			for next.Add(1) <= int64(n) {
				s, r, err := d.cycle(ctx, key)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				p.suspend, p.resume = append(p.suspend, s), append(p.resume, r)
				mu.Unlock()
			}
			errs <- nil
		}()
	}
	var err error
	for range clients {
		err = errors.Join(err, <-errs)
	}
	p.wall, p.cycles = time.Since(start), n
	return err
}

// cycle is one chat → suspended, confirm (approve) → completed.
func (d *driver) cycle(ctx context.Context, key string) (suspend, resume time.Duration, err error) {
	t0 := time.Now()
	var v turnView
	if err := d.post(ctx, key, "/v1/chat", map[string]any{"message": "remind me to buy milk"}, &v); err != nil {
		return 0, 0, fmt.Errorf("chat: %w", err)
	}
	suspend = time.Since(t0)
	if v.Status != "suspended" || len(v.Pending) != 1 || v.Pending[0].Tool != "create_task" {
		return 0, 0, fmt.Errorf("chat: want suspended on create_task, got %+v", v)
	}
	decision := map[string]any{"decisions": []map[string]any{
		{"call_id": v.Pending[0].CallID, "approve": true, "args_hash": v.Pending[0].ArgsHash}}}
	t0 = time.Now()
	var done turnView
	if err := d.post(ctx, key, "/v1/turns/"+v.TurnID+"/confirm", decision, &done); err != nil {
		return 0, 0, fmt.Errorf("confirm: %w", err)
	}
	resume = time.Since(t0)
	if done.Status != "completed" || !strings.Contains(done.Answer, "buy milk") {
		return 0, 0, fmt.Errorf("confirm: want completed with an answer, got %+v", done)
	}
	return suspend, resume, nil
}

func (d *driver) post(ctx context.Context, key, path string, body, out any) error {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}
