package calendar

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/teambition/rrule-go"
)

// Bounds of a series' expansion (docs/MAIL.md, "Security and limits"): the work for one series in one
// listing is the same whether it began yesterday or in 1970, whatever its rule says.
const (
	// MaxPerSeries is the most occurrences of one series a listing shows: a series with more
	// in the range ("every minute") is listed once, saying so.
	MaxPerSeries = 100
	// maxSteps bounds the occurrences computed for one series in one listing (those before
	// the range too), and what one period of its rule may hold (rrule-go computes a period
	// whole: a yearly rule with every hour, minute and second holds 31 million).
	maxSteps = 10_000
	// maxByValues bounds each BYxxx list of a rule.
	maxByValues = 366
)

// rule is a series: its recurrence rule from its start (in its own zone, so a weekly 09:00
// stays 09:00 across a DST change), its RDATEs and EXDATEs.
type rule struct {
	opt            rrule.ROption
	start          time.Time
	rdates, exdate []time.Time
}

// expansion is a series' occurrences overlapping a range.
type expansion struct {
	// starts are the occurrences' starts in order; none when tooMany.
	starts []time.Time
	// tooMany marks a series with more than MaxPerSeries occurrences in the range (or more
	// than maxSteps to compute).
	tooMany bool
	// first is the first occurrence found overlapping the range (zero when none was).
	first time.Time
}

var errRule = errors.New("the recurrence rule cannot be expanded")

// expand lists the starts of the series' occurrences, each lasting d, that overlap
// [from, to): its rule moved forward to shortly before the range (advance), then walked
// lazily, stopping at to, at MaxPerSeries occurrences in the range and at maxSteps in all,
// checking ctx as it goes.
func expand(ctx context.Context, s rule, d time.Duration, from, to time.Time) (expansion, error) {
	after := from.Add(-d)
	set, dense, err := s.set(after, to)
	if err != nil || dense {
		return expansion{tooMany: dense}, err
	}
	var out expansion
	next := set.Iterator()
	for steps := 1; ; steps++ {
		if steps%1024 == 0 && ctx.Err() != nil {
			return out, ctx.Err()
		}
		t, ok := next()
		switch {
		case !ok || !t.Before(to):
			return out, nil
		case steps > maxSteps || len(out.starts) == MaxPerSeries && !t.Before(after):
			return expansion{tooMany: true, first: out.first}, nil
		case t.Before(after):
			continue
		case out.first.IsZero():
			out.first = t
		}
		out.starts = append(out.starts, t)
	}
}

// set is the series from shortly before after (advance) with its RDATEs and EXDATEs within
// [after, to]; dense reports a rule whose every period holds more than maxSteps.
func (s rule) set(after, to time.Time) (set *rrule.Set, dense bool, err error) {
	set = &rrule.Set{}
	if err := checkRule(s.opt); err != nil {
		return nil, false, err
	}
	if reachable(s.opt, s.start) && someDay(s.opt, after) {
		opt, start, ended := advance(s.opt, s.start, after)
		switch {
		case perPeriod(opt) > maxSteps:
			return nil, true, nil
		case ended || !positioned(opt):
		default:
			opt.Dtstart = start
			r, err := rrule.NewRRule(opt)
			if err != nil {
				return nil, false, fmt.Errorf("%w: %v", errRule, err)
			}
			set.RRule(r)
		}
	}
	for _, t := range s.rdates {
		if !t.Before(after) && t.Before(to) {
			set.RDate(t)
		}
	}
	for _, t := range s.exdate {
		if !t.Before(after) && !t.After(to) {
			set.ExDate(t)
		}
	}
	return set, false, nil
}

// checkRule refuses what rrule-go cannot expand safely: BYEASTER (not iCalendar; an offset
// past the year indexes out of its table) and overlong BYxxx lists.
func checkRule(o rrule.ROption) error {
	if len(o.Byeaster) > 0 {
		return fmt.Errorf("%w: BYEASTER", errRule)
	}
	for _, l := range [][]int{o.Bysetpos, o.Bymonth, o.Bymonthday, o.Byyearday, o.Byweekno, o.Byhour, o.Byminute, o.Bysecond} {
		if len(l) > maxByValues {
			return fmt.Errorf("%w: a BY list of %d values", errRule, len(l))
		}
	}
	if len(o.Byweekday) > maxByValues {
		return fmt.Errorf("%w: a BYDAY list of %d values", errRule, len(o.Byweekday))
	}
	return nil
}

// reachable reports whether a rule repeating by the hour, minute or second can reach a time
// of day its BYHOUR, BYMINUTE and BYSECOND allow: FREQ=HOURLY;INTERVAL=24;BYHOUR=5 from
// midnight never does, and rrule-go would look for it for ever.
func reachable(o rrule.ROption, start time.Time) bool {
	unit := map[rrule.Frequency]int{rrule.HOURLY: 3600, rrule.MINUTELY: 60, rrule.SECONDLY: 1}[o.Freq]
	if unit == 0 || len(o.Byhour)+len(o.Byminute)+len(o.Bysecond) == 0 {
		return true
	}
	h0, m0, s0 := start.Clock()
	x0 := h0*3600 + m0*60 + s0
	g := gcd(max(o.Interval, 1)*unit, 86400)
	hours, mins, secs := orAll(o.Byhour, 24), []int{m0}, []int{s0}
	if o.Freq >= rrule.MINUTELY {
		mins = orAll(o.Byminute, 60)
	}
	if o.Freq == rrule.SECONDLY {
		secs = orAll(o.Bysecond, 60)
	}
	for _, h := range hours {
		for _, m := range mins {
			for _, s := range secs {
				if ((h*3600+m*60+s-x0)%g+g)%g == 0 {
					return true
				}
			}
		}
	}
	return false
}

// someDay reports whether a rule has a day its BYMONTH, BYMONTHDAY, BYYEARDAY, BYWEEKNO and
// BYDAY allow: rrule-go walks period after period to the year 9999 looking for one
// (FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30: half a second of CPU a listing). The calendar
// repeats every 400 years, so a yearly rule with the same days, walked over one such cycle
// just before 9999, answers in a millisecond or two. A monthly or yearly BYDAY ("the last
// Friday") means something else by the year, and is left to the library (about 30 ms).
func someDay(o rrule.ROption, t time.Time) bool {
	if o.Freq < rrule.WEEKLY && len(o.Byweekday) > 0 || len(o.Bymonthday)+len(o.Byyearday)+len(o.Byweekno)+len(o.Byweekday) == 0 {
		return true
	}
	p := rrule.ROption{Freq: rrule.YEARLY, Count: 1, Bymonth: o.Bymonth, Bymonthday: o.Bymonthday, Byyearday: o.Byyearday,
		Byweekno: o.Byweekno, Wkst: o.Wkst, Byhour: []int{0}, Byminute: []int{0}, Bysecond: []int{0},
		Dtstart: time.Date(9200+(t.Year()%400+400)%400, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, w := range o.Byweekday { // weekly or faster, BYDAY's ordinal means nothing
		p.Byweekday = append(p.Byweekday, [7]rrule.Weekday{rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA, rrule.SU}[w.Day()])
	}
	r, err := rrule.NewRRule(p)
	if err != nil {
		return true // NewRRule of the rule itself reports it
	}
	_, ok := r.Iterator()()
	return ok
}

// positioned reports whether a BYSETPOS can pick anything: a position past what a period
// can hold (FREQ=SECONDLY;BYSETPOS=2) picks nothing, and rrule-go would walk period after
// period, second after second, to the year 9999 looking for it.
func positioned(o rrule.ROption) bool {
	n := perPeriod(o)
	for _, p := range o.Bysetpos {
		if p != 0 && max(p, -p) <= n {
			return true
		}
	}
	return len(o.Bysetpos) == 0
}

func orAll(l []int, n int) []int {
	if len(l) > 0 {
		return l
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// perPeriod bounds the occurrences one period of a rule (its defaults written out) holds:
// the days of the period (of a weekly rule, its weekdays) times the times of day it lists.
func perPeriod(o rrule.ROption) int {
	n := map[rrule.Frequency]int{rrule.YEARLY: 366, rrule.MONTHLY: 31, rrule.WEEKLY: 7}[o.Freq]
	if o.Freq == rrule.WEEKLY && len(o.Byweekday) > 0 {
		n = min(n, len(o.Byweekday))
	}
	n = max(n, 1)
	if o.Freq < rrule.HOURLY {
		n *= max(len(o.Byhour), 1)
	}
	if o.Freq < rrule.MINUTELY {
		n *= max(len(o.Byminute), 1)
	}
	if o.Freq < rrule.SECONDLY {
		n *= max(len(o.Bysecond), 1)
	}
	return n
}

// pin writes out the parts a rule takes from its start when it does not give them (as
// rrule-go does: the month and day of a yearly rule, the day of a monthly one, the weekday
// of a weekly one, the time of day of all coarser than it), so moving its start keeps them.
func pin(o rrule.ROption, start time.Time) rrule.ROption {
	if len(o.Byweekno)+len(o.Byyearday)+len(o.Bymonthday)+len(o.Byweekday)+len(o.Byeaster) == 0 {
		switch o.Freq {
		case rrule.YEARLY:
			if len(o.Bymonth) == 0 {
				o.Bymonth = []int{int(start.Month())}
			}
			o.Bymonthday = []int{start.Day()}
		case rrule.MONTHLY:
			o.Bymonthday = []int{start.Day()}
		case rrule.WEEKLY:
			o.Byweekday = []rrule.Weekday{weekdays[start.Weekday()]}
		}
	}
	h, m, s := start.Clock()
	if len(o.Byhour) == 0 && o.Freq < rrule.HOURLY {
		o.Byhour = []int{h}
	}
	if len(o.Byminute) == 0 && o.Freq < rrule.MINUTELY {
		o.Byminute = []int{m}
	}
	if len(o.Bysecond) == 0 && o.Freq < rrule.SECONDLY {
		o.Bysecond = []int{s}
	}
	return o
}

var weekdays = [7]rrule.Weekday{rrule.SU, rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA}

// seconds is the length of a period of each frequency that has a fixed one (on the wall
// clock, as rrule-go counts).
var seconds = map[rrule.Frequency]int64{rrule.SECONDLY: 1, rrule.MINUTELY: 60, rrule.HOURLY: 3600, rrule.DAILY: 86400, rrule.WEEKLY: 7 * 86400}

// advance moves a rule's start forward by whole intervals to at least one interval before
// t, so expanding it costs the same whether the series began yesterday or in 1970: its
// defaults are pinned first, and the phase is kept (FREQ=MINUTELY;INTERVAL=7 moves by a
// multiple of 7 minutes, on the wall clock as rrule-go counts). A COUNT is kept only where
// every interval holds exactly one occurrence (a rule with no BYxxx coarser than monthly):
// it is reduced by the intervals skipped, and ended reports a series over before t.
// Otherwise a rule with a COUNT stays where it began (maxSteps bounds it).
func advance(o rrule.ROption, start, t time.Time) (rrule.ROption, time.Time, bool) {
	simple := len(o.Bysetpos)+len(o.Bymonth)+len(o.Bymonthday)+len(o.Byyearday)+len(o.Byweekno)+len(o.Byweekday)+
		len(o.Byhour)+len(o.Byminute)+len(o.Bysecond) == 0 && seconds[o.Freq] > 0
	if o.Count > 0 && !simple {
		return o, start, false
	}
	o = pin(o, start)
	n := max(o.Interval, 1)
	t = t.In(start.Location())
	var k int
	var moved time.Time
	switch o.Freq {
	case rrule.YEARLY:
		k = (t.Year()-start.Year())/n - 1
		moved = time.Date(start.Year()+k*n, 1, 1, 0, 0, 0, 0, start.Location())
	case rrule.MONTHLY:
		k = ((t.Year()-start.Year())*12+int(t.Month()-start.Month()))/n - 1
		moved = time.Date(start.Year(), start.Month()+time.Month(k*n), 1, 0, 0, 0, 0, start.Location())
	default:
		unit := seconds[o.Freq] * int64(n)
		k = int((wall(t)-wall(start))/unit) - 1
		moved, k = onWall(start, k, unit)
	}
	if k <= 0 {
		return o, start, false
	}
	if o.Count > 0 {
		if o.Count <= k {
			return o, start, true
		}
		o.Count -= k
	}
	return o, moved, false
}

// wall is a time's wall clock in its zone, as seconds since 1970 (as if it were UTC).
func wall(t time.Time) int64 {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, 0, time.UTC).Unix()
}

// onWall is start moved k units forward on the wall clock; where that wall time does not
// exist (a DST gap) it steps back a unit at a time, and gives up (k 0) after a day.
func onWall(start time.Time, k int, unit int64) (time.Time, int) {
	for tries := 0; k > 0 && int64(tries)*unit <= 86400; tries, k = tries+1, k-1 {
		w := time.Unix(wall(start)+int64(k)*unit, 0).UTC()
		moved := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, start.Location())
		if wall(moved) == w.Unix() {
			return moved, k
		}
	}
	return start, 0
}

// every words how often a rule repeats, for a series too dense to list.
func every(o rrule.ROption) string {
	units := [...]string{"year", "month", "week", "day", "hour", "minute", "second"}
	if o.Freq < 0 || int(o.Freq) >= len(units) {
		return "often"
	}
	unit := units[o.Freq]
	if o.Interval > 1 {
		return fmt.Sprintf("every %d %ss", o.Interval, unit)
	}
	return "every " + unit
}
