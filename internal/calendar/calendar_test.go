package calendar_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/calendar"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/mailtest"
	"github.com/stewardhq/steward/internal/steward"
)

// servers is the package's Radicale (with Dovecot and the SMTP sink it starts alongside).
var servers *mailtest.Servers

func TestMain(m *testing.M) { mailtest.Main(m, &servers) }

// connect is user's calendar on the real Radicale, through a guard that exempts it.
func connect(t *testing.T, user string) (*calendar.Client, calendar.Account) {
	t.Helper()
	c := &calendar.Client{Guard: egress.NewGuard(egress.Options{Allow: servers.Allow(), AllowHTTP: true})}
	a := calendar.Account{URL: servers.CalDAVURL(), Username: user, Password: mailtest.Users[user], TimeZone: "Europe/Berlin"}
	path, err := c.Find(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	a.Calendar = path
	return c, a
}

func put(t *testing.T, user, name, event string) {
	t.Helper()
	ics := "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\nBEGIN:VEVENT\nUID:" + name + "@test\nDTSTAMP:20260101T000000Z\n" +
		strings.TrimSpace(event) + "\nEND:VEVENT\nEND:VCALENDAR\n"
	if err := servers.PutEvent(user, name, ics); err != nil {
		t.Fatal(err)
	}
}

// today is the owner's day (Europe/Berlin) that holds now.
func today() (time.Time, time.Time) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	now := time.Now().In(berlin)
	from := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, berlin)
	return from, from.AddDate(0, 0, 1)
}

// TestDenseSeriesFrom1970: invitations repeating every minute and every second since 1970
// beside an ordinary appointment: today's listing shows the appointment and each dense series once, dated today and saying it is too
// many to list; the free time around them is found; one listing allocates a bounded amount
// whatever the series' start.
func TestDenseSeriesFrom1970(t *testing.T) {
	c, a := connect(t, "alice")
	from, to := today()
	// Each occurrence lasts until 2100: Radicale (3.1.8) answers a time-range query by walking
	// a series from its DTSTART until an occurrence overlaps the range, which takes it minutes
	// for a short one since 1970 (occurrences() is tested with those directly).
	put(t, "alice", "minutely", "DTSTART:19700101T000000Z\nDTEND:21000101T000000Z\nSUMMARY:Every minute\nRRULE:FREQ=MINUTELY")
	put(t, "alice", "secondly", "DTSTART:19700101T000000Z\nDTEND:21000101T000000Z\nSUMMARY:Every second\nRRULE:FREQ=SECONDLY")
	dentist := from.Add(15 * time.Hour)
	put(t, "alice", "dentist", "DTSTART:"+dentist.UTC().Format("20060102T150405Z")+"\nDTEND:"+dentist.Add(time.Hour).UTC().Format("20060102T150405Z")+"\nSUMMARY:Dentist")

	var evs []steward.CalendarEvent
	var err error
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	evs, err = c.List(context.Background(), a, from, to)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("one listing allocated %d MB; want it bounded whatever the series' start", alloc>>20)
	}
	var got []string
	for _, e := range evs {
		if e.Start.Before(from) || !e.Start.Before(to) {
			t.Errorf("%q is listed at %s, outside today", e.Title, e.Start)
		}
		got = append(got, e.Title+" | "+e.Note)
	}
	want := map[string]string{
		"Every minute": "repeats every minute",
		"Every second": "repeats every second",
		"Dentist":      "",
	}
	if len(evs) != len(want) {
		t.Fatalf("today's listing has %d items, want %d (each dense series once):\n%s", len(evs), len(want), strings.Join(got[:min(len(got), 10)], "\n"))
	}
	for _, e := range evs {
		w, ok := want[e.Title]
		if !ok || !strings.Contains(e.Note, w) || (w != "" && !strings.Contains(e.Note, "too many to list")) {
			t.Errorf("listed %q with note %q; want a note saying %q and too many to list", e.Title, e.Note, w)
		}
	}
	free := steward.FreeTime(evs, from, to, time.Hour, 9*60, 18*60, from.Location(), 5)
	var slots []string
	for _, f := range free {
		slots = append(slots, f.Start.Format("15:04")+"–"+f.End.Format("15:04"))
	}
	if strings.Join(slots, " ") != "09:00–15:00 16:00–18:00" {
		t.Errorf("free time today: %v, want around the dentist", slots)
	}
}
