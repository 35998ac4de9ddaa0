package calendar_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/calendar"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/mailtest"
	"github.com/stewardhq/steward/internal/steward"
)

// TestEventLifecycle: on a real Radicale, an event created is listed in the owner's zone; a
// change with the ETag read is made and moves the event keeping its length; a change or a
// delete with a stale ETag is ErrChanged (worded as a conflict) and overwrites nothing; an
// invitation carries the event; a delete with the current ETag removes it; an id outside the
// calendar is refused before any request.
func TestEventLifecycle(t *testing.T) {
	ctx := context.Background()
	c, a := connect(t, "bob")
	berlin := a.Location()
	start := time.Date(2026, 5, 7, 9, 0, 0, 0, berlin)
	day := func() []steward.CalendarEvent {
		t.Helper()
		evs, err := c.List(ctx, a, time.Date(2026, 5, 7, 0, 0, 0, 0, berlin), time.Date(2026, 5, 9, 0, 0, 0, 0, berlin))
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		return evs
	}
	ev, err := c.Create(ctx, a, steward.EventDraft{Title: "Dentist", Location: "Main St", Start: start, End: start.Add(45 * time.Minute)}, time.Now())
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	listed := day()
	if len(listed) != 1 || listed[0].Title != "Dentist" || listed[0].Location != "Main St" || !listed[0].Start.Equal(start) ||
		listed[0].Start.Location().String() != "Europe/Berlin" || listed[0].ID != ev.ID || listed[0].ETag == "" {
		t.Fatalf("listed %+v; want the dentist at 9:00 Berlin time, with its id and ETag", listed)
	}
	stale := listed[0].ETag

	moved, err := c.Update(ctx, a, ev.ID, stale, steward.EventDraft{Start: start.AddDate(0, 0, 1).Add(time.Hour)})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if !moved.Start.Equal(start.AddDate(0, 0, 1).Add(time.Hour)) || moved.End.Sub(moved.Start) != 45*time.Minute || moved.Title != "Dentist" {
		t.Errorf("moved %+v; want the next day at 10:00, still 45 minutes, still the dentist", moved)
	}

	_, err = c.Update(ctx, a, ev.ID, stale, steward.EventDraft{Title: "Overwritten"})
	if !errors.Is(err, calendar.ErrChanged) {
		t.Fatalf("update with a stale ETag = %v; want ErrChanged", err)
	}
	if worded := calendar.ErrorOf(err, ev.ID); steward.ErrorCode(worded) != steward.CodeConflict || !strings.Contains(worded.Error(), "nothing was changed") {
		t.Errorf("ErrorOf = %v; want a conflict saying nothing was changed", worded)
	}
	if err := c.Delete(ctx, a, ev.ID, stale); !errors.Is(err, calendar.ErrChanged) {
		t.Errorf("delete with a stale ETag = %v; want ErrChanged", err)
	}
	now := day()
	if len(now) != 1 || now[0].Title != "Dentist" {
		t.Fatalf("after the stale change and delete: %+v; want the dentist, unchanged", now)
	}

	ics, err := c.ICS(ctx, a, ev.ID)
	if err != nil || !strings.Contains(string(ics), "METHOD:REQUEST") || !strings.Contains(string(ics), "SUMMARY:Dentist") {
		t.Errorf("invitation = %q, %v; want a REQUEST of the dentist", ics, err)
	}

	if err := c.Delete(ctx, a, ev.ID, now[0].ETag); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if left := day(); len(left) != 0 {
		t.Errorf("after the delete: %+v; want nothing", left)
	}
	if _, err := c.ICS(ctx, a, ev.ID); steward.ErrorCode(err) != steward.CodeNotFound {
		t.Errorf("the deleted event's invitation = %v; want not_found", err)
	}
	for _, id := range []string{"/other/calendar/x.ics", a.Calendar + "../x.ics", a.Calendar + "x.txt"} {
		if _, err := c.Update(ctx, a, id, "x", steward.EventDraft{Title: "x"}); steward.ErrorCode(err) != steward.CodeInvalid {
			t.Errorf("update %q = %v; want invalid (not an event of the calendar)", id, err)
		}
	}
}

// TestCheckAndLogin: a calendar URL is checked before any login — https only unless the
// address is exempt, no login in the URL, the guard's policy — and a wrong password is
// refused in words.
func TestCheckAndLogin(t *testing.T) {
	ctx := context.Background()
	c, a := connect(t, "carol")
	if err := c.Check(ctx, a); err != nil {
		t.Fatalf("check the test server: %v", err)
	}
	strict := &calendar.Client{Guard: egress.NewGuard(egress.Options{AllowHTTP: true})}
	for _, tc := range []struct{ url, want string }{
		{"caldav.example.com", "must be an https:// URL"},
		{"ftp://caldav.example.com/", "must be an https:// URL"},
		{"https://me:pw@caldav.example.com/", "carries no login"},
		{"http://8.8.8.8/", "must use https"},
		{"https://10.0.0.1/", "the calendar server 10.0.0.1 is refused"},
	} {
		err := strict.Check(ctx, calendar.Account{URL: tc.url})
		if steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("check %s = %v; want invalid saying %q", tc.url, err, tc.want)
		}
	}
	wrong := calendar.Account{URL: servers.CalDAVURL(), Username: "carol", Password: "wrong"}
	if _, err := c.Find(ctx, wrong); steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), "refused the login") {
		t.Errorf("find with a wrong password = %v; want the login refused", err)
	}
	if _, err := c.Find(ctx, calendar.Account{URL: servers.CalDAVURL(), Username: "carol", Password: mailtest.Users["carol"]}); err != nil {
		t.Errorf("find: %v", err)
	}
}

func TestAccountLocation(t *testing.T) {
	for zone, want := range map[string]string{"Europe/Berlin": "Europe/Berlin", "": "UTC", "Mars/Olympus": "UTC"} {
		if got := (calendar.Account{TimeZone: zone}).Location().String(); got != want {
			t.Errorf("Location of %q = %s; want %s", zone, got, want)
		}
	}
}
