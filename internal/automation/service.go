// Package automation is the owner's reminders and automations (docs/AUTOMATIONS.md): the one
// service every face calls — the tools, the API, the web app and the CLI. It reads times and
// schedules in the owner's time zone (ResolveAt, ParseSchedule), keeps the limits, and fires
// what is due (Service.Drain): a reminder once, as a notification on the owner's channels; an
// automation's run once per scheduled time, as an autonomous turn (autonomy.Runner).
package automation

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/work"
)

// Limits are the owner's bounds; each names its knob in its error (docs/CONFIGURATION.md).
type Limits struct {
	// MaxAutomations is the most active automations per owner (STEWARD_AUTOMATIONS_MAX).
	MaxAutomations int
	// MaxReminders is the most pending reminders per owner (STEWARD_REMINDERS_MAX).
	MaxReminders int
	// MinInterval is the shortest time between two runs of a schedule
	// (STEWARD_AUTOMATION_MIN_INTERVAL).
	MinInterval time.Duration
	// MaxFailures is how many failed runs in a row pause an automation
	// (STEWARD_AUTOMATION_MAX_FAILURES).
	MaxFailures int
}

// DefaultLimits are the limits when none are configured.
var DefaultLimits = Limits{MaxAutomations: 100, MaxReminders: 1000, MinInterval: 15 * time.Minute, MaxFailures: 3}

// Service is the owner's reminders and automations.
type Service struct {
	Store  *store.Store
	Limits Limits
	Now    steward.Clock
}

// Door is the cross-owner read of the soonest reminders; *store.Door implements it.
type Door interface {
	ScanDueReminders(ctx context.Context, before time.Time, limit int) ([]store.DueReminder, error)
}

var _ Door = (*store.Door)(nil)

func (s *Service) limits() Limits {
	l := s.Limits
	d := DefaultLimits
	if l.MaxAutomations <= 0 {
		l.MaxAutomations = d.MaxAutomations
	}
	if l.MaxReminders <= 0 {
		l.MaxReminders = d.MaxReminders
	}
	if l.MinInterval <= 0 {
		l.MinInterval = d.MinInterval
	}
	if l.MaxFailures <= 0 {
		l.MaxFailures = d.MaxFailures
	}
	return l
}

// Zone is the owner's time zone.
func (s *Service) Zone(ctx context.Context, ownerID uuid.UUID) (*time.Location, error) {
	var tz string
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		tz, err = tx.Account.Timezone(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return autonomy.LoadZone(tz)
}

// SetZone sets the owner's time zone (an IANA name such as Europe/Berlin). Reminders keep
// their instants; automations made before keep their own zone.
func (s *Service) SetZone(ctx context.Context, ownerID uuid.UUID, tz string) (string, error) {
	tz = strings.TrimSpace(tz)
	loc, err := autonomy.LoadZone(tz)
	if err != nil {
		return "", invalid("%v", err)
	}
	return loc.String(), s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error { return tx.Account.SetTimezone(ctx, loc.String()) })
}

// ReminderView is a reminder as the faces show it: its time in the owner's words and UTC.
type ReminderView struct {
	store.Reminder
	When string `json:"when"`
}

func viewReminder(r store.Reminder) ReminderView {
	loc, err := autonomy.LoadZone(r.Timezone)
	if err != nil {
		loc = time.UTC
	}
	return ReminderView{Reminder: r, When: Describe(r.DueAt, loc)}
}

// Maximum lengths of a reminder's text and an automation's instruction, in characters.
const (
	MaxReminderText = 500
	MaxInstruction  = 2000
)

// Resolve reads at in the owner's zone now: the instant and its words for a card.
func (s *Service) Resolve(ctx context.Context, ownerID uuid.UUID, at string) (time.Time, string, error) {
	loc, err := s.Zone(ctx, ownerID)
	if err != nil {
		return time.Time{}, "", err
	}
	now := s.Now.Now()
	t, err := ResolveAt(at, now, loc)
	if err != nil {
		return time.Time{}, "", err
	}
	if !t.After(now) {
		return time.Time{}, "", invalid("%s is in the past; a reminder is for a time to come", Describe(t, loc))
	}
	return t, Describe(t, loc), nil
}

// CreateReminder stores a reminder of text at at (ResolveAt, in the owner's zone).
// turnID names the turn that asked, if any.
func (s *Service) CreateReminder(ctx context.Context, ownerID uuid.UUID, text, at string, turnID *uuid.UUID) (ReminderView, error) {
	text = strings.TrimSpace(text)
	if err := tools.CheckLength("text", text, 1, MaxReminderText); err != nil {
		return ReminderView{}, invalid("%v", err)
	}
	due, _, err := s.Resolve(ctx, ownerID, at)
	if err != nil {
		return ReminderView{}, err
	}
	loc, _ := s.Zone(ctx, ownerID)
	var r store.Reminder
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		n, err := tx.Reminders().Pending(ctx)
		if err != nil {
			return err
		}
		if max := s.limits().MaxReminders; n >= max {
			return steward.Errorf(steward.CodeInvalid, "you have %d pending reminders, the most allowed (STEWARD_REMINDERS_MAX); cancel one first", max)
		}
		if r, err = tx.Reminders().Create(ctx, store.NewReminder{Text: text, DueAt: due, Timezone: loc.String(), SourceTurnID: turnID}); err != nil {
			return err
		}
		// Its firing is a work item due at its time, in the same commit (internal/work).
		return work.Enqueue(ctx, tx, ReminderKind, ownerID, r.ID.String(), due)
	})
	return viewReminder(r), err
}

// ListReminders lists the owner's pending reminders, and with all the fired and cancelled
// ones too (latest first), at most 200.
func (s *Service) ListReminders(ctx context.Context, ownerID uuid.UUID, all bool) ([]ReminderView, error) {
	var rs []store.Reminder
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		rs, err = tx.Reminders().List(ctx, all, 200)
		return err
	})
	out := make([]ReminderView, len(rs))
	for i, r := range rs {
		out[i] = viewReminder(r)
	}
	return out, err
}

// CancelReminder cancels a pending reminder.
func (s *Service) CancelReminder(ctx context.Context, ownerID, id uuid.UUID) (ReminderView, error) {
	var r store.Reminder
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		if r, err = tx.Reminders().Cancel(ctx, id); errors.Is(err, store.ErrNotFound) {
			if old, gerr := tx.Reminders().Get(ctx, id); gerr == nil {
				return steward.Errorf(steward.CodeConflict, "reminder %s is %s, not pending", id, old.Status)
			}
			return steward.Errorf(steward.CodeNotFound, "no reminder %s", id)
		}
		return err
	})
	return viewReminder(r), err
}
