package automation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/work"
)

// Due fires what is due: reminders as notifications, automations' runs as autonomous turns.
type Due struct {
	*Service
	// Door scans what is due across owners; Runner runs automations' turns; Notifier
	// delivers the owner's notifications at once.
	Door     Door
	Runner   *autonomy.Runner
	Notifier autonomy.Notifier
}

// The work kinds of reminders and automation runs (internal/work).
const (
	ReminderKind   = "reminder"
	AutomationKind = "automation_run"
)

// LateAfter is how long after its time a reminder is late: one that fires later (the system
// was down) says so.
const LateAfter = time.Minute

// Kinds are the work kinds Due does: a reminder, keyed by its id and due at its time; an
// automation's run, keyed by RunKey and due at its scheduled time.
func (s *Due) Kinds() []work.Kind {
	return []work.Kind{
		{Name: ReminderKind, Work: s.reminderWork},
		{Name: AutomationKind, Work: s.automationWork},
	}
}

// reminderWork fires a reminder; one no longer pending (cancelled, fired) is done.
func (s *Due) reminderWork(ctx context.Context, ownerID uuid.UUID, key string) error {
	id, err := uuid.Parse(key)
	if err != nil {
		return fmt.Errorf("reminder key %q: %w", key, err)
	}
	if err := s.FireReminder(ctx, ownerID, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// automationWork runs an automation's run for the latest of its scheduled times due since
// the item's (a run missed while the system was down catches up once, late), then enqueues
// its next run. An item the automation no longer stands for — deleted, paused, edited or
// resumed since, the time no longer on its schedule — is done without a run.
func (s *Due) automationWork(ctx context.Context, ownerID uuid.UUID, key string) error {
	id, at, err := parseRunKey(key)
	if err != nil {
		return err
	}
	var a store.Automation
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		a, err = tx.Automations().Get(ctx, id)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	sc, err := ParseSchedule(a.Cron, a.Timezone)
	if err != nil || a.Status != store.AutomationActive || a.Kind != store.AutomationSchedule ||
		a.Since.After(at) || !sc.Next(at.Add(-time.Second)).Equal(at) {
		return nil //nolint:nilerr // a stale item: the automation's own item stands
	}
	now := s.Now.Now()
	if latest, ok := sc.Latest(at.Add(-time.Second), now); ok {
		at = latest
	}
	if err := s.RunAutomation(ctx, ownerID, id, at); err != nil {
		return err
	}
	return s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		a, err := tx.Automations().Get(ctx, id)
		if err != nil {
			return nil //nolint:nilerr // deleted meanwhile: nothing to enqueue
		}
		return enqueueNext(ctx, tx, a, later(at, now))
	})
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// NextReminder is the time of the soonest pending reminder due by before, when there is
// one: the minute tick on Lambda waits for it within its invocation (docs/AUTOMATIONS.md).
func (s *Due) NextReminder(ctx context.Context, before time.Time) (time.Time, bool, error) {
	due, err := s.Door.ScanDueReminders(ctx, before, 1)
	if err != nil || len(due) == 0 {
		return time.Time{}, false, err
	}
	return due[0].DueAt, true, nil
}

// FireReminder fires one due reminder: once — the reminder's conditional update to fired
// and its notification commit together, so a second scheduler finds nothing to fire
// (store.ErrNotFound) — then delivers the owner's notifications.
func (s *Due) FireReminder(ctx context.Context, ownerID, id uuid.UUID) error {
	now := s.Now.Now()
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		r, err := tx.Reminders().Get(ctx, id)
		if err != nil {
			return err
		}
		late := now.Sub(r.DueAt) > LateAfter
		if r, err = tx.Reminders().Fire(ctx, id, now, late); err != nil {
			return err
		}
		title, msg := "Reminder", r.Text
		if late {
			loc := zoneOr(r.Timezone)
			title = "Reminder (late)"
			msg = fmt.Sprintf("%s\n\nLate: this was due %s, %s ago; Steward was not running then.", r.Text,
				Describe(r.DueAt, loc), now.Sub(r.DueAt).Round(time.Minute))
		}
		_, err = tx.Tasks.CreateNotification(ctx, "", title, msg)
		return err
	})
	if err != nil {
		return err
	}
	zerolog.Ctx(ctx).Info().Stringer("owner_id", ownerID).Stringer("reminder_id", id).Msg("reminder fired")
	s.flush(ctx, ownerID)
	return nil
}

func (s *Due) flush(ctx context.Context, ownerID uuid.UUID) {
	if s.Notifier == nil {
		return
	}
	if err := s.Notifier.Flush(ctx, ownerID); err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Msg("notification delivery failed; the next tick retries")
	}
}

// RunAutomation runs an automation's run scheduled for at, once per (automation, at): the
// run's claim is the job run keyed on that time. Its answer goes to the owner's default
// channel; a failure counts, and MaxFailures in a row pause it and tell the owner why.
func (s *Due) RunAutomation(ctx context.Context, ownerID, id uuid.UUID, at time.Time) error {
	var a store.Automation
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		a, err = tx.Automations().Get(ctx, id)
		return err
	})
	if err != nil {
		return err
	}
	if a.Status != store.AutomationActive {
		return nil
	}
	loc := zoneOr(a.Timezone)
	when := a.Words
	if when == "" {
		when = a.Cron
	}
	msg := fmt.Sprintf("Automation %q (%s), the run for %s. Do what it says; your answer is sent to the owner's default channel.\n\n%s",
		tools.Clip(a.Instruction, 60), when, Describe(at, loc), a.Instruction)
	run, claimed, err := s.Runner.RunInstruction(ctx, ownerID, store.AutomationJob(id), at, msg)
	if err != nil || !claimed {
		return err
	}
	return s.concluded(ctx, a, run)
}

// concluded delivers a run's answer and counts its failure.
func (s *Due) concluded(ctx context.Context, a store.Automation, run store.JobRun) error {
	answer := ""
	if run.Status == store.RunCompleted && run.TurnID != nil {
		if v, err := s.Runner.Agent.Turn(ctx, a.OwnerID, *run.TurnID); err == nil {
			answer = v.Answer
		}
	}
	failed := run.Status == store.RunFailed || run.Status == store.RunAborted
	err := s.Store.WithOwner(ctx, a.OwnerID, func(tx *store.Tx) error {
		reason := fmt.Sprintf("paused after %d failed runs in a row (the last: %s)", s.limits().MaxFailures, cmpOr(run.Error, string(run.Status)))
		after, err := tx.Automations().RecordOutcome(ctx, a.ID, failed, s.limits().MaxFailures, reason)
		if err != nil {
			return err
		}
		title := "Automation: " + tools.Clip(a.Instruction, 60)
		if answer != "" {
			if _, err := tx.Tasks.CreateNotification(ctx, "", title, tools.Clip(answer, 2000)); err != nil {
				return err
			}
		}
		if failed && after.Status == store.AutomationPaused && a.Status == store.AutomationActive {
			_, err = tx.Tasks.CreateNotification(ctx, "", "Automation paused", fmt.Sprintf("%s\n\n%s. Resume it in Automations once fixed.",
				tools.Quote(tools.Clip(a.Instruction, 200)), steward.Visible(after.PausedReason)))
		}
		return err
	})
	if err != nil {
		return err
	}
	s.flush(ctx, a.OwnerID)
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func zoneOr(tz string) *time.Location {
	if loc, err := time.LoadLocation(tz); err == nil {
		return loc
	}
	return time.UTC
}
