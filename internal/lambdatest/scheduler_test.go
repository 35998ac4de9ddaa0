//go:build unix

package lambdatest

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// autonomyFixture is a fresh database with one owner, and the store-level autonomy APIs the
// CLI uses (schedules, webhooks) to set it up and read it back.
type autonomyFixture struct {
	t     *testing.T
	ctx   context.Context
	db    testdb.DB
	owner uuid.UUID
	store *store.Store
	sched *autonomy.Scheduler
	hooks *autonomy.Webhooks
}

func newAutonomyFixture(t *testing.T, name string) *autonomyFixture {
	t.Helper()
	ctx := context.Background()
	db := testdb.New(t)
	door, err := store.OpenDoor(ctx, db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	owner, _, err := door.CreateOwner(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, db.AppURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	runner := &autonomy.Runner{Store: st}
	return &autonomyFixture{t: t, ctx: ctx, db: db, owner: owner.ID, store: st,
		sched: &autonomy.Scheduler{Runner: runner, Directory: door},
		hooks: &autonomy.Webhooks{Runner: runner, Directory: door}}
}

// env is the functions' environment: this database, no Gemini key (the demo model).
func (f *autonomyFixture) env() []string {
	return []string{
		"APP_DATABASE_URL=" + f.db.AppURL,
		"DOOR_DATABASE_URL=" + f.db.DoorURL,
		"STEWARD_LOG_LEVEL=debug",
		"AWS_LAMBDA_FUNCTION_TIMEOUT=600",
	}
}

// runs lists the owner's job_runs of job ("" for all), newest first.
func (f *autonomyFixture) runs(job string) []store.JobRun {
	f.t.Helper()
	var runs []store.JobRun
	err := f.store.WithOwner(f.ctx, f.owner, func(tx *store.Tx) error {
		var err error
		runs, err = tx.Runs.List(f.ctx, job, 100)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return runs
}

// turn reads one of the owner's turns.
func (f *autonomyFixture) turn(id uuid.UUID) steward.Turn {
	f.t.Helper()
	var turn steward.Turn
	err := f.store.WithOwner(f.ctx, f.owner, func(tx *store.Tx) error {
		var err error
		turn, err = tx.Turns.Get(f.ctx, id)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return turn
}

// checkRecorded fails unless run ran to a recorded outcome — a turn that completed or
// suspended on a write for the owner's approval — with the turn's trigger.
func (f *autonomyFixture) checkRecorded(run store.JobRun, trigger steward.Trigger) {
	f.t.Helper()
	if run.Status != store.RunCompleted && run.Status != store.RunSuspended {
		f.t.Fatalf("run %s of %s: status %s (%s), want completed or suspended", run.ID, run.Job, run.Status, run.Error)
	}
	if run.TurnID == nil || run.StartedAt == nil || run.FinishedAt == nil {
		f.t.Fatalf("run %+v: the outcome is not recorded (turn, started, finished)", run)
	}
	if turn := f.turn(*run.TurnID); turn.Trigger != trigger {
		f.t.Fatalf("run %s: turn %s has trigger %s, want %s", run.ID, turn.ID, turn.Trigger, trigger)
	}
	f.t.Logf("%s run for %s: %s, turn %s", run.Job, run.ScheduledFor.Format(time.RFC3339), run.Status, *run.TurnID)
}

// invokeScheduler sends one scheduler event (the JSON EventBridge Scheduler delivers: the
// rule's Input with its placeholders filled) and decodes the report.
func (e *emulator) invokeScheduler(t *testing.T, input string) autonomy.Report {
	t.Helper()
	payload := e.invoke(t, json.RawMessage(input))
	var out struct {
		autonomy.Report
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	}
	if err := json.Unmarshal(payload, &out); err != nil {
		t.Fatalf("%s: not a report: %q: %v", e.name, payload, err)
	}
	if out.ErrorType != "" || out.ErrorMessage != "" {
		t.Fatalf("%s: the function failed on %s: %s: %s\n%s", e.name, input, out.ErrorType, out.ErrorMessage, e.logs.String())
	}
	return out.Report
}

// TestSchedulerUnderTheLambdaEmulator: the functions/scheduler bootstrap, under the AWS
// Lambda Runtime Interface Emulator, handles the event EventBridge Scheduler sends for the
// template's tick — {"scheduled_time": …} — exactly once per scheduled time: the same event
// delivered concurrently to two function instances, then retried, runs the owner's due
// morning briefing once, recorded with its outcome. A direct job event from a dedicated rule
// works too, and is idempotent on its scheduled time.
func TestSchedulerUnderTheLambdaEmulator(t *testing.T) {
	t.Parallel()
	rie := findRIE(t)
	f := newAutonomyFixture(t, "scheduled")
	v, err := f.sched.AddSchedule(f.ctx, f.owner, autonomy.JobMorningBriefing, "0 7 * * *", "Europe/Berlin", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := autonomy.Setup(f.ctx, f.store, f.owner); err != nil { // the owner allows notify
		t.Fatal(err)
	}
	if v.Next == nil {
		t.Fatal("the schedule has no next firing time")
	}
	due := v.Next.UTC() // the next 07:00 in Berlin: the time the rule's tick is scheduled for

	bins := buildBootstraps(t, runtime.GOARCH, "functions/scheduler")
	checkInitError(t, "scheduler", bins["functions/scheduler"])
	first := startRIE(t, rie, "scheduler-1", bins["functions/scheduler"], f.env())
	second := startRIE(t, rie, "scheduler-2", bins["functions/scheduler"], f.env())

	// 1. The tick, delivered twice at once (to two instances), then once more (a retry).
	tick := `{"scheduled_time":"` + due.Format(time.RFC3339) + `"}`
	var mu sync.Mutex
	var claimed []store.JobRun
	var wg sync.WaitGroup
	for _, e := range []*emulator{first, second} {
		wg.Go(func() {
			rep := e.invokeScheduler(t, tick)
			mu.Lock()
			defer mu.Unlock()
			claimed = append(claimed, rep.Runs...)
		})
	}
	wg.Wait()
	if rep := first.invokeScheduler(t, tick); len(rep.Runs) != 0 {
		t.Errorf("the retried tick claimed %d more runs: %+v", len(rep.Runs), rep.Runs)
	}
	if len(claimed) != 1 {
		t.Fatalf("the tick delivered twice concurrently claimed %d runs, want 1: %+v", len(claimed), claimed)
	}
	runs := f.runs(autonomy.JobMorningBriefing)
	if len(runs) != 1 {
		t.Fatalf("%d job_runs after three deliveries of one tick, want 1: %+v", len(runs), runs)
	}
	run := runs[0]
	if !run.ScheduledFor.Equal(due) || run.Trigger != store.RunBySchedule || run.ScheduleID == nil || *run.ScheduleID != v.ID {
		t.Fatalf("run %+v, want the schedule's run for %s", run, due)
	}
	if claimed[0].ID != run.ID || claimed[0].Status != run.Status {
		t.Errorf("the report says %+v, the database %+v", claimed[0], run)
	}
	f.checkRecorded(run, steward.TriggerSchedule)

	// 2. A direct job event, as a dedicated rule without a time sends it: runs the job now.
	direct := `{"job":"morning-briefing","owner_id":"` + f.owner.String() + `"}`
	rep := second.invokeScheduler(t, direct)
	if len(rep.Runs) != 1 || rep.Runs[0].Job != autonomy.JobMorningBriefing || rep.Runs[0].OwnerID != f.owner {
		t.Fatalf("the direct event ran %+v, want one morning briefing for the owner", rep.Runs)
	}
	f.checkRecorded(rep.Runs[0], steward.TriggerSchedule)

	// 3. The template's dedicated-rule Input carries its scheduled time: retried, it runs once.
	at := due.Add(24 * time.Hour)
	keyed := `{"job":"morning-briefing","owner_id":"` + f.owner.String() + `","scheduled_time":"` + at.Format(time.RFC3339) + `"}`
	if rep := first.invokeScheduler(t, keyed); len(rep.Runs) != 1 || !rep.Runs[0].ScheduledFor.Equal(at) {
		t.Fatalf("the keyed direct event ran %+v, want one run for %s", rep.Runs, at)
	}
	if rep := second.invokeScheduler(t, keyed); len(rep.Runs) != 0 {
		t.Fatalf("the keyed direct event retried ran %+v again", rep.Runs)
	}
	if runs := f.runs(autonomy.JobMorningBriefing); len(runs) != 3 {
		t.Fatalf("%d job_runs, want 3 (the tick's, the direct one, the keyed one): %+v", len(runs), runs)
	}

	// 4. An Input with a misspelt field is refused (retried, then dead-lettered), not taken
	// for a tick.
	payload := first.invoke(t, json.RawMessage(`{"scheduled_tme":"`+due.Format(time.RFC3339)+`"}`))
	var failed struct {
		ErrorMessage string `json:"errorMessage"`
	}
	if json.Unmarshal(payload, &failed) != nil || failed.ErrorMessage == "" {
		t.Errorf("a misspelt Input was accepted: %s", payload)
	}
}

// TestWebhookUnderTheLambdaEmulator: the functions/webhook bootstrap gets an HTTP API v2
// event for POST /webhooks/{hook_id} with a valid Standard Webhooks signature → 202 and one
// queued run; the same delivery again → 200, the same run, nothing new. The
// functions/scheduler bootstrap then runs the queued run from an {"owner_id","run_id"} event,
// as a webhook-triggered turn.
func TestWebhookUnderTheLambdaEmulator(t *testing.T) {
	t.Parallel()
	rie := findRIE(t)
	f := newAutonomyFixture(t, "hooked")
	hook, err := f.hooks.Create(f.ctx, f.owner, "github")
	if err != nil {
		t.Fatal(err)
	}
	bins := buildBootstraps(t, runtime.GOARCH, "functions/webhook", "functions/scheduler")
	checkInitError(t, "webhook", bins["functions/webhook"])
	webhook := startRIE(t, rie, "webhook", bins["functions/webhook"], f.env())
	scheduler := startRIE(t, rie, "scheduler", bins["functions/scheduler"], f.env())

	body := `{"action":"opened","issue":{"title":"Lambda emulator test","number":7}}`
	msgID, ts := "msg_lambda_1", strconv.FormatInt(time.Now().Unix(), 10)
	sig, err := autonomy.Sign(hook.Secret, msgID, ts, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	event := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "POST /webhooks/{hook_id}", RawPath: hook.URLPath,
		Headers: map[string]string{"content-type": "application/json",
			autonomy.HeaderID: msgID, autonomy.HeaderTimestamp: ts, autonomy.HeaderSignature: sig},
		PathParameters: map[string]string{"hook_id": hook.HookID},
		Body:           body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: "POST /webhooks/{hook_id}", Stage: "$default", RequestID: "webhook-1",
			DomainName: "api.execute-api.test.amazonaws.com",
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: hook.URLPath, Protocol: "HTTP/1.1", SourceIP: "192.0.2.1"},
		},
	}
	status, resp := webhook.invokeHTTPAPI(t, event)
	var accepted autonomy.Receipt
	if status != http.StatusAccepted || json.Unmarshal(resp, &accepted) != nil || accepted.RunID == uuid.Nil || accepted.Replay {
		t.Fatalf("valid delivery: %d %s, want 202 with a run id", status, resp)
	}
	status, resp = webhook.invokeHTTPAPI(t, event)
	var replay autonomy.Receipt
	if status != http.StatusOK || json.Unmarshal(resp, &replay) != nil || replay.RunID != accepted.RunID || !replay.Replay {
		t.Fatalf("the same delivery again: %d %s, want 200 with run %s as a replay", status, resp, accepted.RunID)
	}
	runs := f.runs("")
	if len(runs) != 1 || runs[0].ID != accepted.RunID || runs[0].Trigger != store.RunByWebhook || runs[0].Status != store.RunQueued {
		t.Fatalf("job_runs %+v, want one queued webhook run %s", runs, accepted.RunID)
	}

	// A bad signature is refused before anything is stored.
	bad := event
	bad.Headers = map[string]string{"content-type": "application/json",
		autonomy.HeaderID: "msg_lambda_2", autonomy.HeaderTimestamp: ts, autonomy.HeaderSignature: sig}
	if status, resp := webhook.invokeHTTPAPI(t, bad); status != http.StatusUnauthorized {
		t.Fatalf("a signature over another webhook-id: %d %s, want 401", status, resp)
	}

	// The scheduler function takes the queued run.
	rep := scheduler.invokeScheduler(t, `{"owner_id":"`+f.owner.String()+`","run_id":"`+accepted.RunID.String()+`"}`)
	if len(rep.Runs) != 1 || rep.Runs[0].ID != accepted.RunID {
		t.Fatalf("the scheduler ran %+v, want run %s", rep.Runs, accepted.RunID)
	}
	runs = f.runs("")
	if len(runs) != 1 {
		t.Fatalf("%d job_runs, want 1", len(runs))
	}
	f.checkRecorded(runs[0], steward.TriggerWebhook)
}
