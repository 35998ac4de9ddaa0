// Package automationtools is the reminders and automations toolset (docs/AUTOMATIONS.md):
// create_reminder, cancel_reminder, create_automation, edit_automation, pause_automation,
// resume_automation and delete_automation (writes) and list_reminders and list_automations
// (reads), over the owner's service (internal/automation, through the Automations port).
//
// Every write is External: what it sets acts later, outside the turn — a notification at a
// time, a turn on a schedule — so it is journaled executing before it runs, runs once, is
// never on an "always" rule, and in a tainted turn asks with the reason tainted whatever a
// rule or auto mode says: a stranger's mail cannot plant a reminder or a recurring
// instruction (docs/ARCHITECTURE.md §3). Its card (Preview) shows the resolved time in the
// owner's zone and in UTC, and a schedule's next runs.
package automationtools

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Automations is the owner's reminders and automations (internal/app adapts
// internal/automation.Service to it). Outputs are JSON-able views.
type Automations interface {
	// WhenReminder words when at falls in the owner's zone, for a card.
	WhenReminder(ctx context.Context, ownerID uuid.UUID, at string) (string, error)
	CreateReminder(ctx context.Context, ownerID uuid.UUID, text, at string, turnID uuid.UUID) (any, error)
	ListReminders(ctx context.Context, ownerID uuid.UUID) (any, error)
	CancelReminder(ctx context.Context, ownerID, id uuid.UUID) (any, error)
	// PlanAutomation words what an automation would do and when, for a card.
	PlanAutomation(ctx context.Context, ownerID uuid.UUID, a Automation) (string, error)
	CreateAutomation(ctx context.Context, ownerID uuid.UUID, a Automation) (any, error)
	ListAutomations(ctx context.Context, ownerID uuid.UUID) (any, error)
	EditAutomation(ctx context.Context, ownerID, id uuid.UUID, a Automation) (any, error)
	SetAutomation(ctx context.Context, ownerID, id uuid.UUID, op string) (any, error)
}

// Automation is an automation as the tools give it.
type Automation struct {
	Instruction, Schedule, MailFrom, MailSubject string
}

// The operations of SetAutomation.
const (
	OpPause  = "pause"
	OpResume = "resume"
	OpDelete = "delete"
)

// Tools returns the toolset over a.
func Tools(a Automations) []tools.Tool {
	out := []tools.Tool{createReminderTool(a), listRemindersTool(a), cancelReminderTool(a),
		createAutomationTool(a), listAutomationsTool(a), editAutomationTool(a),
		setAutomationTool(a, OpPause), setAutomationTool(a, OpResume), setAutomationTool(a, OpDelete)}
	for i := range out {
		if out[i].Kind == steward.KindWrite {
			out[i].External = true
		}
	}
	return out
}

func need(a Automations) error {
	if a == nil {
		return tools.Refusedf("reminders and automations are not available here")
	}
	return nil
}

type createReminderArgs struct {
	Text string `json:"text" jsonschema:"what to remind the owner of, at most 500 characters"`
	At   string `json:"at" jsonschema:"when: RFC 3339 (2026-12-24T17:00:00+01:00) or the owner's words read in their time zone: 17:00, 5 pm, tomorrow 9:00, monday 8:00, in 20 minutes"`
}

func (a *createReminderArgs) Check() error {
	a.Text, a.At = strings.TrimSpace(a.Text), strings.TrimSpace(a.At)
	if err := tools.CheckLength("text", a.Text, 1, 500); err != nil {
		return err
	}
	return tools.CheckLength("at", a.At, 1, 100)
}

func createReminderTool(svc Automations) tools.Tool {
	t := tools.New("create_reminder",
		"Remind the owner of something at a time: a notification on their default channel then. Use it for \"remind me at/in …\"; a task with a due date notifies nobody.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a createReminderArgs) (any, error) {
			if err := need(svc); err != nil {
				return nil, err
			}
			r, err := svc.CreateReminder(ctx, env.OwnerID, a.Text, a.At, env.TurnID)
			if err != nil {
				return nil, argOr(ctx, "at", err)
			}
			return map[string]any{"reminder": r}, nil
		})
	t = tools.WithPreview(t, func(ctx context.Context, env tools.Env, a createReminderArgs) (string, error) {
		if err := need(svc); err != nil {
			return "", err
		}
		when, err := svc.WhenReminder(ctx, env.OwnerID, a.At)
		if err != nil {
			return "", argOr(ctx, "at", err)
		}
		return "Remind you " + when + ": " + tools.Quote(a.Text), nil
	})
	return tools.Say(t, func(a createReminderArgs) string {
		return "Remind you " + tools.Clip(a.At, 40) + ": " + tools.Quote(a.Text)
	}, func(a createReminderArgs, o struct {
		Reminder struct {
			When string `json:"when"`
		} `json:"reminder"`
	}) string {
		if o.Reminder.When == "" {
			return "Reminder set"
		}
		return "Reminder set for " + tools.Clip(o.Reminder.When, 60)
	})
}

// argOr is tools.ServiceError on field: an invalid input is an ArgError the model corrects.
func argOr(ctx context.Context, field string, err error) error {
	return tools.ServiceError(ctx, field, err)
}

type noArgs struct{}

func listRemindersTool(svc Automations) tools.Tool {
	t := tools.New("list_reminders", "List the owner's pending reminders with their times.", steward.KindRead,
		func(ctx context.Context, env tools.Env, _ noArgs) (any, error) {
			if err := need(svc); err != nil {
				return nil, err
			}
			rs, err := svc.ListReminders(ctx, env.OwnerID)
			if err != nil {
				return nil, tools.ServiceError(ctx, "id", err)
			}
			return map[string]any{"reminders": rs}, nil
		})
	return tools.Say(t, func(noArgs) string { return "List your reminders" }, func(_ noArgs, o struct {
		Reminders []struct{} `json:"reminders"`
	}) string {
		return "Found " + tools.Count(len(o.Reminders), "pending reminder")
	})
}

type idArgs struct {
	ID string `json:"id" jsonschema:"the id, as listed"`
	id uuid.UUID
}

func (a *idArgs) Check() error {
	id, err := uuid.Parse(strings.TrimSpace(a.ID))
	if err != nil {
		return tools.ArgErrorf("id", "%s is not an id (a UUID as listed)", tools.QuoteValue(a.ID))
	}
	a.id = id
	return nil
}

func cancelReminderTool(svc Automations) tools.Tool {
	t := tools.New("cancel_reminder", "Cancel one of the owner's pending reminders.", steward.KindWrite,
		func(ctx context.Context, env tools.Env, a idArgs) (any, error) {
			if err := need(svc); err != nil {
				return nil, err
			}
			r, err := svc.CancelReminder(ctx, env.OwnerID, a.id)
			if err != nil {
				return nil, tools.ServiceError(ctx, "id", err)
			}
			return map[string]any{"reminder": r}, nil
		})
	return tools.Say(t, func(a idArgs) string { return "Cancel reminder " + tools.Clip(a.ID, 8) },
		func(_ idArgs, o struct {
			Reminder struct {
				Text string `json:"text"`
			} `json:"reminder"`
		}) string {
			return "Cancelled reminder " + tools.Quote(o.Reminder.Text)
		})
}

type automationArgs struct {
	Instruction string `json:"instruction" jsonschema:"what Steward does at each run, in the owner's words, at most 2000 characters (e.g. tell me my first meeting and the weather)"`
	Schedule    string `json:"schedule,omitempty" jsonschema:"when it runs, read in the owner's time zone: cron with five fields (30 7 * * 1-5) or words (every weekday at 7:30, every monday and thursday at 9, every first monday of the month at 9, every 2 hours); at least 15 minutes apart"`
	MailFrom    string `json:"mail_from,omitempty" jsonschema:"instead of a schedule: run once for each new mail whose sender contains this"`
	MailSubject string `json:"mail_subject,omitempty" jsonschema:"instead of a schedule: run once for each new mail whose subject contains this"`
}

func (a *automationArgs) Check() error {
	a.Instruction, a.Schedule = strings.TrimSpace(a.Instruction), strings.TrimSpace(a.Schedule)
	a.MailFrom, a.MailSubject = strings.TrimSpace(a.MailFrom), strings.TrimSpace(a.MailSubject)
	if err := tools.CheckLength("instruction", a.Instruction, 1, 2000); err != nil {
		return err
	}
	if a.Schedule == "" && a.MailFrom == "" && a.MailSubject == "" {
		return tools.ArgErrorf("schedule", "give a schedule (cron or words such as \"every weekday at 7:30\") or a mail to match (mail_from, mail_subject)")
	}
	return tools.CheckLength("schedule", a.Schedule, 0, 200)
}

func (a automationArgs) automation() Automation {
	return Automation(a)
}

func sayWhen(a automationArgs) string {
	switch {
	case a.Schedule != "":
		return tools.Clip(a.Schedule, 40)
	case a.MailFrom != "":
		return "on mail from " + tools.Clip(a.MailFrom, 40)
	}
	return "on mail about " + tools.Quote(a.MailSubject)
}

func createAutomationTool(svc Automations) tools.Tool {
	t := tools.New("create_automation",
		"Create an automation: an instruction Steward runs by itself on a schedule (\"every weekday at 7:30 tell me …\") or for each new mail matching a sender or subject; its answer goes to the owner's default channel. For a one-time note at a time, use create_reminder.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a automationArgs) (any, error) {
			if err := need(svc); err != nil {
				return nil, err
			}
			v, err := svc.CreateAutomation(ctx, env.OwnerID, a.automation())
			if err != nil {
				return nil, argOr(ctx, "schedule", err)
			}
			return map[string]any{"automation": v}, nil
		})
	t = tools.WithPreview(t, func(ctx context.Context, env tools.Env, a automationArgs) (string, error) {
		if err := need(svc); err != nil {
			return "", err
		}
		s, err := svc.PlanAutomation(ctx, env.OwnerID, a.automation())
		if err != nil {
			return "", argOr(ctx, "schedule", err)
		}
		return "Create an automation " + s, nil
	})
	return tools.Say(t, func(a automationArgs) string {
		return "Create an automation " + sayWhen(a) + ": " + tools.Quote(a.Instruction)
	}, func(a automationArgs, _ struct{}) string { return "Automation created: " + tools.Quote(a.Instruction) })
}

func listAutomationsTool(svc Automations) tools.Tool {
	t := tools.New("list_automations", "List the owner's automations with their schedules, next runs and last result.", steward.KindRead,
		func(ctx context.Context, env tools.Env, _ noArgs) (any, error) {
			if err := need(svc); err != nil {
				return nil, err
			}
			v, err := svc.ListAutomations(ctx, env.OwnerID)
			if err != nil {
				return nil, tools.ServiceError(ctx, "", err)
			}
			return map[string]any{"automations": v}, nil
		})
	return tools.Say(t, func(noArgs) string { return "List your automations" }, func(_ noArgs, o struct {
		Automations []struct{} `json:"automations"`
	}) string {
		return "Found " + tools.Count(len(o.Automations), "automation")
	})
}

type editArgs struct {
	ID          string `json:"id" jsonschema:"the automation's id, as listed"`
	Instruction string `json:"instruction,omitempty" jsonschema:"the new instruction; empty keeps it"`
	Schedule    string `json:"schedule,omitempty" jsonschema:"the new schedule (cron or words); empty keeps it"`
	id          uuid.UUID
}

func (a *editArgs) Check() error {
	ida := idArgs{ID: a.ID}
	if err := ida.Check(); err != nil {
		return err
	}
	a.id = ida.id
	a.Instruction, a.Schedule = strings.TrimSpace(a.Instruction), strings.TrimSpace(a.Schedule)
	if a.Instruction == "" && a.Schedule == "" {
		return tools.ArgErrorf("schedule", "give a new instruction or a new schedule")
	}
	if err := tools.CheckLength("instruction", a.Instruction, 0, 2000); err != nil {
		return err
	}
	return tools.CheckLength("schedule", a.Schedule, 0, 200)
}

func editAutomationTool(svc Automations) tools.Tool {
	t := tools.New("edit_automation", "Change an automation's instruction or schedule.", steward.KindWrite,
		func(ctx context.Context, env tools.Env, a editArgs) (any, error) {
			if err := need(svc); err != nil {
				return nil, err
			}
			v, err := svc.EditAutomation(ctx, env.OwnerID, a.id, Automation{Instruction: a.Instruction, Schedule: a.Schedule})
			if err != nil {
				return nil, argOr(ctx, "schedule", err)
			}
			return map[string]any{"automation": v}, nil
		})
	return tools.Say(t, func(a editArgs) string {
		s := "Change automation " + tools.Clip(a.ID, 8)
		if a.Schedule != "" {
			s += " to run " + tools.Clip(a.Schedule, 40)
		}
		if a.Instruction != "" {
			s += ": " + tools.Quote(a.Instruction)
		}
		return s
	}, func(editArgs, struct{}) string { return "Automation changed" })
}

var opWords = map[string][3]string{
	OpPause:  {"Pause an automation so it runs no more until resumed.", "Pause automation ", "Automation paused"},
	OpResume: {"Resume a paused automation; what it missed while paused does not run.", "Resume automation ", "Automation resumed"},
	OpDelete: {"Delete an automation; its past runs stay in the history.", "Delete automation ", "Automation deleted"},
}

func setAutomationTool(svc Automations, op string) tools.Tool {
	w := opWords[op]
	t := tools.New(op+"_automation", w[0], steward.KindWrite,
		func(ctx context.Context, env tools.Env, a idArgs) (any, error) {
			if err := need(svc); err != nil {
				return nil, err
			}
			v, err := svc.SetAutomation(ctx, env.OwnerID, a.id, op)
			if err != nil {
				return nil, tools.ServiceError(ctx, "id", err)
			}
			return map[string]any{"automation": v}, nil
		})
	return tools.Say(t, func(a idArgs) string { return w[1] + tools.Clip(a.ID, 8) }, func(idArgs, struct{}) string { return w[2] })
}
