package autonomy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/store"
)

// Directory is the reviewed cross-owner reads autonomy needs; *store.Door implements it.
type Directory interface {
	ScanSchedules(ctx context.Context) ([]store.ScheduleScan, error)
	LookupWebhook(ctx context.Context, hookID string) (store.WebhookRoute, error)
}

var _ Directory = (*store.Door)(nil)

// Drainer finishes background work left by other requests on a tick: the work spine's
// items nobody took (work.Spine), notifications not yet delivered.
type Drainer interface {
	Drain(ctx context.Context) error
}

// Scheduler runs scheduled jobs. Tick is the body of functions/scheduler (EventBridge
// Scheduler) and of the ticker under `steward serve`.
type Scheduler struct {
	Runner    *Runner
	Directory Directory
	// Jobs are the jobs by name; nil means DefaultJobs.
	Jobs map[string]Job
	// Concurrency bounds the runs a tick executes at once; zero means 4.
	Concurrency int
	// Drainers run after the due jobs of every tick (webhooks, notification delivery).
	Drainers []Drainer
	// Outside is the owner's mail and calendar the jobs gather from; nil: not connected.
	Outside Outside
	// Webhooks processes {"owner_id","run_id"} events (a webhook function handing its queued
	// run to the scheduler function asynchronously); nil refuses them.
	Webhooks *Webhooks
	// Due does a {"due":true} event, the one-minute tick of work due at a time (reminders,
	// automation runs); nil refuses them.
	Due func(ctx context.Context) error
}

// Event is the scheduler's input: the EventBridge Scheduler payload, or the in-process
// ticker's. Without Job it is a tick: every due job of every owner runs. With Job and OwnerID
// it runs that one job (a dedicated ScheduleV2 rule). With RunID and OwnerID it processes
// that queued webhook run.
type Event struct {
	// ScheduledTime is the tick's scheduled time (<aws.scheduler.scheduled-time>): due times
	// are computed against it, so a redelivered event claims the same runs. Zero means now.
	ScheduledTime time.Time `json:"scheduled_time,omitzero"`
	Job           string    `json:"job,omitempty"`
	OwnerID       uuid.UUID `json:"owner_id,omitzero"`
	// ScheduledFor is a direct run's idempotency key; it defaults to ScheduledTime.
	ScheduledFor *time.Time `json:"scheduled_for,omitempty"`
	RunID        uuid.UUID  `json:"run_id,omitzero"`
	// Due is the one-minute tick of work due at a time (Scheduler.Due).
	Due bool `json:"due,omitempty"`
}

// Report is what a tick did.
type Report struct {
	// Due counts the runs found due; Runs are those this tick claimed, with their outcome.
	Due  int            `json:"due"`
	Runs []store.JobRun `json:"runs"`
}

func (s *Scheduler) jobs() map[string]Job {
	if s.Jobs != nil {
		return s.Jobs
	}
	return DefaultJobs()
}

// Handle runs an event: one direct job, or a tick.
func (s *Scheduler) Handle(ctx context.Context, ev Event) (Report, error) {
	now := ev.ScheduledTime
	if now.IsZero() {
		now = s.Runner.Now.Now()
	}
	if ev.Due {
		if s.Due == nil {
			return Report{}, steward.Errorf(steward.CodeInvalid, "this scheduler does not do due work")
		}
		return Report{}, s.Due(ctx)
	}
	if ev.Job == "" && ev.RunID == uuid.Nil {
		return s.Tick(ctx, now)
	}
	if ev.OwnerID == uuid.Nil {
		return Report{}, steward.Errorf(steward.CodeInvalid, "a job or run event needs owner_id")
	}
	if ev.RunID != uuid.Nil {
		if s.Webhooks == nil {
			return Report{}, steward.Errorf(steward.CodeInvalid, "this scheduler does not process webhook runs")
		}
		run, err := s.Webhooks.Process(ctx, ev.OwnerID, ev.RunID)
		if errors.Is(err, store.ErrConflict) {
			return Report{Due: 1}, nil // taken by another worker (the drain)
		}
		if err != nil {
			return Report{Due: 1}, err
		}
		return Report{Due: 1, Runs: []store.JobRun{run}}, nil
	}
	at := now.Truncate(time.Second)
	if ev.ScheduledFor != nil {
		at = ev.ScheduledFor.Truncate(time.Second)
	}
	run, claimed, err := s.RunJob(ctx, ev.OwnerID, ev.Job, at, store.RunBySchedule)
	if err != nil || !claimed {
		return Report{Due: 1}, err
	}
	return Report{Due: 1, Runs: []store.JobRun{run}}, nil
}

// due is one run a tick found due.
type due struct {
	sched store.ScheduleScan
	at    time.Time
	loc   *time.Location
}

// Tick finds every due run — for each enabled schedule the latest firing time in (its last
// claimed run, now], so a missed tick catches up once — claims each exactly once and runs
// the claimed ones. A run claimed by a concurrent tick is left to it. Failed runs are
// recorded, not returned: the error is for what a retry could fix (the scan, a claim).
func (s *Scheduler) Tick(ctx context.Context, now time.Time) (Report, error) {
	log := zerolog.Ctx(ctx)
	scans, err := s.Directory.ScanSchedules(ctx)
	if err != nil {
		return Report{}, err
	}
	var todo []due
	for _, sc := range scans {
		c, err := ParseCron(sc.Cron, sc.Timezone)
		if err != nil {
			log.Error().Err(err).Stringer("schedule_id", sc.ID).Msg("stored schedule does not parse; skipped")
			continue
		}
		if at, ok := c.Latest(sc.Since, now); ok {
			todo = append(todo, due{sched: sc, at: at, loc: c.Location()})
		}
	}
	rep := Report{Due: len(todo)}
	var mu sync.Mutex
	var errs []error
	limit := s.Concurrency
	if limit <= 0 {
		limit = 4
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, d := range todo {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			sc := d.sched.Schedule
			run, claimed, err := s.runScheduled(ctx, &sc, d.at, d.loc, store.RunBySchedule)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s for owner %s at %s: %w", sc.Job, sc.OwnerID, d.at.Format(time.RFC3339), err))
			}
			if claimed {
				rep.Runs = append(rep.Runs, run)
			}
		})
	}
	wg.Wait()
	for _, dr := range s.Drainers {
		if err := dr.Drain(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	log.Debug().Time("scheduled_time", now).Int("due", rep.Due).Int("claimed", len(rep.Runs)).Int("errors", len(errs)).Msg("tick")
	return rep, errors.Join(errs...)
}

// RunJob runs one job for an owner now, keyed on scheduledFor: `steward jobs run` (trigger
// cli) and direct scheduler events (trigger schedule). The owner's schedule of the job, if
// any, gives its time zone and payload. claimed is false when the run was claimed before.
func (s *Scheduler) RunJob(ctx context.Context, ownerID uuid.UUID, job string, scheduledFor time.Time, trigger string) (store.JobRun, bool, error) {
	if _, ok := s.jobs()[job]; !ok {
		return store.JobRun{}, false, steward.Errorf(steward.CodeInvalid, "unknown job %q; jobs: %s", job, strings.Join(jobNames(s.jobs()), ", "))
	}
	var sched *store.Schedule
	err := s.Runner.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		sc, err := tx.Schedules.ByJob(ctx, job)
		if err == nil {
			sched = &sc
		} else if steward.ErrorCode(err) == steward.CodeNotFound {
			err = nil
		}
		return err
	})
	if err != nil {
		return store.JobRun{}, false, err
	}
	loc := time.UTC
	if sched == nil {
		sched = &store.Schedule{OwnerID: ownerID, Job: job}
	} else if l, err := LoadZone(sched.Timezone); err == nil {
		loc = l
	}
	return s.runScheduled(ctx, sched, scheduledFor, loc, trigger)
}

// runScheduled claims and runs one job run. A schedule without an ID (no schedule row) is
// keyed on (owner, job, scheduled time) alone.
func (s *Scheduler) runScheduled(ctx context.Context, sc *store.Schedule, at time.Time, loc *time.Location, trigger string) (store.JobRun, bool, error) {
	n := store.NewRun{Job: sc.Job, Trigger: trigger, ScheduledFor: at}
	if sc.ID != uuid.Nil {
		n.ScheduleID = &sc.ID
	}
	run, claimed, err := s.Runner.claim(ctx, sc.OwnerID, n)
	if err != nil || !claimed || run.Status != store.RunRunning {
		return run, claimed, err
	}
	job, ok := s.jobs()[sc.Job]
	if !ok {
		run, err = s.Runner.finish(ctx, run, store.RunFailed, nil, fmt.Sprintf("unknown job %q", sc.Job))
		return run, true, err
	}
	jc := JobContext{Run: run, Payload: sc.Payload, Location: loc, Now: s.Runner.Now.Now()}
	taint := ""
	if job.Gather != nil {
		if jc.Outside, err = job.Gather(ctx, s.Runner.Store, s.Outside, jc); err != nil {
			run, err = s.Runner.finish(ctx, run, store.RunFailed, nil, "gathering the run's context failed")
			return run, true, err
		}
		if jc.Outside.tainting() {
			// A stranger's mail rides in the message: the turn starts tainted (ARCHITECTURE.md §3).
			taint = "job:" + job.Name
		}
	}
	run, err = s.Runner.execute(ctx, run, triggerOf(trigger), taint, func(ctx context.Context, tx *store.Tx) (string, error) {
		return job.Compose(ctx, tx, jc)
	})
	return run, true, err
}

// ScheduleView is a schedule with its next firing time.
type ScheduleView struct {
	store.Schedule
	Next *time.Time `json:"next,omitempty"`
}

// AddSchedule validates and stores an owner's schedule of a job. It makes no standing rule:
// a job's notify asks the owner unless the owner allowed notify themselves (SeedNotifyRule,
// on `steward jobs add --allow-notify`; docs/SECURITY.md).
func (s *Scheduler) AddSchedule(ctx context.Context, ownerID uuid.UUID, job, expr, tz string, payload json.RawMessage) (ScheduleView, error) {
	if _, ok := s.jobs()[job]; !ok {
		return ScheduleView{}, steward.Errorf(steward.CodeInvalid, "unknown job %q; jobs: %s", job, strings.Join(jobNames(s.jobs()), ", "))
	}
	c, err := ParseCron(expr, tz)
	if err != nil {
		return ScheduleView{}, steward.Errorf(steward.CodeInvalid, "%s", err.Error())
	}
	if len(payload) == 0 {
		payload = json.RawMessage(`{}`)
	}
	var obj map[string]any
	if json.Unmarshal(payload, &obj) != nil || obj == nil {
		return ScheduleView{}, steward.Errorf(steward.CodeInvalid, "payload must be a JSON object")
	}
	var v ScheduleView
	err = s.Runner.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		if v.Schedule, err = tx.Schedules.Create(ctx, store.NewSchedule{Job: job, Cron: c.String(), Timezone: c.Location().String(), Payload: payload}); err != nil {
			if steward.ErrorCode(err) == steward.CodeConflict {
				return steward.Errorf(steward.CodeConflict, "a schedule for %s exists; remove it first", job)
			}
			return err
		}
		return nil
	})
	if err != nil {
		return ScheduleView{}, err
	}
	if next := c.Next(s.Runner.Now.Now()); !next.IsZero() {
		v.Next = &next
	}
	return v, nil
}

// RemoveSchedule deletes an owner's schedule of a job; its runs stay in the history.
func (s *Scheduler) RemoveSchedule(ctx context.Context, ownerID uuid.UUID, job string) error {
	return s.Runner.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error { return tx.Schedules.Delete(ctx, job) })
}

// ListSchedules lists an owner's schedules with their next firing times.
func (s *Scheduler) ListSchedules(ctx context.Context, ownerID uuid.UUID) ([]ScheduleView, error) {
	var scheds []store.Schedule
	err := s.Runner.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		scheds, err = tx.Schedules.List(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]ScheduleView, len(scheds))
	for i, sc := range scheds {
		out[i].Schedule = sc
		if c, err := ParseCron(sc.Cron, sc.Timezone); err == nil {
			if next := c.Next(s.Runner.Now.Now()); !next.IsZero() {
				out[i].Next = &next
			}
		}
	}
	return out, nil
}

// SeedNotifyRule creates, once, the standing rule "allow notify" with source "setup", so a
// scheduled job can deliver its briefing without waiting for a human. Only the owner's
// explicit choice makes it (`steward jobs add --allow-notify`, which shows it): no command
// creates a rule the owner did not ask for. It is an ordinary, visible rule the owner may
// delete (GET/DELETE /v1/rules); it never applies to webhook runs, nor to a notify carrying
// a link in a tainted turn (docs/SECURITY.md). It does nothing (and returns nil) when the
// owner already has a rule for notify.
func SeedNotifyRule(ctx context.Context, tx *store.Tx) (*steward.Rule, error) {
	rules, err := tx.Rules.For(ctx, "notify")
	if err != nil {
		return nil, err
	}
	for _, r := range rules {
		if r.Tool == "notify" {
			return nil, nil
		}
	}
	r, err := tx.Rules.Create(ctx, steward.Rule{Tool: "notify", Match: steward.MatchPattern, Effect: "allow", Source: "setup",
		Note: "added at your request (steward jobs add --allow-notify) so jobs deliver without asking; delete it to approve each notification"})
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// Setup is the owner's explicit opt-in (`steward jobs add --allow-notify`): it seeds the
// notify rule (see SeedNotifyRule) and returns it, or nil when the owner has a notify rule
// already.
func Setup(ctx context.Context, st *store.Store, ownerID uuid.UUID) (*steward.Rule, error) {
	var rule *steward.Rule
	err := st.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		rule, err = SeedNotifyRule(ctx, tx)
		return err
	})
	return rule, err
}
