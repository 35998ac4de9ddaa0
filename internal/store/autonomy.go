package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/db"
)

// Schedule is an owner's scheduled job: a job name, a cron expression read in an IANA time
// zone, and the job's payload.
type Schedule struct {
	ID        uuid.UUID       `json:"id"`
	OwnerID   uuid.UUID       `json:"owner_id"`
	Job       string          `json:"job"`
	Cron      string          `json:"cron"`
	Timezone  string          `json:"timezone"`
	Payload   json.RawMessage `json:"payload"`
	Enabled   bool            `json:"enabled"`
	CreatedAt time.Time       `json:"created_at"`
}

// NewSchedule is a schedule to create (validated by the caller: internal/autonomy).
type NewSchedule struct {
	Job, Cron, Timezone string
	Payload             json.RawMessage
}

// RunStatus is where an autonomous run is in its life.
type RunStatus string

// Run statuses: a webhook run is queued until a worker takes it; a run is running until it
// completes, fails, is skipped (kill switch, budget), aborted (kill switch mid-turn) or
// suspended (a write waits in the approval inbox).
const (
	RunQueued    RunStatus = "queued"
	RunRunning   RunStatus = "running"
	RunCompleted RunStatus = "completed"
	RunFailed    RunStatus = "failed"
	RunSkipped   RunStatus = "skipped"
	RunAborted   RunStatus = "aborted"
	RunSuspended RunStatus = "suspended"
)

// Run triggers: what started an autonomous run.
const (
	RunBySchedule = "schedule"
	RunByWebhook  = "webhook"
	RunByCLI      = "cli"
)

// JobRun is one autonomous run: a scheduled or manual job, or a webhook event.
type JobRun struct {
	ID           uuid.UUID  `json:"run_id"`
	OwnerID      uuid.UUID  `json:"owner_id"`
	ScheduleID   *uuid.UUID `json:"schedule_id,omitempty"`
	Job          string     `json:"job"`
	Trigger      string     `json:"trigger"`
	ScheduledFor time.Time  `json:"scheduled_for"`
	Status       RunStatus  `json:"status"`
	TurnID       *uuid.UUID `json:"turn_id,omitempty"`
	Error        string     `json:"error,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	StartedAt    *time.Time `json:"started_at,omitempty"`
	FinishedAt   *time.Time `json:"finished_at,omitempty"`
}

// NewRun is a run to claim. ID may be preset (webhook deliveries name their run first).
type NewRun struct {
	ID           uuid.UUID
	ScheduleID   *uuid.UUID
	Job          string
	Trigger      string
	ScheduledFor time.Time
	Status       RunStatus // running, skipped or queued
	Error        string
	Now          time.Time
}

// Webhook is an endpoint an outside service posts events to. Its secret is shown once, at
// creation, and is readable afterwards only through the Door (webhook routing).
type Webhook struct {
	ID        uuid.UUID  `json:"id"`
	OwnerID   uuid.UUID  `json:"owner_id"`
	HookID    string     `json:"hook_id"`
	Source    string     `json:"source"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// WebhookEvent is the accepted delivery behind a webhook run.
type WebhookEvent struct {
	MessageID  string
	Source     string
	Body       []byte
	ReceivedAt time.Time
}

// Channel is where an owner's notifications are delivered (internal/channel): a kind
// (webhook, ntfy, telegram, slack, email), its public settings and its sealed secret.
type Channel struct {
	ID        uuid.UUID `json:"id"`
	Name      string    `json:"name"`
	Kind      string    `json:"kind"`
	URL       string    `json:"url,omitempty"`
	Topic     string    `json:"topic,omitempty"`
	Default   bool      `json:"default"`
	Enabled   bool      `json:"enabled"`
	CreatedAt time.Time `json:"created_at"`
	// Settings are the kind's public settings (JSON object).
	Settings json.RawMessage `json:"settings,omitempty"`
	// Secret is the AES-GCM sealed secret; it never leaves the server (json:"-").
	Secret []byte `json:"-"`
	// GoneAt is when the destination said it no longer exists (Channels.MarkGone).
	GoneAt *time.Time `json:"gone_at,omitempty"`
}

// NewChannel is a channel to create; MakeDefault makes it the owner's default (their first
// channel is the default anyway).
type NewChannel struct {
	Name, Kind, URL, Topic string
	Settings               json.RawMessage
	Secret                 []byte
	MakeDefault            bool
}

// Notification is a stored notification with its delivery state.
type Notification struct {
	ID               uuid.UUID  `json:"id"`
	Channel          string     `json:"channel,omitempty"`
	Title            string     `json:"title,omitempty"`
	Message          string     `json:"message"`
	TurnID           *uuid.UUID `json:"turn_id,omitempty"`
	CreatedAt        time.Time  `json:"created_at"`
	DeliveredAt      *time.Time `json:"delivered_at,omitempty"`
	DeliveryAttempts int        `json:"delivery_attempts"`
	DeliveryError    string     `json:"delivery_error,omitempty"`
	// NextDeliveryAt is when delivery is tried next; nil once delivered or given up.
	NextDeliveryAt *time.Time `json:"next_delivery_at,omitempty"`
}

// CreateSchedule adds a schedule; a second schedule for the same job is ErrConflict.
func (t Schedules) Create(ctx context.Context, s NewSchedule) (Schedule, error) {
	r, err := t.q.CreateSchedule(ctx, db.CreateScheduleParams{OwnerID: t.ownerID, Job: s.Job, Cron: s.Cron,
		Timezone: s.Timezone, Payload: jsonOrEmpty(s.Payload), Enabled: true})
	if err != nil {
		return Schedule{}, notFound("create schedule "+s.Job, err)
	}
	return toSchedule(r), nil
}

// Schedules lists the owner's schedules by job name.
func (t Schedules) List(ctx context.Context) ([]Schedule, error) {
	rows, err := t.q.ListSchedules(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	out := make([]Schedule, len(rows))
	for i, r := range rows {
		out[i] = toSchedule(r)
	}
	return out, nil
}

// ScheduleByJob reads the owner's schedule of a job.
func (t Schedules) ByJob(ctx context.Context, job string) (Schedule, error) {
	r, err := t.q.GetScheduleByJob(ctx, db.GetScheduleByJobParams{OwnerID: t.ownerID, Job: job})
	if err != nil {
		return Schedule{}, notFound("schedule "+job, err)
	}
	return toSchedule(r), nil
}

// CountSchedules counts the owner's schedules.
func (t Schedules) Count(ctx context.Context) (int, error) {
	n, err := t.q.CountSchedules(ctx, t.ownerID)
	if err != nil {
		return 0, fmt.Errorf("count schedules: %w", err)
	}
	return int(n), nil
}

// DeleteSchedule removes the owner's schedule of a job; its past runs stay.
func (t Schedules) Delete(ctx context.Context, job string) error {
	n, err := t.q.DeleteSchedule(ctx, db.DeleteScheduleParams{OwnerID: t.ownerID, Job: job})
	return rowsOrNotFound("delete schedule "+job, n, err)
}

func toSchedule(r db.Schedule) Schedule {
	return Schedule{ID: r.ID, OwnerID: r.OwnerID, Job: r.Job, Cron: r.Cron, Timezone: r.Timezone,
		Payload: r.Payload, Enabled: r.Enabled, CreatedAt: r.CreatedAt}
}

// ClaimRun records a run exactly once. For a scheduled run it first locks the schedule with
// SKIP LOCKED (a concurrent tick holding it makes this claim step aside), then inserts with
// ON CONFLICT DO NOTHING on (schedule, scheduled time) and (owner, job, scheduled time).
// claimed is false when another claim got there first; nothing was written then.
func (t Runs) Claim(ctx context.Context, n NewRun) (run JobRun, claimed bool, err error) {
	if n.ScheduleID != nil {
		locked, err := t.q.LockSchedule(ctx, db.LockScheduleParams{OwnerID: t.ownerID, ID: *n.ScheduleID})
		if err != nil {
			return JobRun{}, false, fmt.Errorf("lock schedule: %w", err)
		}
		if len(locked) == 0 {
			return JobRun{}, false, nil
		}
	}
	if n.ID == uuid.Nil {
		n.ID = uuid.New()
	}
	p := db.ClaimRunParams{ID: n.ID, OwnerID: t.ownerID, ScheduleID: nullUUID(n.ScheduleID), Job: n.Job,
		Trigger: n.Trigger, ScheduledFor: n.ScheduledFor, Status: string(n.Status), Error: n.Error}
	now := n.Now
	switch n.Status {
	case RunRunning:
		p.StartedAt = &now
	case RunQueued:
	default:
		p.StartedAt, p.FinishedAt = &now, &now
	}
	r, err := t.q.ClaimRun(ctx, p)
	if errors.Is(err, pgx.ErrNoRows) {
		return JobRun{}, false, nil
	}
	if err != nil {
		return JobRun{}, false, notFound("claim run "+n.Job, err)
	}
	return toRun(r), true, nil
}

// StartQueuedRun moves a queued run to running (or straight to skipped); exactly one caller
// wins, the others get ErrConflict.
func (t Runs) StartQueued(ctx context.Context, id uuid.UUID, status RunStatus, reason string, now time.Time) (JobRun, error) {
	r, err := t.q.StartQueuedRun(ctx, db.StartQueuedRunParams{OwnerID: t.ownerID, ID: id, Status: string(status), Error: reason, Now: &now})
	if errors.Is(err, pgx.ErrNoRows) {
		return JobRun{}, fmt.Errorf("start run %s: not queued: %w", id, ErrConflict)
	}
	if err != nil {
		return JobRun{}, notFound("start run", err)
	}
	return toRun(r), nil
}

// FinishRun records a running run's outcome and the turn it ran.
func (t Runs) Finish(ctx context.Context, id uuid.UUID, status RunStatus, turnID *uuid.UUID, reason string, now time.Time) (JobRun, error) {
	r, err := t.q.FinishRun(ctx, db.FinishRunParams{OwnerID: t.ownerID, ID: id, Status: string(status),
		TurnID: nullUUID(turnID), Error: reason, Now: &now})
	if errors.Is(err, pgx.ErrNoRows) {
		return JobRun{}, fmt.Errorf("finish run %s: not running: %w", id, ErrConflict)
	}
	if err != nil {
		return JobRun{}, notFound("finish run", err)
	}
	return toRun(r), nil
}

// AttachTurn records the turn of a run that stays running: its turn stopped before the
// invocation's deadline (continuing) and finishes in another invocation. A run no longer
// running is ErrConflict.
func (t Runs) AttachTurn(ctx context.Context, id, turnID uuid.UUID) (JobRun, error) {
	r, err := t.q.AttachRunTurn(ctx, db.AttachRunTurnParams{OwnerID: t.ownerID, ID: id, TurnID: uuid.NullUUID{UUID: turnID, Valid: true}})
	if errors.Is(err, pgx.ErrNoRows) {
		return JobRun{}, fmt.Errorf("attach turn to run %s: not running: %w", id, ErrConflict)
	}
	if err != nil {
		return JobRun{}, notFound("attach turn to run", err)
	}
	return toRun(r), nil
}

// RunningOfTurn is the run still running whose turn is turnID; ok is false when there is
// none (the turn is no run's, or its run was finished already).
func (t Runs) RunningOfTurn(ctx context.Context, turnID uuid.UUID) (JobRun, bool, error) {
	r, err := t.q.RunningRunOfTurn(ctx, db.RunningRunOfTurnParams{OwnerID: t.ownerID, TurnID: uuid.NullUUID{UUID: turnID, Valid: true}})
	if errors.Is(err, pgx.ErrNoRows) {
		return JobRun{}, false, nil
	}
	if err != nil {
		return JobRun{}, false, fmt.Errorf("run of turn %s: %w", turnID, err)
	}
	return toRun(r), true, nil
}

// Run reads one run.
func (t Runs) Get(ctx context.Context, id uuid.UUID) (JobRun, error) {
	r, err := t.q.GetRun(ctx, db.GetRunParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return JobRun{}, notFound("run "+id.String(), err)
	}
	return toRun(r), nil
}

// Runs lists the owner's runs, newest first; job "" means every job.
func (t Runs) List(ctx context.Context, job string, limit int) ([]JobRun, error) {
	rows, err := t.q.ListRuns(ctx, db.ListRunsParams{OwnerID: t.ownerID, Job: job, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	out := make([]JobRun, len(rows))
	for i, r := range rows {
		out[i] = toRun(r)
	}
	return out, nil
}

// PreviousRun is the latest run of a job, other than exclude, that completed or suspended;
// ok is false when there is none.
func (t Runs) Previous(ctx context.Context, job string, exclude uuid.UUID) (JobRun, bool, error) {
	r, err := t.q.PreviousRun(ctx, db.PreviousRunParams{OwnerID: t.ownerID, Job: job, ExcludeID: exclude})
	if errors.Is(err, pgx.ErrNoRows) {
		return JobRun{}, false, nil
	}
	if err != nil {
		return JobRun{}, false, fmt.Errorf("previous run of %s: %w", job, err)
	}
	return toRun(r), true, nil
}

func toRun(r db.JobRun) JobRun {
	return JobRun{ID: r.ID, OwnerID: r.OwnerID, ScheduleID: ptrUUID(r.ScheduleID), Job: r.Job, Trigger: r.Trigger,
		ScheduledFor: r.ScheduledFor, Status: RunStatus(r.Status), TurnID: ptrUUID(r.TurnID), Error: r.Error,
		CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
}

// CreateWebhook stores a webhook endpoint. The application role may write the secret but
// never read it back.
func (t Webhooks) Create(ctx context.Context, hookID, source, secret string) (Webhook, error) {
	r, err := t.q.CreateWebhook(ctx, db.CreateWebhookParams{OwnerID: t.ownerID, HookID: hookID, Source: source, Secret: secret})
	if err != nil {
		return Webhook{}, notFound("create webhook", err)
	}
	return Webhook(r), nil
}

// Webhooks lists the owner's webhook endpoints (never their secrets).
func (t Webhooks) List(ctx context.Context) ([]Webhook, error) {
	rows, err := t.q.ListWebhooks(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	out := make([]Webhook, len(rows))
	for i, r := range rows {
		out[i] = Webhook(r)
	}
	return out, nil
}

// RevokeWebhook revokes an endpoint: later deliveries to it are unknown (404).
func (t Webhooks) Revoke(ctx context.Context, hookID string) error {
	n, err := t.q.RevokeWebhook(ctx, db.RevokeWebhookParams{OwnerID: t.ownerID, HookID: hookID})
	return rowsOrNotFound("revoke webhook "+hookID, n, err)
}

// EnqueueDelivery records an accepted webhook delivery and its queued run in this
// transaction, deduplicated on the sender's message id per hook: a replay returns the
// original run's id, replay=true, and writes nothing.
func (t Deliveries) Enqueue(ctx context.Context, webhookID uuid.UUID, messageID string, body []byte, run NewRun) (uuid.UUID, bool, error) {
	if run.ID == uuid.Nil {
		run.ID = uuid.New()
	}
	ids, err := t.q.InsertDelivery(ctx, db.InsertDeliveryParams{OwnerID: t.ownerID, WebhookID: webhookID,
		MessageID: messageID, RunID: run.ID, Body: body, ReceivedAt: run.Now})
	if err != nil {
		return uuid.Nil, false, notFound("record delivery", err)
	}
	if len(ids) == 0 {
		id, err := t.q.DeliveryRunID(ctx, db.DeliveryRunIDParams{OwnerID: t.ownerID, WebhookID: webhookID, MessageID: messageID})
		if err != nil {
			return uuid.Nil, false, notFound("replayed delivery", err)
		}
		return id, true, nil
	}
	run.Status = RunQueued
	if _, claimed, err := Runs(t).Claim(ctx, run); err != nil || !claimed {
		return uuid.Nil, false, fmt.Errorf("queue webhook run (claimed %v): %w", claimed, err)
	}
	return run.ID, false, nil
}

// WebhookEventOf reads the delivery behind a webhook run.
func (t Webhooks) EventOf(ctx context.Context, runID uuid.UUID) (WebhookEvent, error) {
	r, err := t.q.RunDelivery(ctx, db.RunDeliveryParams{OwnerID: t.ownerID, RunID: runID})
	if err != nil {
		return WebhookEvent{}, notFound("delivery of run "+runID.String(), err)
	}
	return WebhookEvent{MessageID: r.MessageID, Source: r.Source, Body: r.Body, ReceivedAt: r.ReceivedAt}, nil
}

// SetWebhook sets (or replaces) the owner's channel named "webhook" and makes it the default.
// Only notifications created from now on are delivered to it.
func (t Channels) SetWebhook(ctx context.Context, url, topic string) (Channel, error) {
	t.notifiable = nil // Links.Notifiable reads the channels again
	if err := t.q.ClearDefaultChannel(ctx, t.ownerID); err != nil {
		return Channel{}, fmt.Errorf("set channel: %w", err)
	}
	r, err := t.q.UpsertChannel(ctx, db.UpsertChannelParams{OwnerID: t.ownerID, Url: url, Topic: topic})
	if err != nil {
		return Channel{}, notFound("set channel", err)
	}
	return toChannel(r), nil
}

// Default reads the owner's default channel.
func (t Channels) Default(ctx context.Context) (Channel, error) {
	r, err := t.q.GetChannel(ctx, t.ownerID)
	if err != nil {
		return Channel{}, notFound("channel", err)
	}
	return toChannel(r), nil
}

// DeleteDefault removes the owner's default channel; the oldest other one becomes the default.
func (t Channels) DeleteDefault(ctx context.Context) error {
	t.notifiable = nil // Links.Notifiable reads the channels again
	n, err := t.q.DeleteChannel(ctx, t.ownerID)
	if err := rowsOrNotFound("delete channel", n, err); err != nil {
		return err
	}
	return t.q.PromoteDefaultChannel(ctx, t.ownerID)
}

// Create adds a channel; a second channel of the same name is ErrConflict.
func (t Channels) Create(ctx context.Context, c NewChannel) (Channel, error) {
	t.notifiable = nil // Links.Notifiable reads the channels again
	if c.MakeDefault {
		if err := t.q.ClearDefaultChannel(ctx, t.ownerID); err != nil {
			return Channel{}, fmt.Errorf("create channel: %w", err)
		}
	}
	r, err := t.q.CreateChannel(ctx, db.CreateChannelParams{OwnerID: t.ownerID, Name: c.Name, Kind: c.Kind, Url: c.URL,
		Topic: c.Topic, Settings: jsonOrEmpty(c.Settings), Secret: c.Secret, MakeDefault: c.MakeDefault})
	if err != nil {
		return Channel{}, notFound("create channel "+c.Name, err)
	}
	return toChannel(r), nil
}

// List lists the owner's channels by name.
func (t Channels) List(ctx context.Context) ([]Channel, error) {
	rows, err := t.q.ListChannels(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	out := make([]Channel, len(rows))
	for i, r := range rows {
		out[i] = toChannel(r)
	}
	return out, nil
}

// Named reads one channel by name.
func (t Channels) Named(ctx context.Context, name string) (Channel, error) {
	r, err := t.q.GetChannelByName(ctx, db.GetChannelByNameParams{OwnerID: t.ownerID, Name: name})
	if err != nil {
		return Channel{}, notFound("channel "+name, err)
	}
	return toChannel(r), nil
}

// Delete removes one channel; when it was the default, the oldest other one
// becomes the default.
func (t Channels) Delete(ctx context.Context, name string) error {
	t.notifiable = nil // Links.Notifiable reads the channels again
	n, err := t.q.DeleteChannelByName(ctx, db.DeleteChannelByNameParams{OwnerID: t.ownerID, Name: name})
	if err := rowsOrNotFound("delete channel "+name, n, err); err != nil {
		return err
	}
	return t.q.PromoteDefaultChannel(ctx, t.ownerID)
}

// MakeDefault makes the named channel the owner's default and clears the old one, in
// the caller's transaction (one default per owner). An unknown name is ErrNotFound; the
// caller's transaction then rolls back, so the old default stays.
func (t Channels) MakeDefault(ctx context.Context, name string) (Channel, error) {
	t.notifiable = nil // Links.Notifiable reads the channels again
	if err := t.q.ClearDefaultChannel(ctx, t.ownerID); err != nil {
		return Channel{}, fmt.Errorf("make channel %s the default: %w", name, err)
	}
	n, err := t.q.MakeDefaultChannel(ctx, db.MakeDefaultChannelParams{OwnerID: t.ownerID, Name: name})
	if err := rowsOrNotFound("make channel "+name+" the default", n, err); err != nil {
		return Channel{}, err
	}
	return t.Named(ctx, name)
}

func toChannel(r db.NotificationChannel) Channel {
	return Channel{ID: r.ID, Name: r.Name, Kind: r.Kind, URL: r.Url, Topic: r.Topic, Default: r.IsDefault, Enabled: r.Enabled,
		CreatedAt: r.CreatedAt, Settings: r.Settings, Secret: r.Secret, GoneAt: r.GoneAt}
}

// MarkGone disables the named channel because its destination no longer exists (a Web
// Push subscription's 404 or 410), recording since when; a channel already gone keeps its
// first time.
func (t Channels) MarkGone(ctx context.Context, name string, at time.Time) error {
	t.notifiable = nil // Links.Notifiable reads the channels again
	_, err := t.q.MarkChannelGone(ctx, db.MarkChannelGoneParams{OwnerID: t.ownerID, Name: name, GoneAt: &at})
	return err
}

// ClaimDeliveries leases up to limit notifications due for delivery at now (created since
// since, undelivered, not leased by a concurrent flush) and counts the attempt.
func (t Deliveries) Claim(ctx context.Context, now time.Time, lease time.Duration, since time.Time, limit int) ([]Notification, error) {
	until := now.Add(lease)
	rows, err := t.q.ClaimDeliveries(ctx, db.ClaimDeliveriesParams{OwnerID: t.ownerID, Now: &now, LeaseUntil: &until,
		Since: since, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return toNotifications(rows), nil
}

// MarkDelivered records a delivered notification.
func (t Deliveries) MarkDelivered(ctx context.Context, id uuid.UUID, now time.Time) error {
	n, err := t.q.MarkDelivered(ctx, db.MarkDeliveredParams{OwnerID: t.ownerID, ID: id, Now: &now})
	return rowsOrNotFound("mark delivered", n, err)
}

// MarkDeliveryFailed records a failed attempt; next is the next attempt, nil to give up.
func (t Deliveries) MarkFailed(ctx context.Context, id uuid.UUID, next *time.Time, reason string) error {
	n, err := t.q.MarkDeliveryFailed(ctx, db.MarkDeliveryFailedParams{OwnerID: t.ownerID, ID: id, NextAt: next, Error: reason})
	return rowsOrNotFound("mark delivery failed", n, err)
}

// Notifications lists the owner's notifications with their delivery state, newest first.
func (t Deliveries) Notifications(ctx context.Context, limit int) ([]Notification, error) {
	rows, err := t.q.ListNotificationsWithDelivery(ctx, db.ListNotificationsWithDeliveryParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	return toNotifications(rows), nil
}

func toNotifications(rows []db.Notification) []Notification {
	out := make([]Notification, len(rows))
	for i, r := range rows {
		out[i] = Notification{ID: r.ID, Channel: r.Channel, Title: r.Title, Message: r.Message, TurnID: ptrUUID(r.TurnID),
			CreatedAt: r.CreatedAt, DeliveredAt: r.DeliveredAt, DeliveryAttempts: int(r.DeliveryAttempts),
			DeliveryError: r.DeliveryError, NextDeliveryAt: r.DeliveryNextAt}
	}
	return out
}

// FailStale fails the owner's job runs still running and started before before: their
// process died. A run whose turn is still running or continuing is left to finish with it.
func (t Runs) FailStale(ctx context.Context, before time.Time) (int64, error) {
	n, err := t.q.FailStaleRuns(ctx, db.FailStaleRunsParams{OwnerID: t.ownerID, Before: before})
	if err != nil {
		return 0, fmt.Errorf("fail stale runs: %w", err)
	}
	return n, nil
}
