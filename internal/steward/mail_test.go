package steward_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

func TestParseMailID(t *testing.T) {
	for _, c := range []struct {
		id     string
		folder string
		uid    uint32
		ok     bool
	}{
		{"INBOX:42", "INBOX", 42, true},
		{"Archive/2026:7", "Archive/2026", 7, true},
		{"a:b:9", "a:b", 9, true}, // a folder may hold a colon: the UID is after the last
		{"INBOX:0", "", 0, false},
		{"INBOX:", "", 0, false},
		{":42", "", 0, false},
		{"INBOX", "", 0, false},
		{"INBOX:-1", "", 0, false},
		{"INBOX:4294967296", "", 0, false}, // past 32 bits: no IMAP UID
		{"", "", 0, false},
	} {
		folder, uid, err := steward.ParseMailID(c.id)
		if (err == nil) != c.ok || folder != c.folder || uid != c.uid {
			t.Errorf("ParseMailID(%q) = %q, %d, %v; want %q, %d, ok %v", c.id, folder, uid, err, c.folder, c.uid, c.ok)
		}
		if err != nil && c.id != "" && !strings.Contains(err.Error(), "FOLDER:UID") {
			t.Errorf("ParseMailID(%q) error %q does not say what an id looks like", c.id, err)
		}
	}
}

// TestFreeTime: the free slots of two days' working hours (9:00–17:00 in Berlin) around
// overlapping events, a slot shorter than asked left out, a series too dense to list not
// counted as busy, and at most max slots.
func TestFreeTime(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := func(day, h, m int) time.Time { return time.Date(2026, 3, day, h, m, 0, 0, berlin) }
	events := []steward.CalendarEvent{
		{Title: "standup", Start: at(16, 9, 0), End: at(16, 9, 30)},
		{Title: "review", Start: at(16, 10, 0), End: at(16, 12, 0)},
		{Title: "overlapping", Start: at(16, 11, 0), End: at(16, 12, 30)},
		{Title: "short gap", Start: at(16, 12, 45), End: at(16, 16, 0)},
		{Title: "every minute", Start: at(16, 0, 0), End: at(17, 23, 59), TooMany: true},
		{Title: "all morning", Start: at(17, 8, 0), End: at(17, 13, 0)},
	}
	got := steward.FreeTime(events, at(16, 0, 0), at(18, 0, 0), 30*time.Minute, 9*60, 17*60, berlin, 10)
	want := []steward.FreeSlot{
		{Start: at(16, 9, 30), End: at(16, 10, 0)},
		{Start: at(16, 16, 0), End: at(16, 17, 0)},
		{Start: at(17, 13, 0), End: at(17, 17, 0)},
	}
	if len(got) != len(want) {
		t.Fatalf("FreeTime = %v; want %v", got, want)
	}
	for i := range want {
		if !got[i].Start.Equal(want[i].Start) || !got[i].End.Equal(want[i].End) {
			t.Errorf("slot %d = %v–%v; want %v–%v", i, got[i].Start, got[i].End, want[i].Start, want[i].End)
		}
	}
	if two := steward.FreeTime(events, at(16, 0, 0), at(18, 0, 0), 30*time.Minute, 9*60, 17*60, berlin, 2); len(two) != 2 {
		t.Errorf("FreeTime with max 2 = %d slots", len(two))
	}
	// A range starting mid-day starts there, not at the day's first hour.
	if late := steward.FreeTime(nil, at(16, 15, 0), at(16, 23, 0), time.Hour, 9*60, 17*60, berlin, 5); len(late) != 1 ||
		!late[0].Start.Equal(at(16, 15, 0)) || !late[0].End.Equal(at(16, 17, 0)) {
		t.Errorf("FreeTime from 15:00 = %v; want 15:00–17:00", late)
	}
	if none := steward.FreeTime(nil, at(16, 0, 0), at(17, 0, 0), 9*time.Hour, 9*60, 17*60, berlin, 5); len(none) != 0 || none == nil {
		t.Errorf("FreeTime for 9 hours in an 8-hour day = %#v; want an empty list", none)
	}
}
