// Package calendar speaks to an owner's calendar on the open standards: CalDAV
// (github.com/emersion/go-webdav) to find the calendar, query, create, change and delete
// events, iCalendar (github.com/emersion/go-ical) to read and write them, recurring series
// expanded here (github.com/teambition/rrule-go, with EXDATE, RDATE and overridden
// occurrences) in the owner's time zone. Every request goes through the egress guard's
// client (docs/ARCHITECTURE.md §8): https, or http only to an address of
// STEWARD_EGRESS_ALLOW; every response is capped in size and every operation in time. A
// change or delete carries the event's ETag in If-Match, so a change made meanwhile on the
// server is never overwritten: the server's 412 becomes ErrChanged (docs/MAIL.md).
package calendar

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/caldav"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/steward"
)

// Account is what a connection needs: the CalDAV URL (a server, a principal or a calendar),
// the login, the owner's time zone and, once found, the calendar's path.
type Account struct {
	URL      string `json:"caldav_url"`
	Username string `json:"username"`
	Password string `json:"-"`
	TimeZone string `json:"timezone"`
	Calendar string `json:"calendar,omitempty"`
	// OAuth names the provider whose grant logs in (internal/oauth), "" for a password; Token
	// is then the access token of the moment, sent as a bearer token.
	OAuth string `json:"oauth,omitempty"`
	Token string `json:"-"`
}

// Location is the account's time zone (UTC when unset or unknown).
func (a Account) Location() *time.Location {
	if loc, err := time.LoadLocation(a.TimeZone); err == nil && a.TimeZone != "" {
		return loc
	}
	return time.UTC
}

// Limits of a calendar's answers.
const (
	DefaultTimeout   = 30 * time.Second
	maxResponseBytes = 10 << 20
	// MaxEvents bounds the occurrences a listing returns.
	MaxEvents = 200
)

// ErrChanged is a change or delete the server refused because the event changed since its
// ETag was read (HTTP 412): nothing was overwritten.
var ErrChanged = errors.New("the event changed on the calendar server since it was read")

// Client reaches CalDAV servers through its guard.
type Client struct {
	// Guard checks every request; it allows http (checked against STEWARD_EGRESS_ALLOW here).
	Guard   *egress.Guard
	Timeout time.Duration
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// Check validates the URL: http(s), TLS unless the address is exempt, the guard's policy.
func (c *Client) Check(ctx context.Context, a Account) error {
	u, err := url.Parse(strings.TrimSpace(a.URL))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return steward.Errorf(steward.CodeInvalid, "caldav_url must be an https:// URL, such as https://caldav.example.com/")
	}
	if u.User != nil {
		return steward.Errorf(steward.CodeInvalid, "caldav_url carries no login: give username and password")
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	if u.Scheme == "http" && !c.Guard.Exempt(ctx, net.JoinHostPort(u.Hostname(), port)) {
		return steward.Errorf(steward.CodeInvalid, "caldav_url must use https: Steward sends no password in clear (http only to an address of STEWARD_EGRESS_ALLOW)")
	}
	if _, err := c.Guard.CheckDestination(ctx, a.URL); err != nil {
		return steward.Errorf(steward.CodeInvalid, "the calendar server %s is refused: %s", u.Host, strings.TrimPrefix(err.Error(), egress.ErrBlocked.Error()+": "))
	}
	return nil
}

// http is the guarded client with the account's login, its answers capped.
func (c *Client) http(a Account) webdav.HTTPClient {
	hc := c.Guard.Client()
	hc.Timeout = c.timeout()
	hc.Transport = capped{base: hc.Transport, guard: c.Guard}
	if a.Token != "" {
		return bearer{hc: hc, token: a.Token}
	}
	return webdav.HTTPClientWithBasicAuth(hc, a.Username, a.Password)
}

// bearer sends every request with the account's OAuth access token.
type bearer struct {
	hc    *http.Client
	token string
}

func (b bearer) Do(req *http.Request) (*http.Response, error) {
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.hc.Do(req)
}

// ErrTokenRefused marks a request the calendar server refused (401) with the account's OAuth
// access token: the caller refreshes the token once and tries again (internal/accounts).
var ErrTokenRefused = errors.New("the calendar server refused the access token")

// capped refuses plain http to an address that is not exempt (a redirect too: the login
// rides on every request) and limits every response body to maxResponseBytes.
type capped struct {
	base  http.RoundTripper
	guard *egress.Guard
}

func (t capped) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" {
		port := req.URL.Port()
		if port == "" {
			port = "80"
		}
		if !t.guard.Exempt(req.Context(), net.JoinHostPort(req.URL.Hostname(), port)) {
			return nil, fmt.Errorf("%w: plain http to %s (https only, unless STEWARD_EGRESS_ALLOW names the address)", egress.ErrBlocked, req.URL.Host)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, maxResponseBytes), resp.Body}
	return resp, nil
}

// fail words an error of a step with the server.
func (c *Client) fail(ctx context.Context, a Account, what string, err error) error {
	var se *steward.Error
	if errors.As(err, &se) {
		return err
	}
	host := a.URL
	if u, perr := url.Parse(a.URL); perr == nil {
		host = u.Host
	}
	msg := err.Error()
	switch {
	case errors.Is(err, egress.ErrBlocked):
		return steward.Errorf(steward.CodeInvalid, "the calendar server %s is refused: %s", host, strings.TrimPrefix(msg, egress.ErrBlocked.Error()+": "))
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return steward.Errorf(steward.CodeInvalid, "the calendar server %s did not answer within %s (%s)", host, c.timeout(), what)
	case a.Token != "" && (strings.Contains(msg, "401") || strings.Contains(msg, "Unauthorized")):
		return errors.Join(ErrTokenRefused, steward.Errorf(steward.CodeInvalid, "the calendar server %s refused the access token of %q", host, a.Username))
	case strings.Contains(msg, "401") || strings.Contains(strings.ToLower(msg), "unauthenticated") || strings.Contains(msg, "Unauthorized"):
		return steward.Errorf(steward.CodeInvalid, "the calendar server %s refused the login of %q: check the user name and password (an app password where the provider asks for one)", host, a.Username)
	}
	return steward.Errorf(steward.CodeInvalid, "the calendar server %s: %s: %v", host, what, err)
}

// Find logs in and finds the account's calendar: the first calendar of events in the
// principal's home (or the URL itself when it is one). It returns the calendar's path.
func (c *Client) Find(ctx context.Context, a Account) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	cl, err := caldav.NewClient(c.http(a), a.URL)
	if err != nil {
		return "", c.fail(ctx, a, "connect", err)
	}
	principal, err := cl.FindCurrentUserPrincipal(ctx)
	if err != nil {
		return "", c.fail(ctx, a, "find the user", err)
	}
	home, err := cl.FindCalendarHomeSet(ctx, principal)
	if err != nil {
		return "", c.fail(ctx, a, "find the calendars", err)
	}
	cals, err := cl.FindCalendars(ctx, home)
	if err != nil {
		return "", c.fail(ctx, a, "list the calendars", err)
	}
	u, _ := url.Parse(a.URL)
	for _, cal := range cals { // the URL itself, when it names a calendar
		if u != nil && strings.TrimSuffix(cal.Path, "/") == strings.TrimSuffix(u.Path, "/") {
			return cal.Path, nil
		}
	}
	for _, cal := range cals {
		if len(cal.SupportedComponentSet) == 0 || slices.Contains(cal.SupportedComponentSet, ical.CompEvent) {
			return cal.Path, nil
		}
	}
	return "", steward.Errorf(steward.CodeInvalid, "the calendar server has no calendar of events for %q", a.Username)
}

// List returns the occurrences of events overlapping [from, to), recurring series
// expanded, sorted by start, at most MaxEvents.
func (c *Client) List(ctx context.Context, a Account, from, to time.Time) ([]steward.CalendarEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	cl, err := caldav.NewClient(c.http(a), a.URL)
	if err != nil {
		return nil, c.fail(ctx, a, "connect", err)
	}
	objs, err := cl.QueryCalendar(ctx, a.Calendar, &caldav.CalendarQuery{
		CompRequest: caldav.CalendarCompRequest{Name: ical.CompCalendar, AllProps: true, AllComps: true},
		CompFilter: caldav.CompFilter{Name: ical.CompCalendar, Comps: []caldav.CompFilter{{Name: ical.CompEvent,
			Start: from.UTC(), End: to.UTC()}}},
	})
	if err != nil {
		return nil, c.fail(ctx, a, "query the events", err)
	}
	loc := a.Location()
	out := []steward.CalendarEvent{}
	for _, o := range objs {
		if o.Data == nil {
			continue
		}
		evs, err := occurrences(ctx, o, from, to, loc)
		if err != nil {
			return nil, c.fail(ctx, a, "expand the events", err)
		}
		out = append(out, evs...)
	}
	slices.SortFunc(out, func(x, y steward.CalendarEvent) int {
		if c := x.Start.Compare(y.Start); c != 0 {
			return c
		}
		return strings.Compare(x.Title, y.Title)
	})
	if len(out) > MaxEvents {
		out = out[:MaxEvents]
	}
	return out, nil
}

// occurrences expands one calendar object's events within [from, to): a series through
// expand (bounded whatever its rule and start), an overridden occurrence (RECURRENCE-ID)
// where it was moved to, and a series with more than MaxPerSeries occurrences in the range
// as one item dated at its first, with a note saying so.
func occurrences(ctx context.Context, o caldav.CalendarObject, from, to time.Time, loc *time.Location) ([]steward.CalendarEvent, error) {
	master, overrides := split(o, loc)
	var out []steward.CalendarEvent
	add := func(ev ical.Event, start time.Time, recurring bool) {
		e, ok := view(o, ev, loc)
		if !ok {
			return
		}
		if !start.IsZero() {
			d := e.End.Sub(e.Start)
			e.Start = start.In(loc)
			e.End = e.Start.Add(d)
		}
		e.Recurring = recurring
		if e.Start.Before(to) && e.End.After(from) {
			out = append(out, e)
		}
	}
	if master != nil {
		s, err := series(master, loc)
		if err != nil || s == nil {
			add(*master, time.Time{}, false)
		} else if dense, err := expandInto(ctx, o, *master, *s, from, to, loc, overrides, add); err != nil {
			return nil, err
		} else if dense != nil {
			out = append(out, *dense)
		}
	}
	for _, ov := range overrides { // moved occurrences whose original time is outside the range
		add(ov, time.Time{}, true)
	}
	return out, nil
}

// split is an object's master event (nil when it has none) and its overridden occurrences
// by their original start.
func split(o caldav.CalendarObject, loc *time.Location) (*ical.Event, map[int64]ical.Event) {
	var master *ical.Event
	overrides := map[int64]ical.Event{}
	for _, ev := range o.Data.Events() {
		if p := ev.Props.Get(ical.PropRecurrenceID); p != nil {
			if t, err := p.DateTime(loc); err == nil {
				overrides[t.Unix()] = ev
			}
			continue
		}
		if master == nil {
			m := ev
			master = &m
		}
	}
	return master, overrides
}

// expandInto adds a series' occurrences in [from, to), taking each overridden one's place
// from overrides; a series too dense to list is returned as one item instead.
func expandInto(ctx context.Context, o caldav.CalendarObject, master ical.Event, s rule, from, to time.Time, loc *time.Location,
	overrides map[int64]ical.Event, add func(ical.Event, time.Time, bool)) (*steward.CalendarEvent, error) {
	e, ok := view(o, master, loc)
	if !ok {
		return nil, nil
	}
	d := e.End.Sub(e.Start)
	x, err := expand(ctx, s, d, from, to)
	if errors.Is(err, errRule) {
		add(master, time.Time{}, false)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if x.tooMany {
		first := x.first
		if first.IsZero() { // too dense to walk at all: shown from the range's start
			first = from
		}
		e.Start, e.End = latest(first, from).In(loc), earliest(first.Add(d), to).In(loc)
		e.Recurring, e.TooMany = true, true
		e.Note = "repeats " + every(s.opt) + " — too many to list here (more than " + strconv.Itoa(MaxPerSeries) + " in this range)"
		return &e, nil
	}
	for _, t := range x.starts {
		if ov, ok := overrides[t.Unix()]; ok {
			delete(overrides, t.Unix())
			add(ov, time.Time{}, true)
			continue
		}
		add(master, t, true)
	}
	return nil, nil
}

// view reads an event's fields in loc; ok false when it has no readable start.
func view(o caldav.CalendarObject, ev ical.Event, loc *time.Location) (steward.CalendarEvent, bool) {
	start, err := ev.DateTimeStart(loc)
	if err != nil {
		return steward.CalendarEvent{}, false
	}
	end, err := ev.DateTimeEnd(loc)
	if err != nil || end.IsZero() || !end.After(start) {
		end = start
		if p := ev.Props.Get(ical.PropDateTimeStart); p != nil && p.ValueType() == ical.ValueDate {
			end = start.AddDate(0, 0, 1)
		}
	}
	e := steward.CalendarEvent{ID: o.Path, ETag: o.ETag, Start: start.In(loc), End: end.In(loc)}
	e.UID, _ = ev.Props.Text(ical.PropUID)
	e.Title, _ = ev.Props.Text(ical.PropSummary)
	e.Location, _ = ev.Props.Text(ical.PropLocation)
	e.Description, _ = ev.Props.Text(ical.PropDescription)
	if p := ev.Props.Get(ical.PropDateTimeStart); p != nil && (p.ValueType() == ical.ValueDate || len(p.Value) == 8) {
		e.AllDay = true
		// An all-day event is a day in the owner's zone, whatever zone it was read in.
		y, m, d := start.Date()
		e.Start = time.Date(y, m, d, 0, 0, 0, 0, loc)
		y, m, d = end.Date()
		e.End = time.Date(y, m, d, 0, 0, 0, 0, loc)
	}
	if len(e.Description) > 2000 {
		e.Description = string([]rune(e.Description)[:min(2000, len([]rune(e.Description)))])
	}
	return e, true
}

// series is a master event's recurrence (nil for a single event): its RRULE from its
// DTSTART (in its own zone, so a weekly 09:00 stays 09:00 across a DST change), its RDATEs
// and EXDATEs (each possibly a comma-separated list).
func series(ev *ical.Event, loc *time.Location) (*rule, error) {
	opt, err := ev.Props.RecurrenceRule()
	if err != nil || opt == nil {
		return nil, err
	}
	start, err := ev.DateTimeStart(loc)
	if err != nil {
		return nil, err
	}
	dates := func(name string) []time.Time {
		var out []time.Time
		for _, p := range ev.Props.Values(name) {
			for _, v := range strings.Split(p.Value, ",") {
				q := p
				q.Value = strings.TrimSpace(v)
				if t, err := q.DateTime(start.Location()); err == nil {
					out = append(out, t)
				}
			}
		}
		return out
	}
	return &rule{opt: *opt, start: start.Truncate(time.Second), rdates: dates(ical.PropRecurrenceDates), exdate: dates(ical.PropExceptionDates)}, nil
}

// Create stores a new event in the calendar (If-None-Match: *, so nothing is overwritten).
func (c *Client) Create(ctx context.Context, a Account, d steward.EventDraft, now time.Time) (steward.CalendarEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	cal := ical.NewCalendar()
	cal.Props.SetText(ical.PropVersion, "2.0")
	cal.Props.SetText(ical.PropProductID, "-//Steward//EN")
	ev := ical.NewEvent()
	uid := newUID()
	ev.Props.SetText(ical.PropUID, uid)
	ev.Props.SetDateTime(ical.PropDateTimeStamp, now.UTC())
	apply(ev, d)
	cal.Children = append(cal.Children, ev.Component)
	path := strings.TrimSuffix(a.Calendar, "/") + "/" + uid + ".ics"
	etag, err := c.put(ctx, a, path, cal, "", true)
	if err != nil {
		return steward.CalendarEvent{}, err
	}
	e, _ := view(caldav.CalendarObject{Path: path, ETag: etag, Data: cal}, *ev, a.Location())
	return e, nil
}

// apply writes a draft's non-empty fields into ev (times in UTC).
func apply(ev *ical.Event, d steward.EventDraft) {
	if d.Title != "" {
		ev.Props.SetText(ical.PropSummary, d.Title)
	}
	if d.Location != "" {
		ev.Props.SetText(ical.PropLocation, d.Location)
	}
	if d.Description != "" {
		ev.Props.SetText(ical.PropDescription, d.Description)
	}
	if !d.Start.IsZero() {
		ev.Props.SetDateTime(ical.PropDateTimeStart, d.Start.UTC())
	}
	if !d.End.IsZero() {
		ev.Props.Del(ical.PropDuration)
		ev.Props.SetDateTime(ical.PropDateTimeEnd, d.End.UTC())
	}
}

// Update changes event id (its master, for a series) if its ETag is still etag: the server
// checks If-Match, and a change made meanwhile is ErrChanged (nothing overwritten).
func (c *Client) Update(ctx context.Context, a Account, id, etag string, d steward.EventDraft) (steward.CalendarEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	obj, err := c.Get(ctx, a, id)
	if err != nil {
		return steward.CalendarEvent{}, err
	}
	if unquote(obj.ETag) != unquote(etag) {
		return steward.CalendarEvent{}, ErrChanged
	}
	var master *ical.Event
	for _, ev := range obj.Data.Events() {
		if ev.Props.Get(ical.PropRecurrenceID) == nil {
			m := ev
			master = &m
			break
		}
	}
	if master == nil {
		return steward.CalendarEvent{}, steward.Errorf(steward.CodeInvalid, "event %s has no main event to change", id)
	}
	if !d.Start.IsZero() && d.End.IsZero() { // moved: keep its length
		if s, err := master.DateTimeStart(time.UTC); err == nil {
			if e, err := master.DateTimeEnd(time.UTC); err == nil && e.After(s) {
				d.End = d.Start.Add(e.Sub(s))
			}
		}
	}
	apply(master, d)
	seq, _ := strconv.Atoi(propValue(master, ical.PropSequence))
	master.Props.SetText(ical.PropSequence, strconv.Itoa(seq+1))
	master.Props.Get(ical.PropSequence).SetValueType(ical.ValueInt)
	newTag, err := c.put(ctx, a, id, obj.Data, etag, false)
	if err != nil {
		return steward.CalendarEvent{}, err
	}
	e, _ := view(caldav.CalendarObject{Path: id, ETag: newTag, Data: obj.Data}, *master, a.Location())
	return e, nil
}

func propValue(ev *ical.Event, name string) string {
	if p := ev.Props.Get(name); p != nil {
		return p.Value
	}
	return ""
}

// Delete removes event id if its ETag is still etag (If-Match; ErrChanged otherwise).
func (c *Client) Delete(ctx context.Context, a Account, id, etag string) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	resp, err := c.do(ctx, a, http.MethodDelete, id, nil, map[string]string{"If-Match": quote(etag)})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return status(resp, id)
}

// Get reads one calendar object with its ETag.
func (c *Client) Get(ctx context.Context, a Account, id string) (*caldav.CalendarObject, error) {
	if err := c.inCalendar(a, id); err != nil {
		return nil, err
	}
	cl, err := caldav.NewClient(c.http(a), a.URL)
	if err != nil {
		return nil, c.fail(ctx, a, "connect", err)
	}
	obj, err := cl.GetCalendarObject(ctx, id)
	if err != nil {
		if strings.Contains(err.Error(), "404") {
			return nil, steward.Errorf(steward.CodeNotFound, "there is no event %s (it may have been deleted; list the events again)", id)
		}
		return nil, c.fail(ctx, a, "read the event", err)
	}
	return obj, nil
}

// ICS is event id as an invitation (METHOD:REQUEST), for a mail's attachment.
func (c *Client) ICS(ctx context.Context, a Account, id string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	obj, err := c.Get(ctx, a, id)
	if err != nil {
		return nil, err
	}
	obj.Data.Props.SetText(ical.PropMethod, "REQUEST")
	var buf bytes.Buffer
	if err := ical.NewEncoder(&buf).Encode(obj.Data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// inCalendar refuses an id outside the account's calendar.
func (c *Client) inCalendar(a Account, id string) error {
	if !strings.HasPrefix(id, strings.TrimSuffix(a.Calendar, "/")+"/") || strings.Contains(id, "..") || !strings.HasSuffix(id, ".ics") {
		return steward.Errorf(steward.CodeInvalid, "%q is not an event of the calendar (ids come from list_events)", id)
	}
	return nil
}

// put writes cal at path: with If-Match etag (a change) or If-None-Match * (a new event).
// It returns the new ETag ("" when the server does not say).
func (c *Client) put(ctx context.Context, a Account, path string, cal *ical.Calendar, etag string, create bool) (string, error) {
	if err := c.inCalendar(a, path); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := ical.NewEncoder(&buf).Encode(cal); err != nil {
		return "", steward.Errorf(steward.CodeInvalid, "the event cannot be written: %v", err)
	}
	h := map[string]string{"Content-Type": ical.MIMEType + "; charset=utf-8", "If-Match": quote(etag)}
	if create {
		h = map[string]string{"Content-Type": ical.MIMEType + "; charset=utf-8", "If-None-Match": "*"}
	}
	resp, err := c.do(ctx, a, http.MethodPut, path, buf.Bytes(), h)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if err := status(resp, path); err != nil {
		return "", err
	}
	return unquote(resp.Header.Get("ETag")), nil
}

// do sends one request to path on the account's server.
func (c *Client) do(ctx context.Context, a Account, method, path string, body []byte, h map[string]string) (*http.Response, error) {
	base, err := url.Parse(a.URL)
	if err != nil {
		return nil, steward.Errorf(steward.CodeInvalid, "caldav_url is not a URL")
	}
	u := base.ResolveReference(&url.URL{Path: path})
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := c.http(a).Do(req)
	if err != nil {
		return nil, c.fail(ctx, a, strings.ToLower(method)+" the event", err)
	}
	return resp, nil
}

// status sorts a write's answer: 2xx done, 412 ErrChanged, 404 not found, 401 a login.
func status(resp *http.Response, id string) error {
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c == http.StatusPreconditionFailed:
		return ErrChanged
	case c == http.StatusNotFound:
		return steward.Errorf(steward.CodeNotFound, "there is no event %s (it may have been deleted; list the events again)", id)
	case c == http.StatusUnauthorized || c == http.StatusForbidden:
		return steward.Errorf(steward.CodeInvalid, "the calendar server refused the change (%d): check the account's login and rights", c)
	default:
		return steward.Errorf(steward.CodeInvalid, "the calendar server answered %d to the change", c)
	}
}

func quote(etag string) string {
	if strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, "W/") {
		return etag
	}
	return strconv.Quote(etag)
}

func unquote(etag string) string {
	etag = strings.TrimPrefix(etag, "W/")
	if s, err := strconv.Unquote(etag); err == nil {
		return s
	}
	return etag
}

func newUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b) + "@steward"
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// ErrorOf words ErrChanged for the owner (other errors pass).
func ErrorOf(err error, id string) error {
	if errors.Is(err, ErrChanged) {
		return steward.Errorf(steward.CodeConflict, "the event %s changed on the calendar server since it was read, so nothing was changed or overwritten; list the events again and tell the owner what changed", id)
	}
	return err
}
