package benchcycle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// peerOut is the JSON line the LangGraph.js peer prints last (../shared/peer-langgraph).
type peerOut struct {
	Cycles                  int    `json:"cycles"`
	Concurrency             int    `json:"concurrency"`
	SuspendP50              string `json:"suspend_ms_p50"`
	SuspendP99              string `json:"suspend_ms_p99"`
	ResumeP50               string `json:"resume_ms_p50"`
	ResumeP99               string `json:"resume_ms_p99"`
	CyclesPerS              string `json:"cycles_per_s"`
	CheckpointBytesPerCycle int64  `json:"checkpoint_bytes_per_cycle"`
	WritesExecuted          int    `json:"writes_executed"`
}

// peerWarmup is the peer's fixed warm-up (bench.mjs).
const peerWarmup = 20

// runPeer runs the peer sequentially and with o.Clients clients, against a fresh database of
// its own on the same server, through a counting proxy.
func runPeer(ctx context.Context, o Options, monitor *pgx.Conn, target string) (result, error) {
	var r result
	ident := pgx.Identifier{o.PeerDatabase}.Sanitize()
	if _, err := monitor.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return r, err
	}
	if _, err := monitor.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return r, err
	}
	proxy, err := NewProxy(target)
	if err != nil {
		return r, err
	}
	defer proxy.Close()
	dbURL, err := withDatabase(o.SuperuserDatabaseURL, o.PeerDatabase)
	if err != nil {
		return r, err
	}
	if dbURL, err = withHost(dbURL, proxy.Addr()); err != nil {
		return r, err
	}
	var txTotal, rtTotal, bytesTotal int64
	var ownBytes float64
	for _, p := range []struct {
		clients int
		into    *phase
	}{{1, &r.seq}, {o.Clients, &r.conc}} {
		fmt.Fprintf(o.Log, "bench-cycle: LangGraph.js: %d cycles, %d client(s)\n", o.Cycles, p.clients)
		b0, err := tableBytes(ctx, o.SuperuserDatabaseURL, o.PeerDatabase)
		if err != nil {
			return r, err
		}
		if err := settle(ctx, monitor, o.PeerDatabase); err != nil {
			return r, err
		}
		x0, err := xacts(ctx, monitor, o.PeerDatabase)
		if err != nil {
			return r, err
		}
		c0 := proxy.Counts()
		cmd := exec.CommandContext(ctx, "node", "bench.mjs", strconv.Itoa(o.Cycles), strconv.Itoa(p.clients))
		cmd.Dir = o.PeerDir
		cmd.Env = setEnv(cmd.Environ(), "DATABASE_URL", dbURL)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return r, fmt.Errorf("node bench.mjs: %w", err)
		}
		cpu, err := sampleCPU(ctx, o.SuperuserDatabaseURL, cmd.Process.Pid, o.PeerDatabase)
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return r, err
		}
		err = cmd.Wait()
		use, cpuErr := cpu.stop()
		if err != nil {
			return r, fmt.Errorf("node bench.mjs: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		if cpuErr != nil {
			return r, cpuErr
		}
		// The baseline is node's first connection: its warm-up cycles are in the CPU.
		use.app = use.app * time.Duration(o.Cycles) / time.Duration(o.Cycles+peerWarmup)
		use.db = use.db * time.Duration(o.Cycles) / time.Duration(o.Cycles+peerWarmup)
		p.into.cpu = use
		out := stdout.Bytes()
		rt := proxy.Counts().Sub(c0)
		po, err := readPeerOut(out, o.Cycles, p.into)
		if err != nil {
			return r, err
		}
		ownBytes += float64(po.CheckpointBytesPerCycle) / 2
		if err := settle(ctx, monitor, o.PeerDatabase); err != nil {
			return r, err
		}
		x1, err := xacts(ctx, monitor, o.PeerDatabase)
		if err != nil {
			return r, err
		}
		b1, err := tableBytes(ctx, o.SuperuserDatabaseURL, o.PeerDatabase)
		if err != nil {
			return r, err
		}
		txTotal += x1 - x0
		rtTotal += rt.RoundTrips
		bytesTotal += b1 - b0
		fmt.Fprintf(o.Log, "bench-cycle: LangGraph.js: %s cycles/s, %d transactions, %d round trips (%d connections), %.1f s\n",
			po.CyclesPerS, x1-x0, rt.RoundTrips, rt.Connections, time.Since(start).Seconds())
	}
	// Every request the peer made: its warm-up and its cycles, two requests each, per run;
	// its setup (tables, the size and count queries) is included, a few per run.
	requests := float64(2 * 2 * (o.Cycles + peerWarmup))
	r.txPerRequest = float64(txTotal) / requests
	r.rtPerRequest = float64(rtTotal) / requests
	r.bytesPerCycle = float64(bytesTotal) / float64(2*(o.Cycles+peerWarmup))
	r.peerOwnBytes = ownBytes
	return r, nil
}

// readPeerOut reads the peer's last line of output into the phase: its cycles, wall time and
// latencies; it checks that the peer executed a write for each of its cycles.
func readPeerOut(out []byte, cycles int, into *phase) (peerOut, error) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var po peerOut
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &po); err != nil {
		return po, fmt.Errorf("peer output %q: %w", lines[len(lines)-1], err)
	}
	if po.WritesExecuted != cycles+peerWarmup {
		return po, fmt.Errorf("peer executed %d writes for %d cycles", po.WritesExecuted, cycles+peerWarmup)
	}
	cps, err := strconv.ParseFloat(po.CyclesPerS, 64)
	if err != nil {
		return po, fmt.Errorf("peer cycles_per_s %q", po.CyclesPerS)
	}
	// The peer times its own cycles; the wall time follows from its rate. It reports only
	// its p50 and p99: they are kept as the two samples whose nearest-rank p50 and p99 they are.
	into.cycles = cycles
	into.wall = time.Duration(float64(cycles) / cps * float64(time.Second))
	for _, v := range []struct {
		s    string
		into *[]time.Duration
	}{{po.SuspendP50, &into.suspend}, {po.SuspendP99, &into.suspend}, {po.ResumeP50, &into.resume}, {po.ResumeP99, &into.resume}} {
		f, err := strconv.ParseFloat(v.s, 64)
		if err != nil {
			return po, fmt.Errorf("peer latency %q", v.s)
		}
		*v.into = append(*v.into, time.Duration(f*float64(time.Millisecond)))
	}
	return po, nil
}
