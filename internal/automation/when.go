package automation

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

// ResolveAt reads when a reminder is due: an RFC 3339 time, or the owner's words read in loc
// at now — "17:00", "5 pm", "5:30pm", "tomorrow 9:00", "today at 18:30", "monday 8:00",
// "2026-12-24 18:00", "in 20 minutes", "in 2 hours", "in 1 day". A bare time is the next
// one to come (today, or tomorrow once it has passed). A wall time that does not exist that
// day (the spring gap) is read as Go's time.Date reads it: shifted past the gap.
func ResolveAt(s string, now time.Time, loc *time.Location) (time.Time, error) {
	in := strings.ToLower(strings.Join(strings.Fields(s), " "))
	if in == "" {
		return time.Time{}, invalid("at is empty: give a time such as \"17:00\", \"tomorrow 9:00\", \"in 20 minutes\" or RFC 3339")
	}
	if t, err := time.Parse(time.RFC3339, strings.ToUpper(in)); err == nil {
		return t, nil
	}
	if t, ok, err := relative(in, now); ok || err != nil {
		return t, err
	}
	now = now.In(loc)
	day, rest, named := dayOf(in, now, loc)
	rest = strings.TrimSpace(strings.TrimPrefix(rest, "at "))
	h, m, ok := clock(rest)
	if !ok {
		return time.Time{}, invalid("%s is not a time I can read: give \"17:00\", \"5 pm\", \"tomorrow 9:00\", \"in 20 minutes\" or RFC 3339 (2026-12-24T17:00:00+01:00)", steward.Visible(s))
	}
	t := time.Date(day.Year(), day.Month(), day.Day(), h, m, 0, 0, loc)
	if !named && !t.After(now) {
		t = time.Date(day.Year(), day.Month(), day.Day()+1, h, m, 0, 0, loc)
	}
	return t, nil
}

var relativeRE = regexp.MustCompile(`^in (an?|\d{1,5}) ?(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w)$`)

// relative reads "in N units".
func relative(in string, now time.Time) (time.Time, bool, error) {
	g := relativeRE.FindStringSubmatch(in)
	if g == nil {
		if strings.HasPrefix(in, "in ") {
			return time.Time{}, true, invalid("%q: say \"in 20 minutes\", \"in 2 hours\" or \"in 3 days\"", in)
		}
		return time.Time{}, false, nil
	}
	n := 1
	if g[1] != "a" && g[1] != "an" {
		n, _ = strconv.Atoi(g[1])
	}
	var unit time.Duration
	switch g[2][0] {
	case 's':
		unit = time.Second
	case 'm':
		unit = time.Minute
	case 'h':
		unit = time.Hour
	case 'd':
		unit = 24 * time.Hour
	case 'w':
		unit = 7 * 24 * time.Hour
	}
	d := time.Duration(n) * unit
	if n == 0 || d > maxAhead {
		return time.Time{}, true, invalid("%q: a reminder is between a second and %d days ahead", in, int(maxAhead.Hours()/24))
	}
	return now.Add(d), true, nil
}

// maxAhead is how far ahead a reminder may be set.
const maxAhead = 5 * 366 * 24 * time.Hour

var dateRE = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})(?:t| |$)`)

// dayOf reads a leading day — today, tomorrow, a weekday (the next one, today included), a
// date — and returns it with the rest; named is set when the owner named the day.
func dayOf(in string, now time.Time, loc *time.Location) (day time.Time, rest string, named bool) {
	first, after, _ := strings.Cut(in, " ")
	switch first {
	case "today":
		return now, after, true
	case "tomorrow":
		return now.AddDate(0, 0, 1), after, true
	}
	for wd := time.Sunday; wd <= time.Saturday; wd++ {
		name := strings.ToLower(wd.String())
		if first == name || first == name[:3] {
			ahead := (int(wd) - int(now.Weekday()) + 7) % 7
			return now.AddDate(0, 0, ahead), after, ahead != 0
		}
	}
	if g := dateRE.FindStringSubmatch(in); g != nil {
		if d, err := time.ParseInLocation(time.DateOnly, g[1]+"-"+g[2]+"-"+g[3], loc); err == nil {
			return d, in[len(g[0]):], true
		}
	}
	return now, in, false
}

var clockRE = regexp.MustCompile(`^(\d{1,2})(?:[:.h](\d{2}))? ?(am|pm|a\.m\.|p\.m\.)?$`)

// clock reads "17:00", "9", "9.30", "5 pm", "5:30pm", "noon", "midnight".
func clock(s string) (h, m int, ok bool) {
	switch s {
	case "noon", "midday":
		return 12, 0, true
	case "midnight":
		return 0, 0, true
	}
	g := clockRE.FindStringSubmatch(s)
	if g == nil {
		return 0, 0, false
	}
	h, _ = strconv.Atoi(g[1])
	if g[2] != "" {
		m, _ = strconv.Atoi(g[2])
	}
	switch strings.ReplaceAll(g[3], ".", "") {
	case "am":
		if h < 1 || h > 12 {
			return 0, 0, false
		}
		h %= 12
	case "pm":
		if h < 1 || h > 12 {
			return 0, 0, false
		}
		h = h%12 + 12
	}
	return h, m, h < 24 && m < 60
}

func invalid(format string, args ...any) error {
	return steward.Errorf(steward.CodeInvalid, format, args...)
}

// Describe words an instant for a card: the owner's local time with its zone, and UTC.
func Describe(t time.Time, loc *time.Location) string {
	local := t.In(loc)
	s := local.Format("Mon 2 Jan 2006 15:04 MST")
	if loc != time.UTC {
		s += fmt.Sprintf(" (%s UTC)", t.UTC().Format("15:04"))
		if t.UTC().YearDay() != local.YearDay() {
			s = local.Format("Mon 2 Jan 2006 15:04 MST") + fmt.Sprintf(" (%s UTC)", t.UTC().Format("Mon 2 Jan 15:04"))
		}
	}
	return s
}
