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

// LateAfter is how long after its time a reminder is late: one that fires later (the system
// was down) says so.
const LateAfter = time.Minute

// Drain fires what is due now: every pending reminder whose time has come, and every active
// scheduled automation's latest due run (once: a run missed while the system was down
// catches up with its latest time only). It is a scheduler drain (autonomy.Drainer) and
// the body of `steward serve`'s due loop.
func (s *Due) Drain(ctx context.Context) error {
	now := s.Now.Now()
	return errors.Join(s.fireReminders(ctx, now), s.runAutomations(ctx, now))
}

func (s *Due) fireReminders(ctx context.Context, now time.Time) error {
	var errs []error
	for range 10 { // at most 1,000 a drain
		due, err := s.Door.ScanDueReminders(ctx, now, 100)
		if err != nil {
			return err
		}
		for _, d := range due {
			if err := s.FireReminder(ctx, d.OwnerID, d.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				errs = append(errs, fmt.Errorf("reminder %s: %w", d.ID, err))
			}
		}
		if len(due) < 100 {
			break
		}
	}
	return errors.Join(errs...)
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

func (s *Due) runAutomations(ctx context.Context, now time.Time) error {
	if s.Runner == nil {
		return nil
	}
	scans, err := s.Door.ScanAutomations(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, sc := range scans {
		sched, err := ParseSchedule(sc.Cron, sc.Timezone)
		if err != nil {
			zerolog.Ctx(ctx).Error().Err(err).Stringer("automation_id", sc.ID).Msg("stored schedule does not parse; skipped")
			continue
		}
		at, ok := sched.Latest(sc.Since, now)
		if !ok {
			continue
		}
		if err := s.RunAutomation(ctx, sc.OwnerID, sc.ID, at); err != nil {
			errs = append(errs, fmt.Errorf("automation %s at %s: %w", sc.ID, at.Format(time.RFC3339), err))
		}
	}
	return errors.Join(errs...)
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
