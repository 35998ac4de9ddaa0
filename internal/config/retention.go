package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retention is how long the sweep keeps each kind of row that only grows; zero: forever.
type Retention struct {
	Audit             time.Duration // STEWARD_RETAIN_AUDIT: audit events (365d; at least 30d)
	WebhookDeliveries time.Duration // STEWARD_RETAIN_WEBHOOKS: webhook deliveries and their bodies (30d)
	MemoryOutbox      time.Duration // STEWARD_RETAIN_OUTBOX: memory outbox items done or failed (7d)
	JobRuns           time.Duration // STEWARD_RETAIN_JOB_RUNS: finished job runs (90d)
}

const day = 24 * time.Hour

// retention reads the Retention area.
func (r *reader) retention() Retention {
	return Retention{
		Audit:             r.keep("STEWARD_RETAIN_AUDIT", 365*day, 30*day),
		WebhookDeliveries: r.keep("STEWARD_RETAIN_WEBHOOKS", 30*day, day),
		MemoryOutbox:      r.keep("STEWARD_RETAIN_OUTBOX", 7*day, time.Hour),
		JobRuns:           r.keep("STEWARD_RETAIN_JOB_RUNS", 90*day, day),
	}
}

// keep reads one retention: a number of days (400d), a Go duration (720h), or off (or 0) to
// keep forever; less than least is refused.
func (r *reader) keep(name string, def, least time.Duration) time.Duration {
	v := strings.ToLower(r.str(name, ""))
	switch v {
	case "":
		return def
	case "off", "0":
		return 0
	}
	d, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * day
		if n > 36500 {
			err = strconv.ErrRange
		}
	}
	if err != nil || d < least {
		r.fail(name, v, fmt.Sprintf("must be a number of days such as 90d (at least %s) or off", formatDays(least)))
		return def
	}
	return d
}

// formatDays prints d in days when it is whole days, else as a duration.
func formatDays(d time.Duration) string {
	if d%day == 0 {
		return strconv.Itoa(int(d/day)) + "d"
	}
	return d.String()
}
