package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/db"
)

// Reminder is a note the owner asked to be told at a time (docs/AUTOMATIONS.md).
type Reminder struct {
	ID       uuid.UUID `json:"id"`
	OwnerID  uuid.UUID `json:"owner_id"`
	Text     string    `json:"text"`
	DueAt    time.Time `json:"due_at"`
	Timezone string    `json:"timezone"`
	// Status is pending, fired or cancelled.
	Status       string     `json:"status"`
	SourceTurnID *uuid.UUID `json:"source_turn_id,omitempty"`
	FiredAt      *time.Time `json:"fired_at,omitempty"`
	// Late is set when the reminder fired after its time (the system was down).
	Late      bool      `json:"late,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Reminder statuses.
const (
	ReminderPending   = "pending"
	ReminderFired     = "fired"
	ReminderCancelled = "cancelled"
)

// NewReminder is a reminder to store (validated by internal/automation).
type NewReminder struct {
	Text, Timezone string
	DueAt          time.Time
	SourceTurnID   *uuid.UUID
}

// Automation is an instruction Steward runs on a schedule or an event.
type Automation struct {
	ID          uuid.UUID `json:"id"`
	OwnerID     uuid.UUID `json:"owner_id"`
	Instruction string    `json:"instruction"`
	// Kind is schedule, mail or webhook.
	Kind         string    `json:"kind"`
	Cron         string    `json:"cron,omitempty"`
	Words        string    `json:"words,omitempty"`
	Timezone     string    `json:"timezone"`
	MailFrom     string    `json:"mail_from,omitempty"`
	MailSubject  string    `json:"mail_subject,omitempty"`
	HookID       string    `json:"hook_id,omitempty"`
	Status       string    `json:"status"`
	PausedReason string    `json:"paused_reason,omitempty"`
	Failures     int       `json:"failures"`
	Since        time.Time `json:"-"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// Automation kinds and statuses.
const (
	AutomationSchedule = "schedule"
	AutomationMail     = "mail"
	AutomationWebhook  = "webhook"
	AutomationActive   = "active"
	AutomationPaused   = "paused"
)

// AutomationJob is the job_runs.job of an automation's runs.
func AutomationJob(id uuid.UUID) string { return "automation:" + id.String() }

// NewAutomation is an automation to store (validated by internal/automation).
type NewAutomation struct {
	Instruction, Kind, Cron, Words, Timezone string
	MailFrom, MailSubject, HookID            string
	Since                                    time.Time
}

type (
	Reminders   struct{ *conn } // the owner's reminders
	Automations struct{ *conn } // the owner's automations
)

// Reminders is this transaction's reminders repository.
func (t *Tx) Reminders() Reminders { return Reminders{t.conn} }

// Automations is this transaction's automations repository.
func (t *Tx) Automations() Automations { return Automations{t.conn} }

// Timezone is the owner's IANA time zone ("UTC" until set).
func (t Account) Timezone(ctx context.Context) (string, error) {
	tz, err := t.q.OwnerTimezone(ctx, t.ownerID)
	if err != nil {
		return "", notFound("owner time zone", err)
	}
	return tz, nil
}

// SetTimezone sets the owner's time zone (validated by the caller).
func (t Account) SetTimezone(ctx context.Context, tz string) error {
	n, err := t.q.SetOwnerTimezone(ctx, db.SetOwnerTimezoneParams{ID: t.ownerID, Timezone: tz})
	return rowsOrNotFound("set owner time zone", n, err)
}

// Create stores a pending reminder.
func (t Reminders) Create(ctx context.Context, n NewReminder) (Reminder, error) {
	r, err := t.q.CreateReminder(ctx, db.CreateReminderParams{OwnerID: t.ownerID, Text: n.Text, DueAt: n.DueAt,
		Timezone: n.Timezone, SourceTurnID: nullUUID(n.SourceTurnID)})
	if err != nil {
		return Reminder{}, notFound("create reminder", err)
	}
	return toReminder(r), nil
}

// Pending counts the owner's pending reminders.
func (t Reminders) Pending(ctx context.Context) (int, error) {
	n, err := t.q.CountPendingReminders(ctx, t.ownerID)
	if err != nil {
		return 0, fmt.Errorf("count reminders: %w", err)
	}
	return int(n), nil
}

// List lists the pending reminders, soonest first, and with all the fired and cancelled
// ones after them, latest first; at most limit.
func (t Reminders) List(ctx context.Context, all bool, limit int) ([]Reminder, error) {
	rows, err := t.q.ListReminders(ctx, db.ListRemindersParams{OwnerID: t.ownerID, AllStatuses: all, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list reminders: %w", err)
	}
	out := make([]Reminder, len(rows))
	for i, r := range rows {
		out[i] = toReminder(r)
	}
	return out, nil
}

// Get returns one reminder; ErrNotFound when there is none.
func (t Reminders) Get(ctx context.Context, id uuid.UUID) (Reminder, error) {
	r, err := t.q.GetReminder(ctx, db.GetReminderParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return Reminder{}, notFound("reminder", err)
	}
	return toReminder(r), nil
}

// Cancel cancels a pending reminder; ErrNotFound when there is no pending one.
func (t Reminders) Cancel(ctx context.Context, id uuid.UUID) (Reminder, error) {
	r, err := t.q.CancelReminder(ctx, db.CancelReminderParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return Reminder{}, notFound("cancel reminder", err)
	}
	return toReminder(r), nil
}

// Fire marks a due, pending reminder fired: the one claim of its firing. ErrNotFound when it
// is not pending or not yet due.
func (t Reminders) Fire(ctx context.Context, id uuid.UUID, now time.Time, late bool) (Reminder, error) {
	r, err := t.q.FireReminder(ctx, db.FireReminderParams{OwnerID: t.ownerID, ID: id, Now: now, Late: late})
	if err != nil {
		return Reminder{}, notFound("fire reminder", err)
	}
	return toReminder(r), nil
}

func toReminder(r db.Reminder) Reminder {
	return Reminder{ID: r.ID, OwnerID: r.OwnerID, Text: r.Text, DueAt: r.DueAt, Timezone: r.Timezone, Status: r.Status,
		SourceTurnID: ptrUUID(r.SourceTurnID), FiredAt: r.FiredAt, Late: r.Late, CreatedAt: r.CreatedAt}
}

// Create stores an active automation.
func (t Automations) Create(ctx context.Context, n NewAutomation) (Automation, error) {
	r, err := t.q.CreateAutomation(ctx, db.CreateAutomationParams{OwnerID: t.ownerID, Instruction: n.Instruction, Kind: n.Kind,
		Cron: n.Cron, Words: n.Words, Timezone: n.Timezone, MailFrom: n.MailFrom, MailSubject: n.MailSubject, HookID: n.HookID, Since: n.Since})
	if err != nil {
		return Automation{}, notFound("create automation", err)
	}
	return toAutomation(r), nil
}

// Active counts the owner's active automations.
func (t Automations) Active(ctx context.Context) (int, error) {
	n, err := t.q.CountActiveAutomations(ctx, t.ownerID)
	if err != nil {
		return 0, fmt.Errorf("count automations: %w", err)
	}
	return int(n), nil
}

// List lists the owner's automations, oldest first, at most limit.
func (t Automations) List(ctx context.Context, limit int) ([]Automation, error) {
	rows, err := t.q.ListAutomations(ctx, db.ListAutomationsParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list automations: %w", err)
	}
	out := make([]Automation, len(rows))
	for i, r := range rows {
		out[i] = toAutomation(r)
	}
	return out, nil
}

// Get returns one automation; ErrNotFound when there is none.
func (t Automations) Get(ctx context.Context, id uuid.UUID) (Automation, error) {
	r, err := t.q.GetAutomation(ctx, db.GetAutomationParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return Automation{}, notFound("automation", err)
	}
	return toAutomation(r), nil
}

// SetStatus pauses (with a reason) or resumes an automation; a resumed one searches its due
// times from now.
func (t Automations) SetStatus(ctx context.Context, id uuid.UUID, status, reason string, now time.Time) (Automation, error) {
	r, err := t.q.SetAutomationStatus(ctx, db.SetAutomationStatusParams{OwnerID: t.ownerID, ID: id, Status: status, PausedReason: reason, Now: now})
	if err != nil {
		return Automation{}, notFound("automation", err)
	}
	return toAutomation(r), nil
}

// Edit replaces an automation's instruction and schedule.
func (t Automations) Edit(ctx context.Context, id uuid.UUID, instruction, cron, words, tz string, now time.Time) (Automation, error) {
	r, err := t.q.EditAutomation(ctx, db.EditAutomationParams{OwnerID: t.ownerID, ID: id, Instruction: instruction,
		Cron: cron, Words: words, Timezone: tz, Now: now})
	if err != nil {
		return Automation{}, notFound("automation", err)
	}
	return toAutomation(r), nil
}

// Delete deletes an automation; its runs stay in the history.
func (t Automations) Delete(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.DeleteAutomation(ctx, db.DeleteAutomationParams{OwnerID: t.ownerID, ID: id})
	return rowsOrNotFound("automation", n, err)
}

// RecordOutcome counts a run's failure (or resets the count); at maxFailures in a row the
// automation pauses with reason.
func (t Automations) RecordOutcome(ctx context.Context, id uuid.UUID, failed bool, maxFailures int, reason string) (Automation, error) {
	r, err := t.q.RecordAutomationOutcome(ctx, db.RecordAutomationOutcomeParams{OwnerID: t.ownerID, ID: id, Failed: failed,
		MaxFailures: int32(maxFailures), Reason: reason})
	if err != nil {
		return Automation{}, notFound("automation", err)
	}
	return toAutomation(r), nil
}

// Runs lists an automation's latest runs, newest first.
func (t Automations) Runs(ctx context.Context, id uuid.UUID, limit int) ([]JobRun, error) {
	rows, err := t.q.ListAutomationRuns(ctx, db.ListAutomationRunsParams{OwnerID: t.ownerID, Job: AutomationJob(id), MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("automation runs: %w", err)
	}
	out := make([]JobRun, len(rows))
	for i, r := range rows {
		out[i] = toRun(r)
	}
	return out, nil
}

func toAutomation(r db.Automation) Automation {
	return Automation{ID: r.ID, OwnerID: r.OwnerID, Instruction: r.Instruction, Kind: r.Kind, Cron: r.Cron, Words: r.Words,
		Timezone: r.Timezone, MailFrom: r.MailFrom, MailSubject: r.MailSubject, HookID: r.HookID, Status: r.Status,
		PausedReason: r.PausedReason, Failures: int(r.Failures), Since: r.Since, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// DueReminder names a pending reminder whose time has come.
type DueReminder struct {
	ID, OwnerID uuid.UUID
	DueAt       time.Time
}

// ScanDueReminders lists up to limit pending reminders due by before, soonest first
// (reminders.door): the Lambda minute tick waits within its invocation for one due before
// the next tick.
func (d *Door) ScanDueReminders(ctx context.Context, before time.Time, limit int) ([]DueReminder, error) {
	rows, err := db.New(d.conn()).ScanDueReminders(ctx, db.ScanDueRemindersParams{Before: before, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("scan due reminders: %w", err)
	}
	out := make([]DueReminder, len(rows))
	for i, r := range rows {
		out[i] = DueReminder(r)
	}
	return out, nil
}
