package calendar

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav/caldav"
	"github.com/teambition/rrule-go"
)

// object is one event (lines of a VEVENT after its UID) as the server returns it.
func object(t *testing.T, lines string) caldav.CalendarObject {
	t.Helper()
	src := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:x@test\r\nDTSTAMP:20260101T000000Z\r\n" +
		strings.ReplaceAll(strings.TrimSpace(lines), "\n", "\r\n") + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	cal, err := ical.NewDecoder(strings.NewReader(src)).Decode()
	if err != nil {
		t.Fatal(err)
	}
	return caldav.CalendarObject{Path: "/x/calendar/x.ics", Data: cal}
}

// TestDenseSeriesBounded: series every minute and every second since 1970, each occurrence
// a minute or an instant long, and one whose hours its interval never reaches: today's
// expansion lists each dense series once, dated today, saying so, the unreachable one not
// at all, and allocates a bounded amount whatever the series' start.
func TestDenseSeriesBounded(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	from := time.Date(2026, 12, 7, 0, 0, 0, 0, berlin)
	to := from.AddDate(0, 0, 1)
	for _, c := range []struct{ name, lines, note string }{
		{"minutely", "DTSTART:19700101T000000Z\nDTEND:19700101T000100Z\nSUMMARY:Spam\nRRULE:FREQ=MINUTELY", "repeats every minute"},
		{"secondly", "DTSTART:19700101T000000Z\nSUMMARY:Spam\nRRULE:FREQ=SECONDLY", "repeats every second"},
		{"every 7 minutes", "DTSTART:19700101T000000Z\nSUMMARY:Spam\nRRULE:FREQ=MINUTELY;INTERVAL=7", "repeats every 7 minutes"},
		{"every second of every day of the year", "DTSTART:19700101T000000Z\nSUMMARY:Spam\nRRULE:FREQ=YEARLY;BYMONTH=12;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23;BYMINUTE=0,10,20,30,40,50;BYSECOND=0,30", "repeats every year"},
		{"unreachable hour", "DTSTART:19700101T000000Z\nSUMMARY:Never\nRRULE:FREQ=HOURLY;INTERVAL=24;BYHOUR=5", ""},
		{"second position of each second", "DTSTART:19700101T000000Z\nSUMMARY:Never\nRRULE:FREQ=SECONDLY;BYSETPOS=2", ""},
		{"february 30th", "DTSTART:19700101T000000Z\nSUMMARY:Never\nRRULE:FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := object(t, c.lines)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			evs, err := occurrences(context.Background(), o, from, to, berlin)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("expanding it allocated %d MB; want a bound whatever its start", alloc>>20)
			}
			if c.note == "" {
				if len(evs) != 0 {
					t.Errorf("a rule that never reaches its hour listed %d items: %+v", len(evs), evs[0])
				}
				return
			}
			if len(evs) != 1 {
				t.Fatalf("listed %d items, want the series once", len(evs))
			}
			e := evs[0]
			if !e.TooMany || !strings.Contains(e.Note, c.note) || !strings.Contains(e.Note, "too many to list") {
				t.Errorf("the dense series: too_many %v, note %q; want %q and too many to list", e.TooMany, e.Note, c.note)
			}
			if e.Start.Before(from) || !e.Start.Before(to) {
				t.Errorf("listed at %s, outside today", e.Start)
			}
		})
	}
}

// TestAdvanceKeepsTheSeries: a series moved forward to the range lists exactly what walking
// it from its start lists, in a zone with DST, for each frequency, with intervals, BYxxx
// parts, a COUNT, an UNTIL and an EXDATE.
func TestAdvanceKeepsTheSeries(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, rr := range []string{
		"FREQ=MINUTELY;INTERVAL=7;BYHOUR=9,10",
		"FREQ=MINUTELY;INTERVAL=45",
		"FREQ=HOURLY;INTERVAL=5",
		"FREQ=HOURLY;INTERVAL=3;BYMINUTE=0,30",
		"FREQ=SECONDLY;INTERVAL=3601;BYHOUR=2,3",
		"FREQ=DAILY;INTERVAL=3",
		"FREQ=DAILY;BYMONTH=3,4;BYDAY=1MO,FR",
		"FREQ=DAILY;BYWEEKNO=13",
		"FREQ=HOURLY;INTERVAL=5;BYMONTHDAY=29,31;BYYEARDAY=-278",
		"FREQ=MINUTELY;INTERVAL=30;BYMONTHDAY=-3",
		"FREQ=DAILY;COUNT=9000",
		"FREQ=DAILY;COUNT=20",
		"FREQ=HOURLY;COUNT=200000",
		"FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE,SU;WKST=SU",
		"FREQ=WEEKLY;UNTIL=20261201T000000Z",
		"FREQ=MONTHLY",
		"FREQ=MONTHLY;INTERVAL=5;BYDAY=-1FR",
		"FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=8,20",
		"FREQ=MONTHLY;BYMONTH=3;BYMONTHDAY=-3,29;BYYEARDAY=88,89",
		"FREQ=YEARLY;BYWEEKNO=13;BYMONTHDAY=22,24,29",
		"FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
		"FREQ=YEARLY;INTERVAL=4",
	} {
		t.Run(rr, func(t *testing.T) {
			start := time.Date(2019, 1, 31, 2, 30, 0, 0, berlin)
			opt, err := rrule.StrToROption(rr)
			if err != nil {
				t.Fatal(err)
			}
			ex := time.Date(2026, 3, 29, 2, 30, 0, 0, berlin) // in the DST gap
			for _, span := range [][2]time.Time{
				{time.Date(2026, 3, 28, 0, 0, 0, 0, berlin), time.Date(2026, 3, 30, 0, 0, 0, 0, berlin)},
				{time.Date(2026, 3, 20, 0, 0, 0, 0, berlin), time.Date(2026, 4, 2, 0, 0, 0, 0, berlin)},
			} {
				from, to := span[0], span[1]
				x, err := expand(context.Background(), rule{opt: *opt, start: start, exdate: []time.Time{ex}}, 0, from, to)
				if err != nil {
					t.Fatal(err)
				}
				o := *opt
				o.Dtstart = start
				r, _ := rrule.NewRRule(o)
				set := &rrule.Set{}
				set.RRule(r)
				set.ExDate(ex)
				want := set.Between(from, to, true)
				if len(want) > MaxPerSeries {
					if !x.tooMany || !x.first.Equal(want[0]) {
						t.Errorf("%s: %+v, want too many from %s", from, x, want[0])
					}
					continue
				}
				if x.tooMany || !slices.EqualFunc(x.starts, want, time.Time.Equal) {
					t.Errorf("%s: moved forward: %d occurrences %v…\nwalked from the start: %d %v…", from, len(x.starts), head(x.starts), len(want), head(want))
				}
			}
		})
	}
}

func head(ts []time.Time) []time.Time { return ts[:min(len(ts), 4)] }

// BenchmarkDenseSeries is the cost of one day's expansion of hostile series: every minute
// and every second since 1970, a position no period holds, and days that never come.
func BenchmarkDenseSeries(b *testing.B) {
	from := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct{ name, rr string }{
		{"minutely since 1970", "FREQ=MINUTELY"},
		{"secondly since 1970", "FREQ=SECONDLY"},
		{"second position of each second", "FREQ=SECONDLY;BYSETPOS=2"},
		{"february 30th", "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30"},
		{"weekly third monday", "FREQ=WEEKLY;BYDAY=MO;BYSETPOS=3"},
		{"monthly february 31st", "FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=31;BYHOUR=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20;BYMINUTE=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15;BYSETPOS=1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			opt, err := rrule.StrToROption(c.rr)
			if err != nil {
				b.Fatal(err)
			}
			s := rule{opt: *opt, start: time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := expand(context.Background(), s, time.Minute, from, from.AddDate(0, 0, 1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
