package accounts_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// TestBriefingAndInboxScanOffline: with the demo model the morning briefing lists today's
// events, the mail since the last briefing and the open tasks; its turn is tainted by the
// mail it carries. The inbox scan notifies only when urgent mail arrived, and with no new
// mail runs no turn at all.
func TestBriefingAndInboxScanOffline(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "carol", nil, nil)
	ctx := context.Background()
	// The owner lets jobs deliver without asking (steward jobs add --allow-notify).
	if _, err := autonomy.Setup(ctx, e.App.Store, e.owner); err != nil {
		t.Fatal(err)
	}
	for _, job := range []string{autonomy.JobMorningBriefing, autonomy.JobInboxScan} {
		if _, err := e.App.Scheduler.AddSchedule(ctx, e.owner, job, map[string]string{autonomy.JobMorningBriefing: "0 7 * * *"}[job]+
			map[string]string{autonomy.JobInboxScan: "0 * * * *"}[job], "Europe/Berlin", nil); err != nil {
			t.Fatal(err)
		}
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	now := time.Now().In(berlin)
	start := time.Date(now.Year(), now.Month(), now.Day(), 8, 30, 0, 0, berlin)
	if _, err := e.App.Accounts.CreateEvent(ctx, e.owner, steward.EventDraft{Title: "School run", Start: start, End: start.Add(30 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	e.append(t, "INBOX", "From: School <office@school.example>\nSubject: Trip on Friday\n\nPlease sign the form.\n")
	if err := e.Store.WithOwner(ctx, e.owner, func(tx *store.Tx) error {
		_, err := tx.Tasks.CreateTask(ctx, steward.NewTask{Title: "renew passport"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	run, _, err := e.App.Scheduler.RunJob(ctx, e.owner, autonomy.JobMorningBriefing, time.Now().Truncate(time.Second), store.RunByCLI)
	if err != nil || run.Status != store.RunCompleted {
		t.Fatalf("briefing run: %+v, %v", run, err)
	}
	notes, err := e.App.Activity.Notifications(ctx, e.owner)
	if err != nil || len(notes) != 1 || notes[0].Title != "Morning briefing" {
		t.Fatalf("notifications: %+v, %v", notes, err)
	}
	for _, want := range []string{"Today's events:\n- 08:30–09:00 School run", "Mail since the last briefing:\n- School <office@school.example> — Trip on Friday",
		"Open tasks:\n- renew passport"} {
		if !strings.Contains(notes[0].Message, want) {
			t.Errorf("the briefing lacks %q:\n%s", want, notes[0].Message)
		}
	}
	story, err := e.App.Activity.Story(ctx, e.owner, *run.TurnID)
	if err != nil {
		t.Fatal(err)
	}
	tainted := false
	for _, ev := range story.Events {
		tainted = tainted || (ev.Kind == "turn_tainted" && strings.Contains(string(ev.Data), "job:morning-briefing"))
	}
	if !tainted {
		t.Errorf("the briefing's turn, carrying mail, is not tainted: %+v", story.Events)
	}

	// The scan: nothing new since the briefing's mail was read? It reads unread mail since its
	// last run (the last hour the first time): one ordinary message, nothing urgent.
	scan := func(at time.Time) store.JobRun {
		run, _, err := e.App.Scheduler.RunJob(ctx, e.owner, autonomy.JobInboxScan, at.Truncate(time.Second), store.RunByCLI)
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	if run := scan(time.Now()); run.Status != store.RunCompleted || !strings.Contains(turnAnswer(t, e, run), "Nothing urgent in 1 new message") {
		t.Errorf("first scan: %+v", run)
	}
	if notes, _ := e.App.Activity.Notifications(ctx, e.owner); len(notes) != 1 {
		t.Errorf("a scan without urgent mail notified: %+v", notes)
	}
	time.Sleep(1100 * time.Millisecond) // the next scan starts a second later: mail since then only
	if run := scan(time.Now()); run.Status != store.RunSkipped || run.TurnID != nil {
		t.Errorf("a scan with no new mail: %+v, want skipped without a turn", run)
	}
	e.append(t, "INBOX", "From: Boss <boss@example.com>\nSubject: URGENT: server down\nImportance: high\n\nCall me.\n")
	time.Sleep(1100 * time.Millisecond)
	if run := scan(time.Now()); run.Status != store.RunCompleted {
		t.Errorf("urgent scan: %+v", run)
	}
	notes, _ = e.App.Activity.Notifications(ctx, e.owner)
	if len(notes) != 2 || notes[0].Title != "Urgent mail" || !strings.Contains(notes[0].Message, "Boss <boss@example.com> — URGENT: server down") {
		t.Errorf("after urgent mail: %+v", notes)
	}
}

// turnAnswer is the answer of a run's turn.
func turnAnswer(t *testing.T, e env, run store.JobRun) string {
	t.Helper()
	if run.TurnID == nil {
		return ""
	}
	v, err := e.App.Runner.Turn(context.Background(), e.owner, *run.TurnID)
	if err != nil {
		t.Fatal(err)
	}
	return v.Answer
}

// TestWeeklyReviewOffline: with the demo model the weekly review delivers a listing — each
// project with its open and done tasks, then the other open tasks — instead of a run that
// completes and sends nothing.
func TestWeeklyReviewOffline(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil, nil)
	ctx := context.Background()
	// The owner lets jobs deliver without asking (steward jobs add --allow-notify).
	if _, err := autonomy.Setup(ctx, e.App.Store, e.owner); err != nil {
		t.Fatal(err)
	}
	if _, err := e.App.Scheduler.AddSchedule(ctx, e.owner, autonomy.JobWeeklyReview, "0 17 * * fri", "Europe/Berlin", nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.WithOwner(ctx, e.owner, func(tx *store.Tx) error {
		if _, _, err := tx.Tasks.UpsertFact(ctx, steward.NewFact{Kind: steward.FactKindProject, Subject: "Garden", Content: "Re-planting the garden this spring"}); err != nil {
			return err
		}
		for _, title := range []string{"buy seeds for the garden", "renew passport"} {
			if _, err := tx.Tasks.CreateTask(ctx, steward.NewTask{Title: title}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	run, _, err := e.App.Scheduler.RunJob(ctx, e.owner, autonomy.JobWeeklyReview, time.Now().Truncate(time.Second), store.RunByCLI)
	if err != nil || run.Status != store.RunCompleted {
		t.Fatalf("review run: %+v, %v", run, err)
	}
	notes, err := e.App.Activity.Notifications(ctx, e.owner)
	if err != nil || len(notes) != 1 || notes[0].Title != "Weekly review" {
		t.Fatalf("notifications: %+v, %v; want the weekly review delivered", notes, err)
	}
	for _, want := range []string{"Garden\nOpen:\n- buy seeds for the garden", "Other open tasks:\n- renew passport"} {
		if !strings.Contains(notes[0].Message, want) {
			t.Errorf("the review lacks %q:\n%s", want, notes[0].Message)
		}
	}
}
