package benchcycle

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// CPU time is the benchmark's measure that a busy machine disturbs least: how much processor
// each side spends per cycle, in its own process and in its PostgreSQL backends, whatever
// else runs beside it. cycles/s and latencies on a shared 2-core machine move with the load;
// CPU per cycle barely does.

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuSampleEvery is how often a cpuSampler reads the backends: a backend's CPU after its last
// sample before it exits (the peer's, when node ends) is not counted.
const cpuSampleEvery = 50 * time.Millisecond

// cpuTime is the user and system CPU time process pid has used, from /proc/<pid>/stat.
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: count after it.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime: fields 14 and 15
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// cpuUse is the CPU one phase used: in the application process and in its database's
// PostgreSQL backends.
type cpuUse struct{ app, db time.Duration }

// cpuSampler measures a cpuUse: it samples the application process and the backends of one
// database until stopped. The baseline is the first sample in which the database has a
// backend (the peer connects after loading its modules, so their CPU is not counted);
// backends that connect later count from zero.
type cpuSampler struct {
	appPID int
	db     string
	done   chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	err      error
	started  bool
	stopping bool
	app0     time.Duration
	app      time.Duration
	backends map[int][2]time.Duration // pid → first and last sample
}

// sampleCPU starts sampling process appPID and the backends of database db, read through a
// connection of its own to the postgres database (superURL).
func sampleCPU(ctx context.Context, superURL string, appPID int, db string) (*cpuSampler, error) {
	conn, err := Connect(ctx, superURL, "postgres")
	if err != nil {
		return nil, err
	}
	s := &cpuSampler{appPID: appPID, db: db, done: make(chan struct{}), backends: map[int][2]time.Duration{}}
	s.sample(ctx, conn) // the baseline of a process already connected
	s.wg.Go(func() {
		defer conn.Close(context.WithoutCancel(ctx))
		t := time.NewTicker(cpuSampleEvery)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				s.sample(ctx, conn)
				return
			case <-ctx.Done():
				return
			case <-t.C:
				s.sample(ctx, conn)
			}
		}
	})
	return s, nil
}

// sample reads the database's backends and the CPU of each, and of the application.
func (s *cpuSampler) sample(ctx context.Context, conn *pgx.Conn) {
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1`, s.db)
	var pids []int
	if err == nil {
		pids, err = pgx.CollectRows(rows, pgx.RowTo[int])
	}
	app, appErr := cpuTime(s.appPID)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err = cmp.Or(err, appErr); err != nil {
		if !s.stopping {
			s.err = cmp.Or(s.err, err)
		}
		return
	}
	baseline := !s.started
	if baseline {
		if len(pids) == 0 {
			return
		}
		s.started, s.app0 = true, app
	}
	s.app = app
	for _, pid := range pids {
		t, err := cpuTime(pid)
		if err != nil {
			continue // exited since the query
		}
		b := s.backends[pid] // a backend first seen after the baseline counts from zero
		if baseline {
			b[0] = t
		}
		b[1] = t
		s.backends[pid] = b
	}
}

// stop takes a last sample and returns what the phase used since the baseline.
func (s *cpuSampler) stop() (cpuUse, error) {
	s.mu.Lock()
	s.stopping = true // the application may have exited: its last sample stands
	s.mu.Unlock()
	close(s.done)
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return cpuUse{}, fmt.Errorf("cpu sample: %w", s.err)
	}
	if !s.started {
		return cpuUse{}, fmt.Errorf("cpu sample: database %s never had a backend", s.db)
	}
	u := cpuUse{app: s.app - s.app0}
	for _, b := range s.backends {
		u.db += b[1] - b[0]
	}
	return u, nil
}
