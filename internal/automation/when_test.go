package automation_test

import (
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/automation"
)

// TestResolveAt: the owner's words read in their zone — a bare time is the next to come, a
// named day is that day, relative times count from now, RFC 3339 is itself.
func TestResolveAt(t *testing.T) {
	t.Parallel()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	now := time.Date(2026, 12, 8, 14, 30, 0, 0, berlin) // a Tuesday
	at := func(d, h, m int) time.Time { return time.Date(2026, 12, d, h, m, 0, 0, berlin) }
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"17:00", at(8, 17, 0)},
		{"9:00", at(9, 9, 0)}, // passed today: tomorrow
		{"5 pm", at(8, 17, 0)},
		{"5:30pm", at(8, 17, 30)},
		{"at 18:15", at(8, 18, 15)},
		{"tomorrow 9:00", at(9, 9, 0)},
		{"Tomorrow at 7am", at(9, 7, 0)},
		{"today 23:59", at(8, 23, 59)},
		{"friday 8:00", at(11, 8, 0)},
		{"noon", at(9, 12, 0)},
		{"2026-12-24 18:00", at(24, 18, 0)},
		{"in 20 minutes", at(8, 14, 50)},
		{"in 2 hours", at(8, 16, 30)},
		{"in an hour", at(8, 15, 30)},
		{"in 65 seconds", now.Add(65 * time.Second)},
		{"2026-12-24T17:00:00Z", time.Date(2026, 12, 24, 17, 0, 0, 0, time.UTC)},
	} {
		got, err := automation.ResolveAt(c.in, now, berlin)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ResolveAt(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "soon", "25:00", "in 0 minutes", "in many minutes", "13 pm", "tomorrow"} {
		if got, err := automation.ResolveAt(bad, now, berlin); err == nil {
			t.Errorf("ResolveAt(%q) = %v, want an error", bad, got)
		}
	}
}

// TestCronOf: a schedule's words become cron; cron stays as it is.
func TestCronOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"every weekday at 7:30", "30 7 * * 1-5"},
		{"Every day at 6 pm", "0 18 * * *"},
		{"daily at 8", "0 8 * * *"},
		{"every weekend at 10", "0 10 * * 0,6"},
		{"every monday and thursday at 9", "0 9 * * 1,4"},
		{"every Friday at 17:00", "0 17 * * 5"},
		{"every first Monday of the month at 9", "0 9 1-7 * 1"},
		{"every 15th of the month at 8:00", "0 8 15 * *"},
		{"every 30 minutes", "*/30 * * * *"},
		{"every 2 hours", "0 */2 * * *"},
		{"every hour", "0 * * * *"},
		{"30 7 * * 1-5", "30 7 * * 1-5"},
	} {
		got, _, err := automation.CronOf(c.in)
		if err != nil || got != c.want {
			t.Errorf("CronOf(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "whenever", "every blursday at 9", "every day at 25:00", "every last friday of the month at 9"} {
		if got, _, err := automation.CronOf(bad); err == nil {
			t.Errorf("CronOf(%q) = %q, want an error", bad, got)
		}
	}
}

// TestFirstMondayOfTheMonth: day of month and weekday both restricted means both.
func TestFirstMondayOfTheMonth(t *testing.T) {
	t.Parallel()
	s, err := automation.ParseSchedule("every first monday of the month at 9", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	got := s.NextN(time.Date(2026, 12, 8, 0, 0, 0, 0, berlin), 3)
	want := []time.Time{time.Date(2027, 1, 4, 9, 0, 0, 0, berlin), time.Date(2027, 2, 1, 9, 0, 0, 0, berlin), time.Date(2027, 3, 1, 9, 0, 0, 0, berlin)}
	for i := range want {
		if i >= len(got) || !got[i].Equal(want[i]) {
			t.Fatalf("next runs %v, want %v", got, want)
		}
	}
}

// TestScheduleAcrossDST: on each switch day of Europe/Berlin and America/New_York a daily
// schedule runs exactly once, at its wall-clock time (or at the jump, for a time in the gap).
func TestScheduleAcrossDST(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		zone, cron string
		day        time.Time // the switch day, midnight local
		want       string    // the run's local time that day
	}{
		{"Europe/Berlin", "30 2 * * *", time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC), "03:00"},  // 02:30 does not exist
		{"Europe/Berlin", "30 2 * * *", time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), "02:30"}, // 02:30 happens twice
		{"Europe/Berlin", "30 7 * * *", time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC), "07:30"},
		{"America/New_York", "30 2 * * *", time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC), "03:00"},
		{"America/New_York", "30 1 * * *", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), "01:30"},
		{"America/New_York", "0 9 * * *", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), "09:00"},
	} {
		loc, _ := time.LoadLocation(c.zone)
		s, err := automation.ParseSchedule(c.cron, c.zone)
		if err != nil {
			t.Fatal(err)
		}
		from := time.Date(c.day.Year(), c.day.Month(), c.day.Day(), 0, 0, 0, 0, loc)
		to := from.AddDate(0, 0, 1)
		var runs []string
		for r := s.Next(from.Add(-time.Second)); !r.IsZero() && r.Before(to); r = s.Next(r) {
			runs = append(runs, r.In(loc).Format("15:04"))
		}
		if len(runs) != 1 || runs[0] != c.want {
			t.Errorf("%s %q on %s: runs %v, want exactly one at %s", c.zone, c.cron, c.day.Format(time.DateOnly), runs, c.want)
		}
	}
}
