package autonomy_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/store"
)

// tick delivers the same scheduler event n times concurrently, as a redelivering
// EventBridge would, and returns how many runs the deliveries claimed in total.
func (h *harness) tick(at time.Time, n int) int {
	h.t.Helper()
	h.clock.Set(at)
	var wg sync.WaitGroup
	var mu sync.Mutex
	claimed := 0
	for range n {
		wg.Go(func() {
			rep, err := h.sched.Handle(h.ctx, autonomy.Event{ScheduledTime: at})
			if err != nil {
				h.t.Errorf("tick at %s: %v", at, err)
			}
			mu.Lock()
			claimed += len(rep.Runs)
			mu.Unlock()
		})
	}
	wg.Wait()
	return claimed
}

// TestTickDeliveredTwiceConcurrently: one job_run, one turn, one briefing, one delivery.
func TestTickDeliveredTwiceConcurrently(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.addSchedule(autonomy.JobMorningBriefing, "0 7 * * *", "Europe/Berlin")
	due := *v.Next
	if got := due.In(v.Next.Location()); got.Hour() != 7 || got.Minute() != 0 {
		t.Fatalf("next briefing at %s, want 07:00 Berlin", got)
	}
	if claimed := h.tick(due.Add(2*time.Minute), 2); claimed != 1 {
		t.Fatalf("two concurrent deliveries claimed %d runs, want 1", claimed)
	}
	runs := h.runs()
	if len(runs) != 1 {
		t.Fatalf("%d job_runs, want 1", len(runs))
	}
	run := runs[0]
	if run.Status != store.RunCompleted || !run.ScheduledFor.Equal(due) || run.Trigger != store.RunBySchedule ||
		run.TurnID == nil || run.ScheduleID == nil || run.StartedAt == nil || run.FinishedAt == nil {
		t.Fatalf("run %+v", run)
	}
	if turn := h.turn(*run.TurnID); turn.Trigger != steward.TriggerSchedule || turn.Status != steward.StatusCompleted {
		t.Fatalf("turn %s: trigger %s, status %s", turn.ID, turn.Trigger, turn.Status)
	}
	if n := len(h.model.turnsStarted()); n != 1 {
		t.Fatalf("the model began %d turns, want 1", n)
	}
	notes := h.notifications()
	if len(notes) != 1 || notes[0].DeliveredAt == nil || h.received.Load() != 1 {
		t.Fatalf("notifications %+v, channel received %d; want one briefing, delivered once", notes, h.received.Load())
	}
	// The same tick again, later: nothing new.
	if claimed := h.tick(due.Add(3*time.Minute), 1); claimed != 0 || len(h.runs()) != 1 {
		t.Fatalf("a repeated tick claimed %d runs", claimed)
	}
}

// TestMissedTicksCatchUpOnce: after three missed mornings the next tick runs one briefing,
// for the latest morning.
func TestMissedTicksCatchUpOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.addSchedule(autonomy.JobMorningBriefing, "0 7 * * *", "Europe/Berlin")
	c, err := autonomy.ParseCron("0 7 * * *", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	latest := *v.Next
	for range 3 {
		latest = c.Next(latest)
	}
	if claimed := h.tick(latest.Add(3*time.Hour), 1); claimed != 1 {
		t.Fatalf("claimed %d runs, want 1", claimed)
	}
	runs := h.runs()
	if len(runs) != 1 || !runs[0].ScheduledFor.Equal(latest) {
		t.Fatalf("runs %+v, want one for %s", runs, latest)
	}
	if claimed := h.tick(latest.Add(4*time.Hour), 1); claimed != 0 {
		t.Fatalf("the next tick the same day claimed %d runs", claimed)
	}
	next := c.Next(latest)
	if claimed := h.tick(next.Add(time.Minute), 1); claimed != 1 {
		t.Fatalf("the next morning claimed %d runs, want 1", claimed)
	}
	if runs := h.runs(); len(runs) != 2 || !runs[0].ScheduledFor.Equal(next) {
		t.Fatalf("runs %+v", runs)
	}
}

// TestKillSwitchSkipsRuns: with the kill switch engaged, the tick records the due run as
// skipped, with the reason; nothing runs. Released, the next run goes ahead.
func TestKillSwitchSkipsRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.addSchedule(autonomy.JobMorningBriefing, "0 7 * * *", "Europe/Berlin")
	h.setKill(true)
	if claimed := h.tick(v.Next.Add(time.Minute), 1); claimed != 1 {
		t.Fatalf("claimed %d, want the run recorded", claimed)
	}
	runs := h.runs()
	if len(runs) != 1 || runs[0].Status != store.RunSkipped || !strings.Contains(runs[0].Error, "holiday") || runs[0].TurnID != nil {
		t.Fatalf("runs %+v, want one skipped run with the reason", runs)
	}
	if len(h.model.turnsStarted()) != 0 || len(h.notifications()) != 0 {
		t.Fatal("something ran under the kill switch")
	}
	var activity []steward.Event
	h.in(func(tx *store.Tx) error {
		var err error
		activity, err = tx.Journal.RecentEvents(h.ctx, 10)
		return err
	})
	if len(activity) == 0 || activity[0].Kind != "autonomy_run" || !strings.Contains(string(activity[0].Data), `"skipped"`) {
		t.Fatalf("activity %+v, want the skipped run recorded", activity)
	}

	h.setKill(false)
	c, _ := autonomy.ParseCron("0 7 * * *", "Europe/Berlin")
	if claimed := h.tick(c.Next(*v.Next).Add(time.Minute), 1); claimed != 1 {
		t.Fatalf("after release: claimed %d", claimed)
	}
	if runs := h.runs(); runs[0].Status != store.RunCompleted {
		t.Fatalf("after release: %+v", runs[0])
	}
}

// TestDirectJobEvent: {"job","owner_id"} from a dedicated rule runs that job once per
// scheduled time, with or without a schedule row.
func TestDirectJobEvent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := autonomy.Setup(h.ctx, h.store, h.owner); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 29, 5, 0, 0, 0, time.UTC)
	raw := []byte(`{"job":"morning-briefing","owner_id":"` + h.owner.String() + `","scheduled_time":"2026-03-29T05:00:00Z"}`)
	var ev autonomy.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	h.clock.Set(at.Add(time.Second))
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if _, err := h.sched.Handle(h.ctx, ev); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	runs := h.runs()
	if len(runs) != 1 || !runs[0].ScheduledFor.Equal(at) || runs[0].ScheduleID != nil || runs[0].Status != store.RunCompleted {
		t.Fatalf("runs %+v, want one completed run for %s", runs, at)
	}
	for _, bad := range []autonomy.Event{
		{Job: "make-coffee", OwnerID: h.owner, ScheduledTime: at},
		{Job: autonomy.JobMorningBriefing, ScheduledTime: at},
	} {
		if _, err := h.sched.Handle(h.ctx, bad); steward.ErrorCode(err) != steward.CodeInvalid {
			t.Errorf("event %+v: %v, want invalid", bad, err)
		}
	}
	if len(h.runs()) != 1 {
		t.Fatal("an invalid event wrote a run")
	}
}

// dataBlock matches a data block up to the first thing that looks like its end.
var dataBlock = regexp.MustCompile(`(?is)<data source="[^"]*">.*?<\s*/\s*data\s*>`)

// firstUserText is the text of the user message that began the model's first turn.
func (h *harness) firstUserText() string {
	h.t.Helper()
	reqs := h.model.turnsStarted()
	if len(reqs) == 0 {
		h.t.Fatal("the model was never asked")
	}
	return reqs[0].Messages[len(reqs[0].Messages)-1].Text()
}

// TestMorningBriefingGathersContext: tasks, approvals, memory and sources reach the model
// inside the data block, never in the instructions.
func TestMorningBriefingGathersContext(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.addSchedule(autonomy.JobMorningBriefing, "0 7 * * *", "Europe/Berlin")
	now := v.Next.Add(time.Minute)
	yesterday, tonight := now.Add(-24*time.Hour), now.Add(10*time.Hour)
	h.in(func(tx *store.Tx) error {
		for _, nt := range []steward.NewTask{{Title: "pay rent", Due: &yesterday}, {Title: "call mum", Due: &tonight}, {Title: "read a book"}} {
			if _, err := tx.Tasks.CreateTask(h.ctx, nt); err != nil {
				return err
			}
		}
		conv, err := tx.Conversations.Create(h.ctx, "x")
		if err != nil {
			return err
		}
		turn, err := tx.Turns.Create(h.ctx, conv.ID, steward.TriggerChat, "m", time.Now(), time.Hour)
		if err != nil {
			return err
		}
		if err := tx.Journal.RecordCall(h.ctx, steward.CallRecord{TurnID: turn.ID, CallID: "c1", Tool: "create_task", Kind: steward.KindWrite,
			Args: json.RawMessage(`{"title":"book flights"}`), ArgsHash: "h", Status: steward.CallPending}); err != nil {
			return err
		}
		_, _, err = tx.Tasks.UpsertFact(h.ctx, steward.NewFact{Kind: "preference", Content: "prefers tea in the morning", Key: "k"})
		return err
	})
	h.tick(now, 1)
	text := h.firstUserText()
	instructions := dataBlock.ReplaceAllString(text, "")
	for _, want := range []string{`"overdue_tasks"`, "pay rent", `"due_today"`, "call mum", "read a book", "book flights",
		"prefers tea in the morning", `"mail": "not connected"`, `"calendar": "not connected"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the briefing's message lacks %q:\n%s", want, text)
		}
		if strings.Contains(instructions, want) {
			t.Errorf("%q appears outside the data block", want)
		}
	}
	if !strings.Contains(text, `<data source="morning-briefing">`) || !strings.Contains(instructions, "notify") {
		t.Errorf("message:\n%s", text)
	}
	overdue := text[strings.Index(text, `"overdue_tasks"`):strings.Index(text, `"due_today"`)]
	if !strings.Contains(overdue, "pay rent") || strings.Contains(overdue, "call mum") {
		t.Errorf("overdue section: %s", overdue)
	}
}

// TestWeeklyReviewPerProject: a manual run gathers each project's facts and tasks.
func TestWeeklyReviewPerProject(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.in(func(tx *store.Tx) error {
		for _, f := range []steward.NewFact{
			{Kind: steward.FactKindProject, Subject: "Garden", Content: "replant the vegetable beds this spring", Key: "p1"},
			{Kind: steward.FactKindDecision, Subject: "Garden", Content: "no pesticides", Key: "d1"},
		} {
			if _, _, err := tx.Tasks.UpsertFact(h.ctx, f); err != nil {
				return err
			}
		}
		done, err := tx.Tasks.CreateTask(h.ctx, steward.NewTask{Title: "Garden: plan the beds"})
		if err != nil {
			return err
		}
		if _, err := tx.Tasks.CompleteTask(h.ctx, done.ID); err != nil {
			return err
		}
		for _, title := range []string{"Garden: buy seeds", "renew passport"} {
			if _, err := tx.Tasks.CreateTask(h.ctx, steward.NewTask{Title: title}); err != nil {
				return err
			}
		}
		return nil
	})
	run, claimed, err := h.sched.RunJob(h.ctx, h.owner, autonomy.JobWeeklyReview, time.Now().Truncate(time.Second), store.RunByCLI)
	if err != nil || !claimed {
		t.Fatalf("run weekly review: %v, claimed %v", err, claimed)
	}
	if run.Trigger != store.RunByCLI || h.turn(*run.TurnID).Trigger != steward.TriggerCLI {
		t.Fatalf("run %+v", run)
	}
	text := h.firstUserText()
	var data struct {
		Projects []struct {
			Name      string                   `json:"name"`
			Facts     []string                 `json:"facts"`
			Open      []struct{ Title string } `json:"open_tasks"`
			Completed []struct{ Title string } `json:"completed_this_week"`
		} `json:"projects"`
		Other []struct{ Title string } `json:"open_tasks_outside_projects"`
	}
	block := dataBlock.FindString(text)
	body := block[strings.Index(block, ">")+1 : strings.LastIndex(block, "<")]
	if err := json.Unmarshal([]byte(body), &data); err != nil {
		t.Fatalf("data block %q: %v", body, err)
	}
	if len(data.Projects) != 1 || data.Projects[0].Name != "Garden" || len(data.Projects[0].Facts) != 2 ||
		len(data.Projects[0].Open) != 1 || data.Projects[0].Open[0].Title != "Garden: buy seeds" ||
		len(data.Projects[0].Completed) != 1 || len(data.Other) != 1 || data.Other[0].Title != "renew passport" {
		t.Fatalf("review data: %+v", data)
	}
}

// TestSchedulesMakeNoRule: a schedule makes no standing rule (no command makes one the owner
// did not ask for); the owner's opt-in (Setup) makes a visible, removable allow rule for
// notify once.
func TestSchedulesMakeNoRule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.sched.AddSchedule(h.ctx, h.owner, autonomy.JobMorningBriefing, "0 7 * * *", "Europe/Berlin", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.sched.AddSchedule(h.ctx, h.owner, autonomy.JobWeeklyReview, "0 17 * * fri", "Europe/Berlin", json.RawMessage(`{"scope":"work"}`)); err != nil {
		t.Fatal(err)
	}
	h.in(func(tx *store.Tx) error {
		rules, err := tx.Rules.List(h.ctx)
		if err == nil && len(rules) != 0 {
			t.Errorf("rules after two schedules: %+v, want none", rules)
		}
		return err
	})
	rule, err := autonomy.Setup(h.ctx, h.store, h.owner)
	if err != nil || rule == nil || rule.Tool != "notify" || rule.Effect != "allow" || rule.Source != "setup" {
		t.Fatalf("the owner's opt-in: rule %+v, %v", rule, err)
	}
	if again, err := autonomy.Setup(h.ctx, h.store, h.owner); err != nil || again != nil {
		t.Fatalf("a second opt-in: rule %+v, %v; want none", again, err)
	}
	if _, err := h.sched.AddSchedule(h.ctx, h.owner, autonomy.JobWeeklyReview, "0 18 * * fri", "UTC", nil); steward.ErrorCode(err) != steward.CodeConflict {
		t.Fatalf("a second schedule for the same job: %v, want conflict", err)
	}
	for _, bad := range [][3]string{{"make-coffee", "0 7 * * *", "UTC"}, {autonomy.JobMorningBriefing, "@every 1m", "UTC"},
		{autonomy.JobMorningBriefing, "0 7 * * *", "Nowhere/Land"}} {
		if _, err := h.sched.AddSchedule(h.ctx, h.owner, bad[0], bad[1], bad[2], nil); steward.ErrorCode(err) != steward.CodeInvalid {
			t.Errorf("AddSchedule%v: %v, want invalid", bad, err)
		}
	}
	list, err := h.sched.ListSchedules(h.ctx, h.owner)
	if err != nil || len(list) != 2 || list[0].Job != autonomy.JobMorningBriefing || list[0].Next == nil {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if err := h.sched.RemoveSchedule(h.ctx, h.owner, autonomy.JobWeeklyReview); err != nil {
		t.Fatal(err)
	}
	if err := h.sched.RemoveSchedule(h.ctx, h.owner, autonomy.JobWeeklyReview); steward.ErrorCode(err) != steward.CodeNotFound {
		t.Fatalf("removing twice: %v", err)
	}
}
