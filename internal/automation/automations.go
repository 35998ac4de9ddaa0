package automation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/work"
)

// Input is an automation to create or an edit: the instruction and either a schedule (cron
// or words) or an event (a mail matching MailFrom / MailSubject, or a signed webhook).
type Input struct {
	Instruction string `json:"instruction"`
	Schedule    string `json:"schedule,omitempty"`
	MailFrom    string `json:"mail_from,omitempty"`
	MailSubject string `json:"mail_subject,omitempty"`
}

// View is an automation as the faces show it: its next three runs and its last run.
type View struct {
	store.Automation
	Next     []time.Time   `json:"next,omitempty"`
	NextText []string      `json:"next_text,omitempty"`
	Last     *store.JobRun `json:"last,omitempty"`
}

// Plan checks an automation's input in the owner's zone and words it for a card: what runs
// and when, with its next runs. It stores nothing.
func (s *Service) Plan(ctx context.Context, ownerID uuid.UUID, in Input) (store.NewAutomation, string, error) {
	n, sc, err := s.plan(ctx, ownerID, in)
	if err != nil {
		return n, "", err
	}
	if n.Kind == store.AutomationMail {
		return n, fmt.Sprintf("when a new mail arrives%s: %s", mailWords(n.MailFrom, n.MailSubject), tools.Quote(n.Instruction)), nil
	}
	var next []string
	for _, t := range sc.NextN(s.Now.Now(), 3) {
		next = append(next, Describe(t, sc.Location()))
	}
	return n, fmt.Sprintf("%s (%s): %s; next: %s", scheduleWords(n), n.Timezone, tools.Quote(n.Instruction), strings.Join(next, "; ")), nil
}

func scheduleWords(n store.NewAutomation) string {
	if n.Words != "" {
		return n.Words + " [" + n.Cron + "]"
	}
	return n.Cron
}

func mailWords(from, subject string) string {
	var p []string
	if from != "" {
		p = append(p, "from "+tools.Quote(from))
	}
	if subject != "" {
		p = append(p, "with a subject containing "+tools.Quote(subject))
	}
	return " " + strings.Join(p, " ")
}

func (s *Service) plan(ctx context.Context, ownerID uuid.UUID, in Input) (store.NewAutomation, Schedule, error) {
	n := store.NewAutomation{Instruction: strings.TrimSpace(in.Instruction), MailFrom: strings.TrimSpace(in.MailFrom),
		MailSubject: strings.TrimSpace(in.MailSubject), Since: s.Now.Now()}
	if err := tools.CheckLength("instruction", n.Instruction, 1, MaxInstruction); err != nil {
		return n, Schedule{}, invalid("%v", err)
	}
	if len(n.MailFrom) > 200 || len(n.MailSubject) > 200 {
		return n, Schedule{}, invalid("mail_from and mail_subject are at most 200 characters")
	}
	loc, err := s.Zone(ctx, ownerID)
	if err != nil {
		return n, Schedule{}, err
	}
	n.Timezone = loc.String()
	event := n.MailFrom != "" || n.MailSubject != ""
	switch {
	case event && strings.TrimSpace(in.Schedule) != "":
		return n, Schedule{}, invalid("give a schedule or a mail to match, not both")
	case event:
		n.Kind = store.AutomationMail
		return n, Schedule{}, nil
	}
	sc, err := ParseSchedule(in.Schedule, n.Timezone)
	if err != nil {
		return n, Schedule{}, err
	}
	if gap, min := sc.Shortest(s.Now.Now()), s.limits().MinInterval; gap < min {
		return n, Schedule{}, invalid("schedule %q runs every %s; the shortest allowed is every %s (STEWARD_AUTOMATION_MIN_INTERVAL)",
			in.Schedule, gap, min)
	}
	n.Kind, n.Cron, n.Words = store.AutomationSchedule, sc.Cron(), sc.Words
	return n, sc, nil
}

// CreateAutomation stores an active automation.
func (s *Service) CreateAutomation(ctx context.Context, ownerID uuid.UUID, in Input) (View, error) {
	n, _, err := s.plan(ctx, ownerID, in)
	if err != nil {
		return View{}, err
	}
	var a store.Automation
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if err := s.roomFor(ctx, tx); err != nil {
			return err
		}
		if a, err = tx.Automations().Create(ctx, n); err != nil {
			return err
		}
		return enqueueNext(ctx, tx, a, s.Now.Now())
	})
	if err != nil {
		return View{}, err
	}
	return s.view(a, nil), nil
}

// roomFor refuses one more active automation over the limit.
func (s *Service) roomFor(ctx context.Context, tx *store.Tx) error {
	n, err := tx.Automations().Active(ctx)
	if err != nil {
		return err
	}
	if max := s.limits().MaxAutomations; n >= max {
		return steward.Errorf(steward.CodeInvalid, "you have %d active automations, the most allowed (STEWARD_AUTOMATIONS_MAX); pause or delete one first", max)
	}
	return nil
}

func (s *Service) view(a store.Automation, last *store.JobRun) View {
	v := View{Automation: a, Last: last}
	if a.Kind != store.AutomationSchedule || a.Status != store.AutomationActive {
		return v
	}
	if sc, err := ParseSchedule(a.Cron, a.Timezone); err == nil {
		v.Next = sc.NextN(s.Now.Now(), 3)
		for _, t := range v.Next {
			v.NextText = append(v.NextText, Describe(t, sc.Location()))
		}
	}
	return v
}

// ListAutomations lists the owner's automations with their next runs and last run.
func (s *Service) ListAutomations(ctx context.Context, ownerID uuid.UUID) ([]View, error) {
	var out []View
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		as, err := tx.Automations().List(ctx, 500)
		if err != nil {
			return err
		}
		for _, a := range as {
			runs, err := tx.Automations().Runs(ctx, a.ID, 1)
			if err != nil {
				return err
			}
			var last *store.JobRun
			if len(runs) > 0 {
				last = &runs[0]
			}
			out = append(out, s.view(a, last))
		}
		return nil
	})
	return out, err
}

// GetAutomation returns one automation with its next runs and last run.
func (s *Service) GetAutomation(ctx context.Context, ownerID, id uuid.UUID) (View, error) {
	var v View
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		a, err := tx.Automations().Get(ctx, id)
		if err != nil {
			return missing(id, err)
		}
		runs, err := tx.Automations().Runs(ctx, a.ID, 1)
		if err != nil {
			return err
		}
		var last *store.JobRun
		if len(runs) > 0 {
			last = &runs[0]
		}
		v = s.view(a, last)
		return nil
	})
	return v, err
}

func missing(id uuid.UUID, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return steward.Errorf(steward.CodeNotFound, "no automation %s", id)
	}
	return err
}

// Pause pauses an automation; it runs no more until resumed.
func (s *Service) Pause(ctx context.Context, ownerID, id uuid.UUID) (View, error) {
	return s.setStatus(ctx, ownerID, id, store.AutomationPaused, "paused by you")
}

// Resume resumes a paused automation: its runs start again from now (what it missed while
// paused does not run), within the limit of active automations.
func (s *Service) Resume(ctx context.Context, ownerID, id uuid.UUID) (View, error) {
	return s.setStatus(ctx, ownerID, id, store.AutomationActive, "")
}

func (s *Service) setStatus(ctx context.Context, ownerID, id uuid.UUID, status, reason string) (View, error) {
	var a store.Automation
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		old, err := tx.Automations().Get(ctx, id)
		if err != nil {
			return missing(id, err)
		}
		if status == store.AutomationActive && old.Status != store.AutomationActive {
			if err := s.roomFor(ctx, tx); err != nil {
				return err
			}
		}
		if a, err = tx.Automations().SetStatus(ctx, id, status, reason, s.Now.Now()); err != nil || status != store.AutomationActive {
			return err
		}
		return enqueueNext(ctx, tx, a, s.Now.Now())
	})
	if err != nil {
		return View{}, err
	}
	return s.view(a, nil), nil
}

// Edit replaces an automation's instruction and schedule (an empty field keeps its value);
// its runs are searched from now on.
func (s *Service) Edit(ctx context.Context, ownerID, id uuid.UUID, in Input) (View, error) {
	var a store.Automation
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		a, err = tx.Automations().Get(ctx, id)
		return missing(id, err)
	})
	if err != nil {
		return View{}, err
	}
	if a.Kind != store.AutomationSchedule {
		return View{}, invalid("only a scheduled automation can be edited; delete this one and create another")
	}
	if strings.TrimSpace(in.Instruction) == "" {
		in.Instruction = a.Instruction
	}
	if strings.TrimSpace(in.Schedule) == "" {
		in.Schedule = a.Cron
		if a.Words != "" {
			in.Schedule = a.Words
		}
	}
	n, _, err := s.plan(ctx, ownerID, in)
	if err != nil {
		return View{}, err
	}
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		if a, err = tx.Automations().Edit(ctx, id, n.Instruction, n.Cron, n.Words, n.Timezone, s.Now.Now()); err != nil {
			return missing(id, err)
		}
		if a.Status != store.AutomationActive {
			return nil
		}
		return enqueueNext(ctx, tx, a, s.Now.Now())
	})
	if err != nil {
		return View{}, err
	}
	return s.view(a, nil), nil
}

// Delete deletes an automation; its runs stay in the history.
func (s *Service) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	return s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error { return missing(id, tx.Automations().Delete(ctx, id)) })
}

// enqueueNext makes an active scheduled automation's next run after after a work item
// keyed by the automation and that time (RunKey): the item, the run's claim and the worker's
// checks make one run per scheduled time, however many times it is enqueued or taken.
func enqueueNext(ctx context.Context, tx *store.Tx, a store.Automation, after time.Time) error {
	if a.Kind != store.AutomationSchedule || a.Status != store.AutomationActive {
		return nil
	}
	sc, err := ParseSchedule(a.Cron, a.Timezone)
	if err != nil {
		return err
	}
	next := sc.Next(after)
	if next.IsZero() {
		return nil
	}
	return work.Enqueue(ctx, tx, AutomationKind, a.OwnerID, RunKey(a.ID, next), next)
}

// RunKey is the work item key of an automation's run at at: "<id>@<RFC 3339 UTC>".
func RunKey(id uuid.UUID, at time.Time) string {
	return id.String() + "@" + at.UTC().Format(time.RFC3339)
}

// parseRunKey reads a RunKey.
func parseRunKey(key string) (uuid.UUID, time.Time, error) {
	ids, ats, ok := strings.Cut(key, "@")
	id, err := uuid.Parse(ids)
	if err != nil || !ok {
		return uuid.Nil, time.Time{}, fmt.Errorf("automation run key %q", key)
	}
	at, err := time.Parse(time.RFC3339, ats)
	return id, at, err
}
