package mailtools

import (
	"context"
	"fmt"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
	"strings"
	"time"
)

// when reads a time as the tools take it, in the owner's zone loc: "today", "tomorrow", a
// day (YYYY-MM-DD: its midnight), a local time (YYYY-MM-DDTHH:MM[:SS]) or RFC 3339 with its
// own offset. day reports a day without a time.
func when(field, s string, loc *time.Location, now time.Time) (t time.Time, day bool, err error) {
	s = strings.TrimSpace(s)
	today := time.Date(now.In(loc).Year(), now.In(loc).Month(), now.In(loc).Day(), 0, 0, 0, 0, loc)
	switch strings.ToLower(s) {
	case "today", "":
		return today, true, nil
	case "tomorrow":
		return today.AddDate(0, 0, 1), true, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		return t, true, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, false, nil
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, false, nil
	}
	return time.Time{}, false, tools.ArgErrorf(field, "%s is not a time: give today, tomorrow, YYYY-MM-DD, YYYY-MM-DDTHH:MM (the owner's time zone) or RFC 3339", tools.QuoteValue(s))
}

// span reads a range: from (default today) to to (default the end of from's day; a day
// means its end).
func span(from, to string, loc *time.Location, now time.Time) (time.Time, time.Time, error) {
	f, fday, err := when("from", from, loc, now)
	if err != nil {
		return f, f, err
	}
	if strings.TrimSpace(to) == "" {
		if fday {
			return f, f.AddDate(0, 0, 1), nil
		}
		return f, f.Add(24 * time.Hour), nil
	}
	t, tday, err := when("to", to, loc, now)
	if err != nil {
		return f, t, err
	}
	if tday {
		t = t.AddDate(0, 0, 1)
	}
	if !t.After(f) {
		return f, t, tools.ArgErrorf("to", "must be after from")
	}
	if t.Sub(f) > 93*24*time.Hour {
		return f, t, tools.ArgErrorf("to", "a range is at most 93 days")
	}
	return f, t, nil
}

// listEventsArgs are the arguments of list_events.
type listEventsArgs struct {
	From string `json:"from,omitempty" jsonschema:"the start: today (default), tomorrow, YYYY-MM-DD or YYYY-MM-DDTHH:MM in the owner's time zone"`
	To   string `json:"to,omitempty" jsonschema:"the end (a day includes that day); default the end of from's day"`
}

// Check bounds the lengths; the times are read with the owner's zone at run time.
func (a *listEventsArgs) Check() error {
	if err := tools.CheckLength("from", a.From, 0, 40); err != nil {
		return err
	}
	return tools.CheckLength("to", a.To, 0, 40)
}

// between is a span of the owner's calendar: their zone, its ends and its events.
type between struct {
	loc      *time.Location
	from, to time.Time
	events   []steward.CalendarEvent
}

// window reads the events from from to to (as the tools take them) in the owner's zone.
func window(ctx context.Context, c Calendar, env tools.Env, fromArg, toArg string) (between, error) {
	loc, err := c.Zone(ctx, env.OwnerID)
	if err != nil {
		return between{}, tools.ServiceError(ctx, "from", err)
	}
	from, to, err := span(fromArg, toArg, loc, env.Time())
	if err != nil {
		return between{}, err
	}
	evs, err := c.Events(ctx, env.OwnerID, from, to)
	if err != nil {
		return between{}, tools.ServiceError(ctx, "from", err)
	}
	return between{loc: loc, from: from, to: to, events: evs}, nil
}

func listEventsTool(c Calendar) tools.Tool {
	return tools.Say(tools.New("list_events",
		"List the events on the owner's calendar from from to to, recurring events as their occurrences, times in the owner's "+
			"time zone; each has the id and etag update_event and delete_event need.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a listEventsArgs) (any, error) {
			w, err := window(ctx, c, env, a.From, a.To)
			if err != nil {
				return nil, err
			}
			return map[string]any{"time_zone": w.loc.String(), "from": w.from, "to": w.to, "events": w.events}, nil
		}), sayListEvents, saidListEvents)
}

func sayListEvents(a listEventsArgs) string {
	if strings.TrimSpace(a.From) == "" && strings.TrimSpace(a.To) == "" {
		return "List today's events"
	}
	return "List events" + tools.Span(cmpOr(a.From, "today"), a.To)
}

func saidListEvents(_ listEventsArgs, o struct {
	Events []struct{} `json:"events"`
}) string {
	return "Found " + tools.Count(len(o.Events), "event")
}

// findFreeTimeArgs are the arguments of find_free_time.
type findFreeTimeArgs struct {
	DurationMinutes int    `json:"duration_minutes" jsonschema:"how long the free slot must be, in minutes"`
	From            string `json:"from,omitempty" jsonschema:"where to start looking (default today)"`
	To              string `json:"to,omitempty" jsonschema:"where to stop (default the end of from's day; a day includes that day)"`
	DayStart        string `json:"day_start,omitempty" jsonschema:"the start of the owner's day, HH:MM (default 09:00)"`
	DayEnd          string `json:"day_end,omitempty" jsonschema:"the end of the owner's day, HH:MM (default 18:00)"`

	start, end int
}

// Check bounds the duration and reads the hours.
func (a *findFreeTimeArgs) Check() error {
	if a.DurationMinutes < 5 || a.DurationMinutes > 24*60 {
		return tools.ArgErrorf("duration_minutes", "must be between 5 and 1440")
	}
	var err error
	if a.start, err = clock("day_start", cmpOr(a.DayStart, "09:00")); err != nil {
		return err
	}
	if a.end, err = clock("day_end", cmpOr(a.DayEnd, "18:00")); err != nil {
		return err
	}
	if a.end <= a.start {
		return tools.ArgErrorf("day_end", "must be after day_start")
	}
	return nil
}

// clock reads HH:MM as minutes after midnight.
func clock(field, s string) (int, error) {
	t, err := time.Parse("15:04", strings.TrimSpace(s))
	if err != nil {
		return 0, tools.ArgErrorf(field, "%s is not a time of day (HH:MM)", tools.QuoteValue(s))
	}
	return t.Hour()*60 + t.Minute(), nil
}

func findFreeTimeTool(c Calendar) tools.Tool {
	return tools.Say(tools.New("find_free_time",
		"Find free slots of at least duration_minutes on the owner's calendar between from and to, within the owner's day "+
			"(09:00–18:00 unless given), in the owner's time zone.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a findFreeTimeArgs) (any, error) {
			w, err := window(ctx, c, env, a.From, a.To)
			if err != nil {
				return nil, err
			}
			busy := w.events[:0:0]
			for _, e := range w.events {
				if !e.AllDay {
					busy = append(busy, e)
				}
			}
			free := steward.FreeTime(busy, w.from, w.to, time.Duration(a.DurationMinutes)*time.Minute, a.start, a.end, w.loc, 10)
			return map[string]any{"time_zone": w.loc.String(), "free": free}, nil
		}), sayFindFreeTime, saidFindFreeTime)
}

func sayFindFreeTime(a findFreeTimeArgs) string {
	return fmt.Sprintf("Find %d free minutes", max(a.DurationMinutes, 0)) + tools.Span(cmpOr(a.From, "today"), a.To)
}

func saidFindFreeTime(_ findFreeTimeArgs, o struct {
	Free []struct{} `json:"free"`
}) string {
	return "Found " + tools.Count(len(o.Free), "free slot")
}

// eventArgs are the fields of an event to create, or to change.
type createEventArgs struct {
	Title       string `json:"title" jsonschema:"what the event is"`
	Start       string `json:"start" jsonschema:"when it starts: YYYY-MM-DDTHH:MM in the owner's time zone, or RFC 3339"`
	End         string `json:"end,omitempty" jsonschema:"when it ends (default one hour after start)"`
	Location    string `json:"location,omitempty" jsonschema:"where"`
	Description string `json:"description,omitempty" jsonschema:"notes"`
}

// Check checks the lengths.
func (a *createEventArgs) Check() error {
	a.Title = strings.TrimSpace(a.Title)
	return checkEventText(a.Title, a.Start, a.End, a.Location, a.Description, true)
}

func checkEventText(title, start, end, location, description string, create bool) error {
	lo := 0
	if create {
		lo = 1
	}
	if err := tools.CheckLength("title", title, lo, 300); err != nil {
		return err
	}
	if err := tools.CheckLength("start", start, lo, 40); err != nil {
		return err
	}
	if err := tools.CheckLength("end", end, 0, 40); err != nil {
		return err
	}
	if err := tools.CheckLength("location", location, 0, 300); err != nil {
		return err
	}
	return tools.CheckLength("description", description, 0, 5000)
}

// draft reads the times in the owner's zone into a calendar draft.
func draft(title, start, end, location, description string, loc *time.Location, now time.Time, create bool) (steward.EventDraft, error) {
	d := steward.EventDraft{Title: title, Location: location, Description: description}
	if strings.TrimSpace(start) != "" {
		t, day, err := when("start", start, loc, now)
		if err != nil {
			return d, err
		}
		if day {
			return d, tools.ArgErrorf("start", "give a time of day too (YYYY-MM-DDTHH:MM)")
		}
		d.Start = t
	}
	if strings.TrimSpace(end) != "" {
		t, _, err := when("end", end, loc, now)
		if err != nil {
			return d, err
		}
		d.End = t
	} else if create {
		d.End = d.Start.Add(time.Hour)
	}
	if !d.Start.IsZero() && !d.End.IsZero() && !d.End.After(d.Start) {
		return d, tools.ArgErrorf("end", "must be after start")
	}
	return d, nil
}

func createEventTool(c Calendar) tools.Tool {
	return tools.Say(tools.New("create_event",
		"Add an event to the owner's calendar (asks the owner first). To invite people, send_mail it with invite_event_id.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a createEventArgs) (any, error) {
			loc, err := c.Zone(ctx, env.OwnerID)
			if err != nil {
				return nil, tools.ServiceError(ctx, "start", err)
			}
			d, err := draft(a.Title, a.Start, a.End, a.Location, a.Description, loc, env.Time(), true)
			if err != nil {
				return nil, err
			}
			ev, err := c.CreateEvent(ctx, env.OwnerID, d)
			if err != nil {
				return nil, tools.ServiceError(ctx, "start", err)
			}
			return map[string]any{"event": ev}, nil
		}), sayCreateEvent, saidEvent[createEventArgs]("Added"))
}

func sayCreateEvent(a createEventArgs) string {
	s := "Add " + tools.Quote(a.Title) + " to the calendar"
	if strings.TrimSpace(a.Start) != "" {
		s += " at " + tools.Day(a.Start)
	}
	return s
}

// eventOut is a calendar write's output.
type eventOut struct {
	Event steward.CalendarEvent `json:"event"`
}

// saidEvent words a write's result: "Added “Dentist” on 3 Mar 2026 09:00".
func saidEvent[A any](verb string) func(A, eventOut) string {
	return func(_ A, o eventOut) string {
		s := verb + " " + tools.Quote(o.Event.Title)
		if !o.Event.Start.IsZero() {
			s += " on " + o.Event.Start.Format("2 Jan 2006 15:04")
		}
		return s
	}
}

// updateEventArgs are the arguments of update_event.
type updateEventArgs struct {
	ID          string `json:"id" jsonschema:"the event's id (list_events)"`
	ETag        string `json:"etag" jsonschema:"the event's etag as list_events returned it: a change made since is not overwritten"`
	Title       string `json:"title,omitempty" jsonschema:"a new title"`
	Start       string `json:"start,omitempty" jsonschema:"a new start (YYYY-MM-DDTHH:MM, the owner's zone); the length stays unless end is given"`
	End         string `json:"end,omitempty" jsonschema:"a new end"`
	Location    string `json:"location,omitempty" jsonschema:"a new location"`
	Description string `json:"description,omitempty" jsonschema:"new notes"`
}

// Check checks the id, the etag and that something changes.
func (a *updateEventArgs) Check() error {
	if err := checkEvent(&a.ID, &a.ETag); err != nil {
		return err
	}
	if a.Title == "" && a.Start == "" && a.End == "" && a.Location == "" && a.Description == "" {
		return tools.ArgErrorf("title", "give at least one field to change")
	}
	return checkEventText(a.Title, a.Start, a.End, a.Location, a.Description, false)
}

func checkEvent(id, etag *string) error {
	*id, *etag = strings.TrimSpace(*id), strings.TrimSpace(*etag)
	if err := tools.CheckLength("id", *id, 1, 1000); err != nil {
		return err
	}
	return tools.CheckLength("etag", *etag, 1, 300)
}

func updateEventTool(c Calendar) tools.Tool {
	return tools.Say(tools.New("update_event",
		"Change an event of the owner's calendar (a recurring one: the whole series); asks the owner first. "+
			"If the event changed on the server since list_events, nothing is overwritten and the call says so.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a updateEventArgs) (any, error) {
			loc, err := c.Zone(ctx, env.OwnerID)
			if err != nil {
				return nil, tools.ServiceError(ctx, "id", err)
			}
			d, err := draft(a.Title, a.Start, a.End, a.Location, a.Description, loc, env.Time(), false)
			if err != nil {
				return nil, err
			}
			ev, err := c.UpdateEvent(ctx, env.OwnerID, a.ID, a.ETag, d)
			if err != nil {
				return nil, tools.ServiceError(ctx, "etag", err)
			}
			return map[string]any{"event": ev}, nil
		}), sayUpdateEvent, saidEvent[updateEventArgs]("Changed"))
}

func sayUpdateEvent(a updateEventArgs) string {
	s := "Change the event"
	if t := strings.TrimSpace(a.Title); t != "" {
		s += " to " + tools.Quote(t)
	}
	if strings.TrimSpace(a.Start) != "" {
		s += ", moving it to " + tools.Day(a.Start)
	}
	return s
}

// deleteEventArgs are the arguments of delete_event.
type deleteEventArgs struct {
	ID   string `json:"id" jsonschema:"the event's id (list_events)"`
	ETag string `json:"etag" jsonschema:"the event's etag as list_events returned it"`
}

// Check checks the id and the etag.
func (a *deleteEventArgs) Check() error { return checkEvent(&a.ID, &a.ETag) }

func deleteEventTool(c Calendar) tools.Tool {
	return tools.Say(tools.New("delete_event",
		"Delete an event of the owner's calendar (a recurring one: the whole series); asks the owner first. "+
			"If it changed on the server since list_events, nothing is deleted and the call says so.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a deleteEventArgs) (any, error) {
			if err := c.DeleteEvent(ctx, env.OwnerID, a.ID, a.ETag); err != nil {
				return nil, tools.ServiceError(ctx, "etag", err)
			}
			return map[string]any{"deleted": a.ID}, nil
		}), func(a deleteEventArgs) string { return "Delete the event " + tools.Clip(eventName(a.ID), 60) },
		func(deleteEventArgs, struct{}) string { return "Deleted the event" })
}

// eventName is an event id as a summary shows it: its file name.
func eventName(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[i+1:]
	}
	return id
}
