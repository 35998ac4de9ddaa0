package accounts_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// everyMinute is an invitation repeating every minute since 1970. Each occurrence lasts
// until 2100: Radicale (3.1.8) answers a time-range query by walking a series from its
// DTSTART to the first occurrence overlapping the range, which takes it minutes for a short
// one (internal/calendar tests those).
const everyMinute = "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//spam//EN\nBEGIN:VEVENT\nUID:spam@example.net\nDTSTAMP:20260101T000000Z\n" +
	"DTSTART:19700101T000000Z\nDTEND:21000101T000000Z\nSUMMARY:Claim your prize\nRRULE:FREQ=MINUTELY\nEND:VEVENT\nEND:VCALENDAR\n"

// TestDenseInvitationAndHugeSubject: with an invitation repeating every minute since 1970
// and a mail whose subject is 2 MB, list_events and find_free_time list the series once,
// saying so, and find the day's free time around the real appointment (the demo model's
// answer says so too); the morning briefing,
// run by the scheduler, is delivered with each item cut — the subject's start, the series
// once — and every section after them.
func TestDenseInvitationAndHugeSubject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	now := time.Now().In(berlin)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, berlin)
	if err := servers.PutEvent("trent", "spam", everyMinute); err != nil {
		t.Fatal(err)
	}

	var results []string
	model := scripted.New(
		func(llm.Request) (llm.Response, error) {
			return scripted.Calls(scripted.Call("l1", "list_events", `{}`),
				scripted.Call("f1", "find_free_time", `{"duration_minutes":60}`)), nil
		},
		func(req llm.Request) (llm.Response, error) {
			for _, p := range req.Messages[len(req.Messages)-1].Parts {
				if p.ToolResult != nil {
					results = append(results, string(p.ToolResult.Output))
				}
			}
			return scripted.Text("Done."), nil
		})
	tools := newEnv(t, "trent", model, nil)
	if _, err := tools.App.Accounts.CreateEvent(ctx, tools.owner, steward.EventDraft{Title: "School run", Start: day.Add(15 * time.Hour), End: day.Add(16 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if v := tools.start(t, "what is on today, and when am I free for an hour?"); v.Status != steward.StatusCompleted || len(results) != 2 {
		t.Fatalf("turn: %+v, results %d", v, len(results))
	}
	if n := strings.Count(results[0], "Claim your prize"); n != 1 || !strings.Contains(results[0], "repeats every minute") ||
		!strings.Contains(results[0], "too many to list") || !strings.Contains(results[0], "School run") || strings.Contains(results[0], "1970") {
		t.Errorf("list_events lists the series %d times (want once, saying so, beside the school run, no 1970):\n%.2000s", n, results[0])
	}
	if !strings.Contains(results[1], day.Add(9*time.Hour).Format(time.RFC3339)) || !strings.Contains(results[1], day.Add(16*time.Hour).Format(time.RFC3339)) {
		t.Errorf("find_free_time: %.1000s; want 09:00–15:00 and 16:00–18:00", results[1])
	}

	// The demo model's answer, then the briefing with it, through the scheduler.
	e := newEnv(t, "trent", nil, nil)
	if v := e.start(t, "what's on today"); strings.Count(v.Answer, "Claim your prize") != 1 || !strings.Contains(v.Answer, "repeats every minute") {
		t.Errorf("the demo's answer lists the series other than once, saying so:\n%.1500s", v.Answer)
	}
	// The owner lets jobs deliver without asking (steward jobs add --allow-notify).
	if _, err := autonomy.Setup(ctx, e.App.Store, e.owner); err != nil {
		t.Fatal(err)
	}
	if _, err := e.App.Scheduler.AddSchedule(ctx, e.owner, autonomy.JobMorningBriefing, "0 7 * * *", "Europe/Berlin", nil); err != nil {
		t.Fatal(err)
	}
	subject := "Prize " + strings.Repeat("x", 2<<20)
	e.append(t, "INBOX", "From: Lottery <win@lottery.example>\nSubject: "+subject+"\n\nClaim it.\n")
	if err := e.Store.WithOwner(ctx, e.owner, func(tx *store.Tx) error {
		_, err := tx.Tasks.CreateTask(ctx, steward.NewTask{Title: "renew passport"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	run, _, err := e.App.Scheduler.RunJob(ctx, e.owner, autonomy.JobMorningBriefing, time.Now().Truncate(time.Second), store.RunByCLI)
	if err != nil || run.Status != store.RunCompleted {
		t.Fatalf("briefing run: %+v, %v; want it delivered", run, err)
	}
	notes, err := e.App.Activity.Notifications(ctx, e.owner)
	if err != nil || len(notes) != 1 || notes[0].Title != "Morning briefing" {
		t.Fatalf("notifications: %+v, %v", notes, err)
	}
	msg := notes[0].Message
	if strings.Count(msg, "Claim your prize") != 1 || !strings.Contains(msg, "repeats every minute") || strings.Contains(msg, "1970") {
		t.Errorf("the briefing lists the series other than once, saying so:\n%.1500s", msg)
	}
	if !strings.Contains(msg, "Lottery <win@lottery.example> — Prize xxx") || !strings.Contains(msg, "x…") || strings.Count(msg, "x") > 1000 {
		t.Errorf("the briefing does not quote the subject's start, cut:\n%.1500s", msg)
	}
	if !strings.Contains(msg, "School run") || !strings.Contains(msg, "Open tasks:\n- renew passport") {
		t.Errorf("the briefing lost what follows the long items:\n%.3000s", msg)
	}
}
