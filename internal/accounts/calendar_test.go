package accounts_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	gomail "github.com/emersion/go-message/mail"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/mailtest"
	"github.com/stewardhq/steward/internal/steward"
)

// berlinTZ is Europe/Berlin's VTIMEZONE, as a calendar client writes it.
const berlinTZ = `BEGIN:VTIMEZONE
TZID:Europe/Berlin
BEGIN:DAYLIGHT
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
TZNAME:CEST
DTSTART:19700329T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
TZNAME:CET
DTSTART:19701025T030000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
END:VTIMEZONE`

func vcal(body string) string {
	return "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n" + berlinTZ + "\n" + body + "\nEND:VCALENDAR\n"
}

// TestEventsAcrossDST: a weekly 09:00 Berlin series over the March DST change stays at 09:00
// in the owner's zone (08:00 then 07:00 UTC), an EXDATE drops a week and a moved occurrence
// (RECURRENCE-ID) shows where it went; a night event across the change lasts its real hours.
func TestEventsAcrossDST(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "oscar", nil, nil)
	if err := servers.PutEvent("oscar", "standup", vcal(`BEGIN:VEVENT
UID:standup@test
DTSTAMP:20260301T000000Z
DTSTART;TZID=Europe/Berlin:20260316T090000
DTEND;TZID=Europe/Berlin:20260316T093000
SUMMARY:Standup
RRULE:FREQ=WEEKLY;COUNT=5
EXDATE;TZID=Europe/Berlin:20260406T090000
END:VEVENT
BEGIN:VEVENT
UID:standup@test
DTSTAMP:20260301T000000Z
RECURRENCE-ID;TZID=Europe/Berlin:20260330T090000
DTSTART;TZID=Europe/Berlin:20260330T110000
DTEND;TZID=Europe/Berlin:20260330T113000
SUMMARY:Standup (moved)
END:VEVENT`)); err != nil {
		t.Fatal(err)
	}
	if err := servers.PutEvent("oscar", "night", vcal(`BEGIN:VEVENT
UID:night@test
DTSTAMP:20260301T000000Z
DTSTART;TZID=Europe/Berlin:20260328T230000
DTEND;TZID=Europe/Berlin:20260329T040000
SUMMARY:Night train
END:VEVENT`)); err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	from, to := time.Date(2026, 3, 14, 0, 0, 0, 0, berlin), time.Date(2026, 4, 20, 0, 0, 0, 0, berlin)
	evs, err := e.App.Accounts.Events(context.Background(), e.owner, from, to)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Start.Format("Jan 2 15:04 MST")+" "+ev.Start.UTC().Format("15:04Z")+" "+ev.Title)
	}
	want := []string{
		"Mar 16 09:00 CET 08:00Z Standup",
		"Mar 23 09:00 CET 08:00Z Standup",
		"Mar 28 23:00 CET 22:00Z Night train",
		"Mar 30 11:00 CEST 09:00Z Standup (moved)",
		"Apr 13 09:00 CEST 07:00Z Standup",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, ev := range evs {
		if ev.Title == "Night train" && ev.End.Sub(ev.Start) != 4*time.Hour {
			t.Errorf("the night train lasts %s across the change, want 4h", ev.End.Sub(ev.Start))
		}
		if ev.Title == "Standup" && !ev.Recurring {
			t.Errorf("an occurrence not marked recurring: %+v", ev)
		}
	}
	free := steward.FreeTime(evs, time.Date(2026, 3, 16, 0, 0, 0, 0, berlin), time.Date(2026, 3, 17, 0, 0, 0, 0, berlin), time.Hour, 9*60, 12*60, berlin, 5)
	if len(free) != 1 || free[0].Start.Format("15:04") != "09:30" || free[0].End.Format("15:04") != "12:00" {
		t.Errorf("free on Mar 16 between 09 and 12: %+v", free)
	}
}

// TestUpdateRacingAServerChange: create, then a change on the server, then update_event with
// the ETag read before it: the server's 412 reaches the owner in words and the server's
// change stays; delete with the stale ETag is refused too. With the fresh one both work.
func TestUpdateRacingAServerChange(t *testing.T) {
	t.Parallel()
	var id, etag string
	model := scripted.New(
		func(llm.Request) (llm.Response, error) {
			return scripted.Calls(scripted.Call("u1", "update_event",
				fmt.Sprintf(`{"id":%q,"etag":%q,"title":"Dentist (moved)","start":"2026-05-08T10:00"}`, id, etag))), nil
		},
		func(req llm.Request) (llm.Response, error) {
			res := req.Messages[len(req.Messages)-1].Parts[0].ToolResult
			return scripted.Text("The update failed: " + string(res.Output)), nil
		})
	e := newEnv(t, "bob", model, nil)
	ctx := context.Background()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	ev, err := e.App.Accounts.CreateEvent(ctx, e.owner, steward.EventDraft{Title: "Dentist", Start: time.Date(2026, 5, 7, 9, 0, 0, 0, berlin), End: time.Date(2026, 5, 7, 9, 45, 0, 0, berlin)})
	if err != nil || ev.ETag == "" || !strings.HasPrefix(ev.ID, mailtest.CalendarPath("bob")) {
		t.Fatalf("create: %+v, %v", ev, err)
	}
	day := func() []steward.CalendarEvent {
		evs, err := e.App.Accounts.Events(ctx, e.owner, time.Date(2026, 5, 7, 0, 0, 0, 0, berlin), time.Date(2026, 5, 9, 0, 0, 0, 0, berlin))
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	listed := day()
	if len(listed) != 1 || listed[0].ETag != ev.ETag || listed[0].Start.Format("15:04") != "09:00" {
		t.Fatalf("listed: %+v", listed)
	}
	id, etag = listed[0].ID, listed[0].ETag
	v := e.start(t, "move the dentist to Friday")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 || v.Pending[0].Tool != "update_event" {
		t.Fatalf("turn: %+v, want update_event waiting", v)
	}
	// The owner's phone changes the event while the approval waits.
	resp, err := servers.CalDAVRequest("bob", http.MethodGet, ev.ID, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	changed := strings.Replace(string(body), "SUMMARY:Dentist", "SUMMARY:Dentist (confirmed by phone)", 1)
	if resp, err := servers.CalDAVRequest("bob", http.MethodPut, ev.ID, "text/calendar", []byte(changed), nil); err != nil || resp.StatusCode >= 300 {
		t.Fatalf("server-side change: %v %v", resp, err)
	}
	v, err = e.decide(t, v, true)
	if err != nil || v.Status != steward.StatusCompleted || !strings.Contains(v.Answer, "changed on the calendar server since it was read") ||
		!strings.Contains(v.Answer, "nothing was changed or overwritten") {
		t.Fatalf("approved update: %+v, %v; want the owner told the event changed", v, err)
	}
	if err := e.App.Accounts.DeleteEvent(ctx, e.owner, ev.ID, ev.ETag); steward.ErrorCode(err) != steward.CodeConflict {
		t.Errorf("delete with the stale ETag: %v", err)
	}
	now := day()
	if len(now) != 1 || now[0].Title != "Dentist (confirmed by phone)" || now[0].Start.Format("Jan 2 15:04") != "May 7 09:00" {
		t.Fatalf("after the refused change: %+v; want the phone's change kept", now)
	}
	moved, err := e.App.Accounts.UpdateEvent(ctx, e.owner, ev.ID, now[0].ETag, steward.EventDraft{Start: time.Date(2026, 5, 8, 10, 0, 0, 0, berlin)})
	if err != nil || moved.Start.Format("Jan 2 15:04") != "May 8 10:00" || moved.End.Sub(moved.Start) != 45*time.Minute {
		t.Errorf("update with the fresh ETag: %+v, %v (the length stays)", moved, err)
	}
	if err := e.App.Accounts.DeleteEvent(ctx, e.owner, ev.ID, moved.ETag); err != nil {
		t.Errorf("delete with the fresh ETag: %v", err)
	}
	if left := day(); len(left) != 0 {
		t.Errorf("after the delete: %+v", left)
	}
}

// TestInvitationBySendMail: send_mail with invite_event_id carries the event as invite.ics
// (METHOD:REQUEST) once the owner approves.
func TestInvitationBySendMail(t *testing.T) {
	t.Parallel()
	var id string
	model := scripted.New(
		func(llm.Request) (llm.Response, error) {
			return scripted.Calls(scripted.Call("s1", "send_mail",
				fmt.Sprintf(`{"to":["ada@example.com"],"subject":"Planning","body":"See the invitation.","invite_event_id":%q}`, id))), nil
		},
		scripted.Reply(scripted.Text("Sent.")))
	e := newEnv(t, "peggy", model, nil)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	ev, err := e.App.Accounts.CreateEvent(context.Background(), e.owner, steward.EventDraft{Title: "Planning", Start: time.Date(2026, 6, 1, 10, 0, 0, 0, berlin)})
	if err != nil {
		t.Fatal(err)
	}
	id = ev.ID
	v := e.start(t, "invite Ada to the planning")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
		t.Fatalf("turn: %+v", v)
	}
	if _, err := e.decide(t, v, true); err != nil {
		t.Fatal(err)
	}
	got := servers.Sink.Messages("peggy")
	if len(got) != 1 {
		t.Fatalf("sent %d", len(got))
	}
	data := strings.ReplaceAll(string(got[0].Data), "\r\n", "\n")
	for _, want := range []string{`filename=invite.ics`, "text/calendar", "See the invitation."} {
		if !strings.Contains(data, want) {
			t.Errorf("the invitation lacks %q:\n%s", want, data)
		}
	}
	r, err := gomail.CreateReader(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var ics string
	for {
		p, err := r.NextPart()
		if err != nil {
			break
		}
		if _, ok := p.Header.(*gomail.AttachmentHeader); ok {
			b, _ := io.ReadAll(p.Body)
			ics = string(b)
		}
	}
	if !strings.Contains(ics, "METHOD:REQUEST") || !strings.Contains(ics, "SUMMARY:Planning") || !strings.Contains(ics, "BEGIN:VEVENT") {
		t.Errorf("invite.ics:\n%s", ics)
	}
}
