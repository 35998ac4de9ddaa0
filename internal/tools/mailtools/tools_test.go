package mailtools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/mailtest"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/mailtools"
)

// TestArgumentsAreChecked: every tool refuses arguments it cannot use before any account is
// reached — the error names the argument the model must correct — and takes good ones.
func TestArgumentsAreChecked(t *testing.T) {
	t.Parallel()
	reg, err := tools.NewRegistry(mailtools.Tools(nil, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool, args, field string // field "" means valid
	}{
		{"search_mail", `{}`, ""},
		{"search_mail", `{"query":"invoice","since":"2026-03-01","limit":50}`, ""},
		{"search_mail", `{"since":"yesterday"}`, "since"},
		{"search_mail", `{"limit":51}`, "limit"},
		{"search_mail", `{"query":"` + strings.Repeat("x", 201) + `"}`, "query"},
		{"read_mail", `{"id":"INBOX:42"}`, ""},
		{"read_mail", `{"id":"INBOX"}`, "id"},
		{"read_mail", `{"id":"INBOX:0"}`, "id"},
		{"read_mail", `{"id":"   "}`, "id"},
		{"send_mail", `{"to":["ada@example.com"],"subject":"Hi","body":"Hello"}`, ""},
		{"send_mail", `{"to":["ada@example.com"],"reply_to_id":"INBOX:3","body":"Yes"}`, ""},
		{"send_mail", `{"to":[],"subject":"Hi","body":"Hello"}`, "to"},
		{"send_mail", `{"to":["not an address"],"subject":"Hi","body":"Hello"}`, "to"},
		{"send_mail", `{"to":["ada@example.com"],"cc":["@@"],"subject":"Hi","body":"Hello"}`, "cc"},
		{"send_mail", `{"to":["ada@example.com"],"body":"Hello"}`, "subject"},
		{"send_mail", `{"to":["ada@example.com"],"subject":"Hi\r\nBcc: eve@example.com","body":"Hello"}`, "subject"},
		{"move_mail", `{"id":"INBOX:1","folder":"Archive"}`, ""},
		{"move_mail", `{"id":"INBOX:1","folder":""}`, "folder"},
		{"flag_mail", `{"id":"x","flag":"seen"}`, "id"},
		{"find_free_time", `{"duration_minutes":30}`, ""},
		{"find_free_time", `{"duration_minutes":2}`, "duration_minutes"},
		{"find_free_time", `{"duration_minutes":30,"day_start":"18:00","day_end":"09:00"}`, "day_end"},
		{"find_free_time", `{"duration_minutes":30,"day_start":"25:00"}`, "day_start"},
	} {
		err := reg.Validate(c.tool, json.RawMessage(c.args))
		var ae *tools.ArgError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s %s = %v; want it taken", c.tool, c.args, err)
		case c.field != "" && (!errors.As(err, &ae) || ae.Field != c.field):
			t.Errorf("%s %s = %v; want an argument error on %q", c.tool, c.args, err, c.field)
		}
	}
}

// TestCalendarToolsOnRadicale: create_event, list_events, find_free_time and update_event run
// over the owner's real calendar account (accounts.Service on Radicale): the event made is
// listed in the owner's zone, the free time goes around it, and a change with a stale etag
// is refused as a conflict, changing nothing.
func TestCalendarToolsOnRadicale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, "heidi", scripted.New())
	if _, err := e.App.Accounts.AddCalendar(ctx, e.owner, accounts.CalendarInput{CalDAVURL: servers.CalDAVURL(), Username: "heidi",
		Password: mailtest.Users["heidi"], TimeZone: "Europe/Berlin"}); err != nil {
		t.Fatalf("add calendar: %v", err)
	}
	reg, err := tools.NewRegistry(mailtools.Tools(e.App.Accounts, e.App.Documents)...)
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	env := tools.Env{OwnerID: e.owner, Now: func() time.Time { return time.Date(2026, 6, 1, 8, 0, 0, 0, berlin) }}
	run := func(name, args string, out any) error {
		t.Helper()
		raw, err := reg.Run(ctx, env, name, json.RawMessage(args))
		if err == nil && out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				t.Fatalf("%s answered %s: %v", name, raw, err)
			}
		}
		return err
	}
	var made struct {
		Event struct{ ID, ETag, Title string }
	}
	if err := run("create_event", `{"title":"Planning","start":"2026-06-01T10:00","end":"2026-06-01T11:30"}`, &made); err != nil || made.Event.ID == "" {
		t.Fatalf("create_event = %+v, %v", made, err)
	}
	var listed struct {
		Events []struct {
			ID, ETag, Title string
			Start           time.Time
		}
	}
	if err := run("list_events", `{"from":"2026-06-01"}`, &listed); err != nil || len(listed.Events) != 1 ||
		listed.Events[0].Title != "Planning" || !listed.Events[0].Start.Equal(time.Date(2026, 6, 1, 10, 0, 0, 0, berlin)) {
		t.Fatalf("list_events = %+v, %v; want the planning at 10:00 Berlin time", listed, err)
	}
	var free struct {
		Free []struct{ Start, End time.Time }
	}
	if err := run("find_free_time", `{"duration_minutes":60,"from":"2026-06-01","day_start":"09:00","day_end":"13:00"}`, &free); err != nil ||
		len(free.Free) != 2 || !free.Free[0].End.Equal(time.Date(2026, 6, 1, 10, 0, 0, 0, berlin)) ||
		!free.Free[1].Start.Equal(time.Date(2026, 6, 1, 11, 30, 0, 0, berlin)) || !free.Free[1].End.Equal(time.Date(2026, 6, 1, 13, 0, 0, 0, berlin)) {
		t.Errorf("find_free_time = %+v, %v; want 9:00–10:00 and 11:30–13:00, around the planning", free, err)
	}
	if err := run("update_event", `{"id":"`+made.Event.ID+`","etag":"\"stale\"","title":"Overwritten"}`, nil); err == nil ||
		!strings.Contains(err.Error(), "changed on the calendar server") {
		t.Errorf("update_event with a stale etag = %v; want refused as changed meanwhile", err)
	}
	if err := run("list_events", `{"from":"2026-06-01"}`, &listed); err != nil || len(listed.Events) != 1 || listed.Events[0].Title != "Planning" {
		t.Errorf("after the stale update: %+v, %v; want the planning unchanged", listed, err)
	}
}
