package autonomy

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Cron is a standard five-field cron expression (or @daily, @weekly…) read in an IANA time
// zone. Parsing is robfig/cron's; firing times follow cron's wall-clock rules across daylight
// saving changes, which robfig/cron alone does not (it skips a time that falls in the spring
// gap and fires twice in the autumn's repeated hour):
//
//   - A schedule with fixed hours (e.g. "0 7 * * *", "30 2 * * 1-5") fires by the wall clock:
//     a time that does not exist that day (the spring gap) fires once, at the instant the
//     clock jumps (Vixie cron's rule); a time that occurs twice (the autumn overlap) fires
//     once, at its first occurrence.
//   - A schedule that runs every hour (e.g. "*/15 * * * *", "0 * * * *") fires by elapsed
//     time: every quarter of an hour that really happens, in the gap and in the overlap.
type Cron struct {
	expr     string
	loc      *time.Location
	wall     *cron.SpecSchedule // in UTC, over wall-clock times
	realTime *cron.SpecSchedule // in loc, over instants
}

// ParseCron parses expr in the time zone tz ("" means UTC). Descriptors @yearly, @monthly,
// @weekly, @daily, @midnight and @hourly are accepted; @every and TZ= prefixes are not (the
// zone is its own field, and a schedule must be anchored to the clock to have stable
// idempotency keys).
func ParseCron(expr, tz string) (Cron, error) {
	expr = strings.Join(strings.Fields(expr), " ")
	switch {
	case expr == "":
		return Cron{}, fmt.Errorf("cron expression is empty")
	case len(expr) > 100:
		return Cron{}, fmt.Errorf("cron expression is longer than 100 characters")
	case strings.HasPrefix(expr, "@every"):
		return Cron{}, fmt.Errorf("cron expression %q: @every is not supported; use a cron expression such as \"*/30 * * * *\"", expr)
	case strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ="):
		return Cron{}, fmt.Errorf("cron expression %q: give the time zone separately, not as a prefix", expr)
	}
	loc, err := LoadZone(tz)
	if err != nil {
		return Cron{}, err
	}
	s, err := cron.ParseStandard(expr)
	if err != nil {
		return Cron{}, fmt.Errorf("cron expression %q: %w", expr, err)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return Cron{}, fmt.Errorf("cron expression %q is not supported", expr)
	}
	c := Cron{expr: expr, loc: loc}
	if spec.Hour&allHours == allHours {
		rt := *spec
		rt.Location = loc
		c.realTime = &rt
	} else {
		w := *spec
		w.Location = time.UTC
		c.wall = &w
	}
	if c.Next(time.Now()).IsZero() {
		return Cron{}, fmt.Errorf("cron expression %q never fires", expr)
	}
	return c, nil
}

// allHours is the bit set of an hour field that matches every hour.
const allHours = 1<<24 - 1

// LoadZone loads an IANA time zone; "" and "UTC" are UTC. "Local" is refused: a schedule
// must not depend on the machine it runs on.
func LoadZone(tz string) (*time.Location, error) {
	switch tz {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return nil, fmt.Errorf("time zone %q: name an IANA zone such as Europe/Berlin", tz)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("time zone %q is not an IANA time zone name (such as Europe/Berlin)", tz)
	}
	return loc, nil
}

// String is the expression as parsed.
func (c Cron) String() string { return c.expr }

// Location is the schedule's time zone.
func (c Cron) Location() *time.Location { return c.loc }

// Next is the first firing time strictly after after, or the zero time if there is none.
func (c Cron) Next(after time.Time) time.Time {
	if c.realTime != nil {
		return c.realTime.Next(after)
	}
	w := wallAsUTC(after.In(c.loc))
	for range 2000 {
		nw := c.wall.Next(w)
		if nw.IsZero() {
			return time.Time{}
		}
		if t := resolveWall(nw, c.loc); t.After(after) {
			return t.In(c.loc)
		}
		w = nw
	}
	return time.Time{}
}

// Latest is the last firing time in (since, now], when there is one. A schedule missed for
// a long time catches up once, with its latest time, never with every time it missed; the
// search looks back at most maxCatchUp.
func (c Cron) Latest(since, now time.Time) (time.Time, bool) {
	if floor := now.Add(-maxCatchUp); since.Before(floor) {
		since = floor
	}
	var last time.Time
	for t := c.Next(since); !t.IsZero() && !t.After(now); t = c.Next(t) {
		last = t
	}
	return last, !last.IsZero()
}

// maxCatchUp bounds how far back a tick looks for a missed firing time.
const maxCatchUp = 35 * 24 * time.Hour

// wallAsUTC is t's wall clock read as if it were UTC (which has no daylight saving).
func wallAsUTC(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// resolveWall is the instant the wall-clock time w (given as UTC fields) denotes in loc: the
// first of two when the time occurs twice; the instant the clock jumps when it does not
// occur at all.
func resolveWall(w time.Time, loc *time.Location) time.Time {
	_, before := w.Add(-36 * time.Hour).In(loc).Zone()
	_, after := w.Add(36 * time.Hour).In(loc).Zone()
	c1 := w.Add(-time.Duration(before) * time.Second) // w read with the offset before a change
	c2 := w.Add(-time.Duration(after) * time.Second)  // … and after it
	ok1, ok2 := wallAsUTC(c1.In(loc)).Equal(w), wallAsUTC(c2.In(loc)).Equal(w)
	switch {
	case ok1 && ok2:
		if c2.Before(c1) {
			return c2
		}
		return c1
	case ok1:
		return c1
	case ok2:
		return c2
	}
	// In a gap: c1 (read with the old offset) lies past the jump, in the new zone period,
	// which starts at the jump.
	start, _ := c1.In(loc).ZoneBounds()
	if start.IsZero() || start.After(c1) {
		return c1
	}
	return start
}
