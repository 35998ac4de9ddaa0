package calendar

import (
	"time"

	"github.com/teambition/rrule-go"
)

// rruleSet is a series' occurrences: its rule, extra dates and exceptions.
type rruleSet = rrule.Set

// newSet builds a series from its rule starting at start (whose zone the rule keeps: the
// wall-clock time of each occurrence stays across a DST change), RDATEs and EXDATEs.
func newSet(opt rrule.ROption, start time.Time, rdates, exdates []time.Time) (*rruleSet, error) {
	opt.Dtstart = start
	rule, err := rrule.NewRRule(opt)
	if err != nil {
		return nil, err
	}
	set := &rrule.Set{}
	set.RRule(rule)
	set.DTStart(start)
	for _, t := range rdates {
		set.RDate(t)
	}
	for _, t := range exdates {
		set.ExDate(t)
	}
	return set, nil
}
