package autonomy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/autonomy"
)

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestCronAcrossDST: firing instants in UTC across the 2026 daylight saving changes
// (Europe/Berlin: 29 March 02:00 CET → 03:00 CEST, 25 October 03:00 CEST → 02:00 CET;
// America/Los_Angeles: 8 March, 1 November).
func TestCronAcrossDST(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expr, tz string
		after          string
		want           []string
	}{
		{"daily 07:00, spring", "0 7 * * *", "Europe/Berlin", "2026-03-27 12:00",
			[]string{"2026-03-28 06:00", "2026-03-29 05:00", "2026-03-30 05:00"}},
		{"daily 07:00, autumn", "0 7 * * *", "Europe/Berlin", "2026-10-23 12:00",
			[]string{"2026-10-24 05:00", "2026-10-25 06:00", "2026-10-26 06:00"}},
		{"02:30 does not exist in spring: fires once when the clock jumps", "30 2 * * *", "Europe/Berlin", "2026-03-28 12:00",
			[]string{"2026-03-29 01:00", "2026-03-30 00:30", "2026-03-31 00:30"}},
		{"02:30 occurs twice in autumn: fires once, at the first", "30 2 * * *", "Europe/Berlin", "2026-10-24 12:00",
			[]string{"2026-10-25 00:30", "2026-10-26 01:30", "2026-10-27 01:30"}},
		{"after the first 02:30 of the autumn night, the second is not a new firing", "30 2 * * *", "Europe/Berlin", "2026-10-25 01:10",
			[]string{"2026-10-26 01:30"}},
		{"every 30 minutes follows elapsed time in spring", "*/30 * * * *", "Europe/Berlin", "2026-03-29 00:15",
			[]string{"2026-03-29 00:30", "2026-03-29 01:00", "2026-03-29 01:30"}},
		{"every 30 minutes follows elapsed time through the repeated hour", "*/30 * * * *", "Europe/Berlin", "2026-10-25 00:15",
			[]string{"2026-10-25 00:30", "2026-10-25 01:00", "2026-10-25 01:30", "2026-10-25 02:00"}},
		{"midnight on the spring day", "@daily", "Europe/Berlin", "2026-03-28 12:00",
			[]string{"2026-03-28 23:00", "2026-03-29 22:00"}},
		{"weekdays at 09:00 across the spring change", "0 9 * * 1-5", "Europe/Berlin", "2026-03-27 09:00",
			[]string{"2026-03-30 07:00", "2026-03-31 07:00"}},
		{"weekly review Friday 17:00 across the autumn change", "0 17 * * fri", "Europe/Berlin", "2026-10-20 00:00",
			[]string{"2026-10-23 15:00", "2026-10-30 16:00"}},
		{"Los Angeles spring gap", "30 2 * * *", "America/Los_Angeles", "2026-03-07 12:00",
			[]string{"2026-03-08 10:00", "2026-03-09 09:30"}},
		{"Los Angeles autumn overlap", "30 1 * * *", "America/Los_Angeles", "2026-10-31 12:00",
			[]string{"2026-11-01 08:30", "2026-11-02 09:30"}},
		{"UTC", "15 6 1 * *", "UTC", "2026-01-15 00:00",
			[]string{"2026-02-01 06:15", "2026-03-01 06:15"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := autonomy.ParseCron(tc.expr, tc.tz)
			if err != nil {
				t.Fatal(err)
			}
			at := utc(tc.after)
			var got []string
			for range tc.want {
				at = c.Next(at)
				got = append(got, at.UTC().Format("2006-01-02 15:04"))
			}
			if strings.Join(got, ", ") != strings.Join(tc.want, ", ") {
				t.Fatalf("%s in %s after %s:\n got %v\nwant %v", tc.expr, tc.tz, tc.after, got, tc.want)
			}
		})
	}
}

// TestCronLatest: a schedule missed many times catches up once, with its latest time.
func TestCronLatest(t *testing.T) {
	t.Parallel()
	hourly, _ := autonomy.ParseCron("0 * * * *", "UTC")
	daily, _ := autonomy.ParseCron("0 7 * * *", "Europe/Berlin")
	for _, tc := range []struct {
		name       string
		c          autonomy.Cron
		since, now string
		want       string // "" = nothing due
	}{
		{"five missed hours", hourly, "2026-05-01 00:00", "2026-05-01 05:30", "2026-05-01 05:00"},
		{"exactly on time", hourly, "2026-05-01 00:00", "2026-05-01 01:00", "2026-05-01 01:00"},
		{"nothing due yet", hourly, "2026-05-01 00:00", "2026-05-01 00:59", ""},
		{"three missed mornings", daily, "2026-03-26 06:00", "2026-03-29 09:00", "2026-03-29 05:00"},
		{"a year away: look back 35 days at most", daily, "2025-01-01 00:00", "2026-03-29 09:00", "2026-03-29 05:00"},
	} {
		got, ok := tc.c.Latest(utc(tc.since), utc(tc.now))
		if tc.want == "" {
			if ok {
				t.Errorf("%s: due at %s, want nothing", tc.name, got)
			}
			continue
		}
		if !ok || !got.Equal(utc(tc.want)) {
			t.Errorf("%s: %s %v, want %s", tc.name, got.UTC(), ok, tc.want)
		}
	}
}

func TestParseCronRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ expr, tz string }{
		{"", "UTC"}, {"@every 5m", "UTC"}, {"TZ=UTC 0 7 * * *", ""}, {"CRON_TZ=Europe/Berlin 0 7 * * *", ""},
		{"not cron", "UTC"}, {"61 * * * *", "UTC"}, {"0 7 * * *", "Mars/Olympus_Mons"}, {"0 7 * * *", "Local"},
		{"0 0 30 2 *", "UTC"}, {"* * * * * *", "UTC"}, {strings.Repeat("1,", 60) + "1 * * * *", "UTC"},
	} {
		if _, err := autonomy.ParseCron(tc.expr, tc.tz); err == nil {
			t.Errorf("ParseCron(%q, %q) accepted", tc.expr, tc.tz)
		}
	}
}
