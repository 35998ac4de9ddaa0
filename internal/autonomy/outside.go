package autonomy

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Outside is what jobs read from outside Steward: the owner's mail and calendar
// (internal/accounts implements it). Jobs read it before their transaction, never inside
// one (docs/ARCHITECTURE.md §2); nil leaves both "not connected".
type Outside interface {
	Connected(ctx context.Context, ownerID uuid.UUID) (mail, calendar bool, err error)
	SearchMail(ctx context.Context, ownerID uuid.UUID, q steward.MailQuery) ([]steward.MailSummary, error)
	Events(ctx context.Context, ownerID uuid.UUID, from, to time.Time) ([]steward.CalendarEvent, error)
}

// Portfolio is the owner's brokerage account in one line, for the morning briefing
// (internal/trading, docs/TRADING.md): an Outside that also implements it gives the briefing
// its portfolio line; "" for none (trading off).
type Portfolio interface {
	PortfolioLine(ctx context.Context, ownerID uuid.UUID) (string, error)
}

// outsideData is what a job gathered: the day's events and the mail since its last run, and
// each source's state ("connected", "not connected", or what went wrong).
type outsideData struct {
	Events   []steward.CalendarEvent
	Mail     []steward.MailSummary
	Calendar string
	Inbox    string
	// Portfolio is the brokerage account's line ("" for none).
	Portfolio string
	// Since is when the mail gathered starts.
	Since time.Time
}

// tainting reports whether the data carries a stranger's text (a turn reading it is tainted).
func (d *outsideData) tainting() bool { return d != nil && (len(d.Events) > 0 || len(d.Mail) > 0) }

// gather reads the owner's mail since `since` (unread only when unread) and, when withEvents,
// the events of [dayStart, dayEnd), with the timeouts of the accounts' clients. A source that
// fails is noted, never the job's failure.
func gather(ctx context.Context, out Outside, ownerID uuid.UUID, since, dayStart, dayEnd time.Time, withEvents, unread bool) *outsideData {
	d := &outsideData{Calendar: "not connected", Inbox: "not connected", Events: []steward.CalendarEvent{}, Mail: []steward.MailSummary{}, Since: since}
	if out == nil {
		return d
	}
	hasMail, hasCal, err := out.Connected(ctx, ownerID)
	if err != nil {
		d.Calendar, d.Inbox = "unavailable", "unavailable"
		return d
	}
	if hasMail {
		d.Inbox = "connected"
		if d.Mail, err = out.SearchMail(ctx, ownerID, steward.MailQuery{After: since, Unread: unread, Limit: maxListed}); err != nil {
			d.Inbox, d.Mail = "unavailable: "+err.Error(), []steward.MailSummary{}
		}
	}
	if hasCal && withEvents {
		d.Calendar = "connected"
		if d.Events, err = out.Events(ctx, ownerID, dayStart, dayEnd); err != nil {
			d.Calendar, d.Events = "unavailable: "+err.Error(), []steward.CalendarEvent{}
		}
		d.Events = d.Events[:min(len(d.Events), maxListed)]
	}
	return d
}

// previousStart is when the job's previous run started, or fallback.
func previousStart(ctx context.Context, st *store.Store, run store.JobRun, fallback time.Time) (time.Time, error) {
	since := fallback
	err := st.WithOwner(ctx, run.OwnerID, func(tx *store.Tx) error {
		prev, ok, err := tx.Runs.Previous(ctx, run.Job, run.ID)
		if err == nil && ok && prev.StartedAt != nil {
			since = *prev.StartedAt
		}
		return err
	})
	return since, err
}
