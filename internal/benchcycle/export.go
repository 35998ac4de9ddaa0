package benchcycle

import (
	"context"
	"time"
)

// CPU measures what a phase of another benchmark (internal/benchscale) costs in processor
// time: the application process and its database's PostgreSQL backends, as cpu.go measures
// the cycle's.
type CPU struct{ s *cpuSampler }

// SampleCPU starts sampling process appPID and the backends of database db (read through a
// connection of its own as superURL's user).
func SampleCPU(ctx context.Context, superURL string, appPID int, db string) (*CPU, error) {
	s, err := sampleCPU(ctx, superURL, appPID, db)
	if err != nil {
		return nil, err
	}
	return &CPU{s: s}, nil
}

// Stop takes a last sample and returns the CPU the process and the backends used since the
// first sample.
func (c *CPU) Stop() (app, db time.Duration, err error) {
	u, err := c.s.stop()
	return u.app, u.db, err
}
