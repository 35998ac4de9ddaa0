package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/automation"
	"github.com/stewardhq/steward/internal/tools/automationtools"
)

// automationPort is the reminders and automations toolset's port over the service.
type automationPort struct{ s *automation.Service }

var _ automationtools.Automations = automationPort{}

func (p automationPort) WhenReminder(ctx context.Context, ownerID uuid.UUID, at string) (string, error) {
	_, when, err := p.s.Resolve(ctx, ownerID, at)
	return when, err
}

func (p automationPort) CreateReminder(ctx context.Context, ownerID uuid.UUID, text, at string, turnID uuid.UUID) (any, error) {
	var t *uuid.UUID
	if turnID != uuid.Nil {
		t = &turnID
	}
	return p.s.CreateReminder(ctx, ownerID, text, at, t)
}

func (p automationPort) ListReminders(ctx context.Context, ownerID uuid.UUID) (any, error) {
	return p.s.ListReminders(ctx, ownerID, false)
}

func (p automationPort) CancelReminder(ctx context.Context, ownerID, id uuid.UUID) (any, error) {
	return p.s.CancelReminder(ctx, ownerID, id)
}

func input(a automationtools.Automation) automation.Input {
	return automation.Input{Instruction: a.Instruction, Schedule: a.Schedule, MailFrom: a.MailFrom, MailSubject: a.MailSubject}
}

func (p automationPort) PlanAutomation(ctx context.Context, ownerID uuid.UUID, a automationtools.Automation) (string, error) {
	_, words, err := p.s.Plan(ctx, ownerID, input(a))
	return words, err
}

func (p automationPort) CreateAutomation(ctx context.Context, ownerID uuid.UUID, a automationtools.Automation) (any, error) {
	return p.s.CreateAutomation(ctx, ownerID, input(a))
}

func (p automationPort) ListAutomations(ctx context.Context, ownerID uuid.UUID) (any, error) {
	return p.s.ListAutomations(ctx, ownerID)
}

func (p automationPort) EditAutomation(ctx context.Context, ownerID, id uuid.UUID, a automationtools.Automation) (any, error) {
	return p.s.Edit(ctx, ownerID, id, input(a))
}

func (p automationPort) SetAutomation(ctx context.Context, ownerID, id uuid.UUID, op string) (any, error) {
	switch op {
	case automationtools.OpPause:
		return p.s.Pause(ctx, ownerID, id)
	case automationtools.OpResume:
		return p.s.Resume(ctx, ownerID, id)
	}
	return map[string]any{"id": id, "deleted": true}, p.s.Delete(ctx, ownerID, id)
}

// dueEvery is how often `steward serve` drains the work spine, so a reminder or an
// automation's run fires within it of its time (docs/AUTOMATIONS.md, "Firing"); the
// minute tick drains it too.
const dueEvery = 10 * time.Second

// fireDue drains the work spine now and every dueEvery until ctx ends.
func (a *App) fireDue(ctx context.Context) {
	t := time.NewTicker(dueEvery)
	defer t.Stop()
	for {
		if err := a.Work.Drain(ctx); err != nil && ctx.Err() == nil {
			a.Logger.Warn().Err(err).Msg("firing due reminders and automations failed; retried in seconds")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// dueAhead is how far past now the one-minute tick on Lambda looks for a reminder to wait
// for within its invocation: the next tick takes what falls due after it.
const dueAhead = 55 * time.Second

// dueTick is the scheduler's {"due":true} event, EventBridge's one-minute tick on Lambda
// (docs/ARCHITECTURE.md §10): it drains the work spine, then waits for each reminder due
// before the next tick and drains again at its time, so a reminder fires within seconds of
// it, not within a minute.
func (a *App) dueTick(ctx context.Context) error {
	end := a.Now().Add(dueAhead)
	for range 20 {
		if err := a.Work.Drain(ctx); err != nil {
			return err
		}
		next, ok, err := a.Due.NextReminder(ctx, end)
		if err != nil || !ok {
			return err
		}
		wait := time.Until(next) // the wall clock: this sleeps for real
		if wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
	}
	return nil
}
