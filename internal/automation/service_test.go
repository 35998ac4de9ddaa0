package automation_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/automation"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// clock is the one clock the tests move.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time)     { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// answering answers every turn with one line naming its run; failing, when set, fails.
type answering struct {
	turns   atomic.Int32
	failing atomic.Bool
}

func (m *answering) Name() string { return "answering" }

func (m *answering) Generate(ctx context.Context, req llm.Request, _ llm.DeltaFunc) (llm.Response, error) {
	if m.failing.Load() {
		return llm.Response{}, errors.New("the model is down")
	}
	m.turns.Add(1)
	return scripted.Text("Your first meeting is at 9."), nil
}

type env struct {
	*apptest.Env
	ctx   context.Context
	clock *clock
	model *answering
	owner uuid.UUID
}

func newEnv(t *testing.T, start time.Time, zone string) *env {
	t.Helper()
	c := &clock{t: start}
	m := &answering{}
	e := apptest.New(t, apptest.Options{Model: m, Now: c.Now})
	o, _ := e.DB.Owner(t, "ada")
	ctx := context.Background()
	if _, err := e.Automations.SetZone(ctx, o.ID, zone); err != nil {
		t.Fatal(err)
	}
	return &env{Env: e, ctx: ctx, clock: c, model: m, owner: o.ID}
}

// notifications are the owner's notifications, oldest first, as "title: message".
func (e *env) notifications(t *testing.T) []string {
	t.Helper()
	var out []string
	err := e.Store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		ns, err := tx.Tasks.ListNotifications(e.ctx, 100)
		for i := len(ns) - 1; i >= 0; i-- {
			out = append(out, ns[i].Title+": "+ns[i].Message)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) drain(t *testing.T) {
	t.Helper()
	if err := e.Work.Drain(e.ctx); err != nil {
		t.Fatal(err)
	}
}

// TestReminderFiresOnceAtItsTime: "in 20 minutes" read at the clock's now; nothing before
// its time, one notification at it, nothing more after.
func TestReminderFiresOnceAtItsTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Date(2026, 12, 8, 16, 40, 0, 0, time.UTC), "Europe/Berlin")
	r, err := e.Automations.CreateReminder(e.ctx, e.owner, "call the school", "in 20 minutes", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.DueAt.Equal(time.Date(2026, 12, 8, 17, 0, 0, 0, time.UTC)) || r.When != "Tue 8 Dec 2026 18:00 CET (17:00 UTC)" {
		t.Fatalf("reminder due %v, shown %q", r.DueAt, r.When)
	}
	e.clock.Add(19*time.Minute + 59*time.Second)
	e.drain(t)
	if got := e.notifications(t); len(got) != 0 {
		t.Fatalf("before its time: %q", got)
	}
	e.clock.Add(time.Second)
	e.drain(t)
	e.clock.Add(10 * time.Second)
	e.drain(t)
	if got := e.notifications(t); len(got) != 1 || got[0] != "Reminder: call the school" {
		t.Fatalf("at its time: %q, want one reminder", got)
	}
	list, err := e.Automations.ListReminders(e.ctx, e.owner, true)
	if err != nil || len(list) != 1 || list[0].Status != store.ReminderFired || list[0].Late {
		t.Fatalf("list: %+v %v", list, err)
	}
	if _, err := e.Automations.CancelReminder(e.ctx, e.owner, r.ID); steward.ErrorCode(err) != steward.CodeConflict {
		t.Fatalf("cancelling a fired reminder: %v, want a conflict", err)
	}
}

// TestReminderCaughtUpLateOnce: due while the system was down, a reminder fires once when it
// comes back, saying it is late; a cancelled one never fires.
func TestReminderCaughtUpLateOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Date(2026, 12, 8, 8, 0, 0, 0, time.UTC), "America/New_York")
	if _, err := e.Automations.CreateReminder(e.ctx, e.owner, "water the plants", "9:00", nil); err != nil {
		t.Fatal(err)
	}
	c, err := e.Automations.CreateReminder(e.ctx, e.owner, "never mind", "9:30", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Automations.CancelReminder(e.ctx, e.owner, c.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(8 * time.Hour) // down from 08:00 to 16:00 UTC; 9:00 New York is 14:00 UTC
	e.drain(t)
	e.drain(t)
	got := e.notifications(t)
	if len(got) != 1 || !strings.HasPrefix(got[0], "Reminder (late): water the plants") || !strings.Contains(got[0], "due Tue 8 Dec 2026 09:00 EST (14:00 UTC), 2h0m0s ago") {
		t.Fatalf("after downtime: %q, want one late reminder", got)
	}
}

// TestReminderFiresOnceUnderTwoSchedulers: two drains at once (two processes, a tick and the
// due loop) fire a due reminder once.
func TestReminderFiresOnceUnderTwoSchedulers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Date(2026, 12, 8, 8, 0, 0, 0, time.UTC), "UTC")
	for i := range 20 {
		if _, err := e.Automations.CreateReminder(e.ctx, e.owner, "note "+string(rune('a'+i)), "in 1 minute", nil); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Add(time.Minute)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { e.drain(t) })
	}
	wg.Wait()
	if got := e.notifications(t); len(got) != 20 {
		t.Fatalf("%d notifications, want 20 (one per reminder): %q", len(got), got)
	}
}

// TestReminderLimits: a time in the past and the pending limit are refused in words naming
// the knob.
func TestReminderLimits(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Date(2026, 12, 8, 8, 0, 0, 0, time.UTC)}
	e := apptest.New(t, apptest.Options{Model: &answering{}, Now: c.Now, Env: map[string]string{"STEWARD_REMINDERS_MAX": "2"}})
	o, _ := e.DB.Owner(t, "ada")
	ctx := context.Background()
	if _, err := e.Automations.CreateReminder(ctx, o.ID, "x", "2026-12-08T07:00:00Z", nil); steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), "in the past") {
		t.Fatalf("past: %v", err)
	}
	for range 2 {
		if _, err := e.Automations.CreateReminder(ctx, o.ID, "x", "in 5 minutes", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Automations.CreateReminder(ctx, o.ID, "x", "in 5 minutes", nil); steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), "STEWARD_REMINDERS_MAX") {
		t.Fatalf("over the limit: %v", err)
	}
}

// runsOf are an automation's runs' scheduled times, local, oldest first.
func (e *env) runsOf(t *testing.T, id uuid.UUID, loc *time.Location) []string {
	t.Helper()
	var out []string
	err := e.Store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		runs, err := tx.Automations().Runs(e.ctx, id, 100)
		for i := len(runs) - 1; i >= 0; i-- {
			out = append(out, runs[i].ScheduledFor.In(loc).Format("Jan 2 15:04")+" "+string(runs[i].Status))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAutomationAcrossDST: ticking every ten minutes through each switch day of
// Europe/Berlin and America/New_York, a daily automation runs exactly once that day (a time
// in the spring gap at the jump), and its answer reaches the owner.
func TestAutomationAcrossDST(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		zone, schedule string
		day            time.Time
		want           string
	}{
		{"Europe/Berlin", "every day at 2:30", time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC), "Mar 29 03:00 completed"},
		{"Europe/Berlin", "every day at 2:30", time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), "Oct 25 02:30 completed"},
		{"America/New_York", "30 2 * * *", time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC), "Mar 8 03:00 completed"},
		{"America/New_York", "every day at 1:30", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), "Nov 1 01:30 completed"},
	} {
		t.Run(c.zone+" "+c.day.Format(time.DateOnly), func(t *testing.T) {
			t.Parallel()
			loc, _ := time.LoadLocation(c.zone)
			start := time.Date(c.day.Year(), c.day.Month(), c.day.Day(), 0, 0, 0, 0, loc)
			e := newEnv(t, start.Add(-time.Minute), c.zone)
			a, err := e.Automations.CreateAutomation(e.ctx, e.owner, automation.Input{Instruction: "tell me my first meeting", Schedule: c.schedule})
			if err != nil {
				t.Fatal(err)
			}
			for e.clock.Now().Before(start.AddDate(0, 0, 1)) {
				e.clock.Add(10 * time.Minute)
				e.drain(t)
			}
			if got := e.runsOf(t, a.ID, loc); len(got) != 1 || got[0] != c.want {
				t.Fatalf("runs %q, want exactly [%s]", got, c.want)
			}
			if got := e.notifications(t); len(got) != 1 || got[0] != "Automation: tell me my first meeting: Your first meeting is at 9." {
				t.Fatalf("notifications %q", got)
			}
		})
	}
}

// TestAutomationRunsOnceUnderTwoSchedulers: four drains at once claim one run.
func TestAutomationRunsOnceUnderTwoSchedulers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Date(2026, 12, 8, 7, 0, 0, 0, time.UTC), "UTC")
	a, err := e.Automations.CreateAutomation(e.ctx, e.owner, automation.Input{Instruction: "tell me my first meeting", Schedule: "every weekday at 7:30"})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(31 * time.Minute)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { e.drain(t) })
	}
	wg.Wait()
	if got := e.runsOf(t, a.ID, time.UTC); len(got) != 1 || e.model.turns.Load() != 1 {
		t.Fatalf("runs %q, %d turns; want one", got, e.model.turns.Load())
	}
}

// TestAutomationCatchesUpOnceAndPausesAfterThreeFailures: down for three days, a daily
// automation runs once (its latest time); failing three runs in a row, it pauses and tells
// the owner why.
func TestAutomationCatchesUpOnceAndPausesAfterThreeFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Date(2026, 12, 8, 6, 0, 0, 0, time.UTC), "UTC")
	a, err := e.Automations.CreateAutomation(e.ctx, e.owner, automation.Input{Instruction: "summarise my day", Schedule: "every day at 7:00"})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(3*24*time.Hour + 2*time.Hour) // Dec 11 08:00
	e.drain(t)
	e.drain(t)
	if got := e.runsOf(t, a.ID, time.UTC); len(got) != 1 || got[0] != "Dec 11 07:00 completed" {
		t.Fatalf("after downtime: runs %q, want one, the latest", got)
	}
	e.model.failing.Store(true)
	for range 3 {
		e.clock.Add(24 * time.Hour)
		e.drain(t)
	}
	v, err := e.Automations.GetAutomation(e.ctx, e.owner, a.ID)
	if err != nil || v.Status != store.AutomationPaused || !strings.Contains(v.PausedReason, "3 failed runs in a row") {
		t.Fatalf("after three failures: %+v %v", v.Automation, err)
	}
	got := e.notifications(t)
	if last := got[len(got)-1]; !strings.HasPrefix(last, "Automation paused: “summarise my day”") {
		t.Fatalf("the owner was told %q", got)
	}
	e.clock.Add(24 * time.Hour)
	e.drain(t)
	if got := e.runsOf(t, a.ID, time.UTC); len(got) != 4 {
		t.Fatalf("paused, it ran: %q", got)
	}
}

// TestAutomationLimits: more often than every 15 minutes, and more than the active limit,
// are refused in words naming the knob.
func TestAutomationLimits(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Date(2026, 12, 8, 8, 0, 0, 0, time.UTC)}
	e := apptest.New(t, apptest.Options{Model: &answering{}, Now: c.Now, Env: map[string]string{"STEWARD_AUTOMATIONS_MAX": "1"}})
	o, _ := e.DB.Owner(t, "ada")
	ctx := context.Background()
	_, err := e.Automations.CreateAutomation(ctx, o.ID, automation.Input{Instruction: "x", Schedule: "every 5 minutes"})
	if steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), "STEWARD_AUTOMATION_MIN_INTERVAL") {
		t.Fatalf("every 5 minutes: %v", err)
	}
	a, err := e.Automations.CreateAutomation(ctx, o.ID, automation.Input{Instruction: "x", Schedule: "every 15 minutes"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Next) != 3 {
		t.Fatalf("next runs %v, want three", a.Next)
	}
	_, err = e.Automations.CreateAutomation(ctx, o.ID, automation.Input{Instruction: "y", Schedule: "every day at 9"})
	if steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), "STEWARD_AUTOMATIONS_MAX") {
		t.Fatalf("over the limit: %v", err)
	}
	if _, err := e.Automations.Pause(ctx, o.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Automations.CreateAutomation(ctx, o.ID, automation.Input{Instruction: "y", Schedule: "every day at 9"}); err != nil {
		t.Fatalf("with the first paused: %v", err)
	}
	if _, err := e.Automations.Resume(ctx, o.ID, a.ID); !strings.Contains(errString(err), "STEWARD_AUTOMATIONS_MAX") {
		t.Fatalf("resuming over the limit: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
