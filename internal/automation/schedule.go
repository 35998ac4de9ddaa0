package automation

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/stewardhq/steward/internal/autonomy"
)

// Schedule is an automation's schedule: a five-field cron expression read in the owner's
// zone with autonomy.Cron's wall-clock rules across daylight saving changes (one run on each
// switch day). One difference from classic cron: when both the day of the month and the
// weekday are restricted, both must match ("0 9 1-7 * 1" is the first Monday of the month),
// where classic cron fires on either.
type Schedule struct {
	cron  autonomy.Cron
	days  uint64 // the weekdays that must also match (both restricted), or 0
	Words string // what the owner wrote ("" for cron)
}

// ParseSchedule reads cron (five fields) or words ("every weekday at 7:30", "every first
// Monday of the month at 9", "every 30 minutes") in the time zone tz.
func ParseSchedule(s, tz string) (Schedule, error) {
	s = strings.Join(strings.Fields(s), " ")
	expr, words, err := CronOf(s)
	if err != nil {
		return Schedule{}, err
	}
	fields := strings.Fields(expr)
	var days uint64
	if len(fields) == 5 && fields[2] != "*" && fields[4] != "*" && fields[4] != "?" {
		spec, err := cron.ParseStandard("0 0 * * " + fields[4])
		if err != nil {
			return Schedule{}, invalid("schedule %q: %v", s, err)
		}
		days = spec.(*cron.SpecSchedule).Dow
		fields[4] = "*"
	}
	c, err := autonomy.ParseCron(strings.Join(fields, " "), tz)
	if err != nil {
		return Schedule{}, invalid("%v", err)
	}
	sc := Schedule{cron: c, days: days, Words: words}
	if sc.Next(time.Now()).IsZero() {
		return Schedule{}, invalid("schedule %q never fires", s)
	}
	return sc, nil
}

// Cron is the expression as stored (five fields).
func (s Schedule) Cron() string {
	if s.days == 0 {
		return s.cron.String()
	}
	f := strings.Fields(s.cron.String())
	var d []string
	for wd := range 7 {
		if s.days&(1<<wd) != 0 {
			d = append(d, strconv.Itoa(wd))
		}
	}
	f[4] = strings.Join(d, ",")
	return strings.Join(f, " ")
}

// Location is the schedule's zone.
func (s Schedule) Location() *time.Location { return s.cron.Location() }

// Next is the first run strictly after after; zero when there is none.
func (s Schedule) Next(after time.Time) time.Time {
	t := after
	for range 1000 {
		t = s.cron.Next(t)
		if t.IsZero() || s.days == 0 || s.days&(1<<uint(t.In(s.Location()).Weekday())) != 0 {
			return t
		}
	}
	return time.Time{}
}

// NextN are the next n runs after after.
func (s Schedule) NextN(after time.Time, n int) []time.Time {
	var out []time.Time
	for t := s.Next(after); !t.IsZero() && len(out) < n; t = s.Next(t) {
		out = append(out, t)
	}
	return out
}

// Latest is the last run in (since, now], when there is one: a schedule missed for a while
// catches up once, with its latest time; it looks back at most 35 days.
func (s Schedule) Latest(since, now time.Time) (time.Time, bool) {
	if floor := now.Add(-35 * 24 * time.Hour); since.Before(floor) {
		since = floor
	}
	var last time.Time
	for t := s.Next(since); !t.IsZero() && !t.After(now); t = s.Next(t) {
		last = t
	}
	return last, !last.IsZero()
}

// Shortest is the shortest gap between runs over the next year's first 500 runs from from.
func (s Schedule) Shortest(from time.Time) time.Duration {
	shortest := time.Duration(1<<63 - 1)
	prev := s.Next(from)
	for range 500 {
		t := s.Next(prev)
		if t.IsZero() {
			break
		}
		shortest = min(shortest, t.Sub(prev))
		prev = t
	}
	return shortest
}

var (
	everyNRE   = regexp.MustCompile(`^every (\d{1,3}) ?(minutes?|mins?|hours?|hrs?)$`)
	atRE       = regexp.MustCompile(`^(.*?) at (.+)$`)
	nthRE      = regexp.MustCompile(`^(first|second|third|fourth|1st|2nd|3rd|4th|last) (\w+) of (?:the|every) month$`)
	monthDayRE = regexp.MustCompile(`^(?:the )?(\d{1,2})(?:st|nd|rd|th)? of (?:the|every) month$`)
)

// CronOf turns words into cron; a five-field cron expression (or an @descriptor) is returned
// as it is, with no words.
func CronOf(s string) (expr, words string, err error) {
	in := strings.ToLower(strings.TrimSpace(s))
	if in == "" {
		return "", "", invalid("schedule is empty: give cron (\"30 7 * * 1-5\") or words (\"every weekday at 7:30\")")
	}
	if strings.HasPrefix(in, "@") || looksLikeCron(in) {
		return s, "", nil
	}
	words = s
	in = strings.TrimPrefix(strings.TrimPrefix(in, "every "), "each ")
	if g := everyNRE.FindStringSubmatch("every " + in); g != nil {
		n, _ := strconv.Atoi(g[1])
		if n == 0 {
			return "", "", invalid("schedule %q: every 0 %s never fires", s, g[2])
		}
		if g[2][0] == 'h' {
			if n > 23 {
				return "", "", invalid("schedule %q: say \"every day at …\" for a day or more", s)
			}
			return fmt.Sprintf("0 */%d * * *", n), words, nil
		}
		if n > 59 {
			return "", "", invalid("schedule %q: say \"every N hours\" for an hour or more", s)
		}
		return fmt.Sprintf("*/%d * * * *", n), words, nil
	}
	switch in {
	case "hour", "hourly":
		return "0 * * * *", words, nil
	}
	days, at := in, "9:00"
	if g := atRE.FindStringSubmatch(in); g != nil {
		days, at = g[1], g[2]
	} else if h, m, ok := clock(strings.TrimPrefix(in, "day at ")); ok && strings.HasPrefix(in, "day at ") {
		return fmt.Sprintf("%d %d * * *", m, h), words, nil
	}
	h, m, ok := clock(strings.TrimSpace(at))
	if !ok {
		return "", "", invalid("schedule %q: %q is not a time of day (say \"at 7:30\" or \"at 5 pm\")", s, at)
	}
	dom, dow, err := daysOf(strings.TrimSpace(strings.TrimPrefix(days, "on ")))
	if err != nil {
		return "", "", invalid("schedule %q: %v; say e.g. \"every weekday at 7:30\", \"every monday and thursday at 9\", \"every first monday of the month at 9\" or cron such as \"30 7 * * 1-5\"", s, err)
	}
	return fmt.Sprintf("%d %d %s * %s", m, h, dom, dow), words, nil
}

// daysOf reads the day part of a schedule: day, weekday, weekend, monday and thursday,
// first monday of the month, 15th of the month.
func daysOf(s string) (dom, dow string, err error) {
	switch s {
	case "day", "daily", "morning", "evening", "":
		return "*", "*", nil
	case "weekday", "weekdays", "workday", "workdays", "week day":
		return "*", "1-5", nil
	case "weekend", "weekends", "weekend day":
		return "*", "0,6", nil
	case "month":
		return "1", "*", nil
	}
	if g := nthRE.FindStringSubmatch(s); g != nil {
		wd, ok := weekday(g[2])
		if !ok {
			return "", "", fmt.Errorf("%q is not a weekday", g[2])
		}
		ranges := map[string]string{"first": "1-7", "1st": "1-7", "second": "8-14", "2nd": "8-14", "third": "15-21", "3rd": "15-21", "fourth": "22-28", "4th": "22-28"}
		r, ok := ranges[g[1]]
		if !ok {
			return "", "", fmt.Errorf("\"last\" weekday of the month is not supported")
		}
		return r, strconv.Itoa(wd), nil
	}
	if g := monthDayRE.FindStringSubmatch(s); g != nil {
		n, _ := strconv.Atoi(g[1])
		if n < 1 || n > 31 {
			return "", "", fmt.Errorf("%d is not a day of the month", n)
		}
		return g[1], "*", nil
	}
	var ds []string
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '&' }) {
		if p == "and" {
			continue
		}
		wd, ok := weekday(p)
		if !ok {
			return "", "", fmt.Errorf("%q is not a day", p)
		}
		ds = append(ds, strconv.Itoa(wd))
	}
	if len(ds) == 0 {
		return "", "", fmt.Errorf("no day")
	}
	return "*", strings.Join(ds, ","), nil
}

// weekday reads "monday", "mon", "mondays".
func weekday(s string) (int, bool) {
	s = strings.TrimSuffix(s, "s")
	for wd := time.Sunday; wd <= time.Saturday; wd++ {
		name := strings.ToLower(wd.String())
		if s == name || s == name[:3] {
			return int(wd), true
		}
	}
	return 0, false
}

var cronFieldRE = regexp.MustCompile(`^[0-9*/,\-?a-z]+$`)

// looksLikeCron is five fields of cron's characters, the first starting with a digit or *.
func looksLikeCron(s string) bool {
	f := strings.Fields(s)
	if len(f) != 5 || !strings.ContainsAny(f[0][:1], "0123456789*") {
		return false
	}
	for _, x := range f {
		if !cronFieldRE.MatchString(x) {
			return false
		}
	}
	return true
}
