package store_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	. "github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// autonomySeed is what seedAutonomy creates for one owner.
type autonomySeed struct {
	schedule     Schedule
	run          JobRun // a running scheduled run
	webhook      Webhook
	secret       string
	webhookRun   uuid.UUID // a queued webhook run
	notification uuid.UUID
}

var seedTime = time.Date(2026, 3, 29, 5, 0, 0, 0, time.UTC)

// seedAutonomy gives an owner one row in each autonomy table, through the store's methods.
func seedAutonomy(ctx context.Context, tx *Tx, name string) (autonomySeed, error) {
	var sd autonomySeed
	var err error
	if sd.schedule, err = tx.Schedules.Create(ctx, NewSchedule{Job: "morning-briefing", Cron: "0 7 * * *", Timezone: "Europe/Berlin"}); err != nil {
		return sd, err
	}
	var claimed bool
	sd.run, claimed, err = tx.Runs.Claim(ctx, NewRun{ScheduleID: &sd.schedule.ID, Job: "morning-briefing", Trigger: RunBySchedule,
		ScheduledFor: seedTime, Status: RunRunning, Now: time.Now()})
	if err != nil || !claimed {
		return sd, errors.Join(err, errors.New("seed run not claimed"))
	}
	sd.secret = randomSecret()
	if sd.webhook, err = tx.Webhooks.Create(ctx, "wh_"+name+"_"+strings.Repeat("x", 16), "github", sd.secret); err != nil {
		return sd, err
	}
	if sd.webhookRun, _, err = tx.Deliveries.Enqueue(ctx, sd.webhook.ID, "msg_1", []byte(`{"from":"`+name+`"}`),
		NewRun{Job: "webhook:github", Trigger: RunByWebhook, ScheduledFor: time.Now(), Now: time.Now()}); err != nil {
		return sd, err
	}
	if _, err = tx.Channels.SetWebhook(ctx, "https://example.com/"+name, ""); err != nil {
		return sd, err
	}
	notes, err := tx.Deliveries.Notifications(ctx, 10)
	if err != nil || len(notes) != 1 {
		return sd, errors.Join(err, errors.New("seed wants the owner's one notification"))
	}
	sd.notification = notes[0].ID
	return sd, nil
}

func randomSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:])
}

// probeAutonomy: through every autonomy method, bob sees, changes and claims none of alice's
// rows.
func probeAutonomy(t *testing.T, ctx context.Context, s *Store, a, b seeded) {
	covers("Channels.Default", "Deliveries.Claim", "Runs.Claim", "Schedules.Count", "Deliveries.Enqueue", "Runs.Finish", "Deliveries.MarkDelivered", "Deliveries.MarkFailed", "Deliveries.Notifications", "Runs.Previous", "Webhooks.Revoke", "Runs.Get", "Runs.List", "Schedules.ByJob", "Schedules.List", "Runs.StartQueued", "Webhooks.EventOf", "Webhooks.List",
		"Runs.AttachTurn", "Runs.RunningOfTurn")
	aa, ba := a.auto, b.auto
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrConflict) {
			t.Errorf("%s on alice's row: err = %v, want not found or conflict", what, err)
		}
	}
	only := func(what string, n, want int, err error) {
		t.Helper()
		if err != nil || n != want {
			t.Errorf("%s: bob sees %d rows (err %v), want his own %d", what, n, err, want)
		}
	}
	// Alice's running run carries her turn; bob can neither find it by that turn nor attach
	// his own turn to it.
	err := s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		_, err := tx.Runs.AttachTurn(ctx, aa.run.ID, a.turn)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		if run, ok, err := tx.Runs.RunningOfTurn(ctx, a.turn); err != nil || ok {
			t.Errorf("bob's run of alice's turn: %+v, %v, %v; want none", run, ok, err)
		}
		_, err := tx.Runs.AttachTurn(ctx, aa.run.ID, b.turn)
		refused("job_runs attach turn", err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		if run, ok, err := tx.Runs.RunningOfTurn(ctx, a.turn); err != nil || !ok || run.ID != aa.run.ID {
			t.Errorf("alice's run of her turn after bob: %+v, %v, %v; want her running run", run, ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		scheds, err := tx.Schedules.List(ctx)
		only("schedules list", len(scheds), 1, err)
		sc, err := tx.Schedules.ByJob(ctx, "morning-briefing")
		if err != nil || sc.ID != ba.schedule.ID {
			t.Errorf("schedule by job: %v, %v; want bob's own", sc.ID, err)
		}
		n, err := tx.Schedules.Count(ctx)
		only("schedules count", n, 1, err)

		runs, err := tx.Runs.List(ctx, "", 100)
		only("job_runs list", len(runs), 2, err)
		_, err = tx.Runs.Get(ctx, aa.run.ID)
		refused("job_runs get", err)
		_, err = tx.Runs.Finish(ctx, aa.run.ID, RunCompleted, nil, "", time.Now())
		refused("job_runs finish", err)
		_, err = tx.Runs.StartQueued(ctx, aa.webhookRun, RunRunning, "", time.Now())
		refused("job_runs start queued", err)
		_, claimed, err := tx.Runs.Claim(ctx, NewRun{ScheduleID: &aa.schedule.ID, Job: "morning-briefing", Trigger: RunBySchedule,
			ScheduledFor: seedTime.Add(time.Hour), Status: RunRunning, Now: time.Now()})
		if err != nil || claimed {
			t.Errorf("claiming a run on alice's schedule: claimed %v, err %v; want nothing claimed", claimed, err)
		}
		if prev, ok, err := tx.Runs.Previous(ctx, "morning-briefing", uuid.Nil); err != nil || (ok && prev.OwnerID != b.owner.ID) {
			t.Errorf("previous run: %+v, %v, %v", prev, ok, err)
		}

		hooks, err := tx.Webhooks.List(ctx)
		only("webhooks list", len(hooks), 1, err)
		refused("webhooks revoke", tx.Webhooks.Revoke(ctx, aa.webhook.HookID))
		_, err = tx.Webhooks.EventOf(ctx, aa.webhookRun)
		refused("webhook_deliveries read", err)

		ch, err := tx.Channels.Default(ctx)
		if err != nil || ch.URL != "https://example.com/bob" {
			t.Errorf("channel: %+v, %v; want bob's own", ch, err)
		}
		notes, err := tx.Deliveries.Notifications(ctx, 100)
		only("notifications with delivery", len(notes), 1, err)
		claimedNotes, err := tx.Deliveries.Claim(ctx, time.Now().Add(time.Minute), time.Minute, time.Time{}, 100)
		only("notifications claim", len(claimedNotes), 1, err)
		refused("notifications mark delivered", tx.Deliveries.MarkDelivered(ctx, aa.notification, time.Now()))
		refused("notifications mark failed", tx.Deliveries.MarkFailed(ctx, aa.notification, nil, "x"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		_, _, err := tx.Deliveries.Enqueue(ctx, aa.webhook.ID, "planted", []byte("x"), NewRun{Job: "webhook:github",
			Trigger: RunByWebhook, ScheduledFor: time.Now(), Now: time.Now()})
		return err
	})
	if err == nil {
		t.Errorf("bob enqueued a delivery on alice's webhook")
	}
	err = s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		run, err := tx.Runs.Get(ctx, aa.webhookRun)
		if err != nil || run.Status != RunQueued {
			t.Errorf("alice's queued run after bob: %+v, %v", run, err)
		}
		hooks, err := tx.Webhooks.List(ctx)
		if err != nil || len(hooks) != 1 || hooks[0].RevokedAt != nil {
			t.Errorf("alice's webhook after bob: %+v, %v", hooks, err)
		}
		notes, err := tx.Deliveries.Notifications(ctx, 100)
		for _, n := range notes {
			if n.DeliveredAt != nil || n.DeliveryAttempts != 0 {
				t.Errorf("alice's notification after bob: %+v", n)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAutonomyDoor: the Door's scans see every owner; the application role can write a
// webhook secret but never read it back.
func TestAutonomyDoor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t, 2)
	s, door := db.Store, db.Door
	a := seed(t, ctx, s, door, "alice")
	b := seed(t, ctx, s, door, "bob")

	scans, err := door.ScanSchedules(ctx)
	if err != nil || len(scans) != 2 {
		t.Fatalf("scan schedules: %d, %v; want 2", len(scans), err)
	}
	for _, sc := range scans {
		if !sc.Since.Equal(seedTime) {
			t.Errorf("schedule %s: since %s, want its last run's time %s", sc.Job, sc.Since, seedTime)
		}
	}
	queued, err := door.ScanDueWork(ctx, map[string]time.Time{"isolation_probe": time.Now()}, time.Now(), 10)
	if err != nil || len(queued) != 2 {
		t.Fatalf("scan due work: %v, %v; want both owners' items", queued, err)
	}
	owners, err := door.ScanChannelOwners(ctx)
	if err != nil || len(owners) != 2 {
		t.Fatalf("scan channel owners: %v, %v", owners, err)
	}
	route, err := door.LookupWebhook(ctx, a.auto.webhook.HookID)
	if err != nil || route.OwnerID != a.owner.ID || route.Secret != a.auto.secret || route.Source != "github" {
		t.Fatalf("lookup alice's hook: %+v, %v", route.Webhook, err)
	}
	if _, err := door.LookupWebhook(ctx, "wh_nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown hook: %v, want ErrNotFound", err)
	}

	err = s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		var secret string
		return tx.RawRow(ctx, "SELECT secret FROM webhooks WHERE owner_id = $1", b.owner.ID).Scan(&secret)
	})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Fatalf("the app role reading its own webhook secret: %v, want permission denied", err)
	}
}

// TestClaimRunOnce: the same scheduled time claimed twice, concurrently, is one run.
func TestClaimRunOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.New(t)
	door, err := OpenDoor(ctx, d.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	s, err := Open(ctx, d.AppURL, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := seed(t, ctx, s, door, "alice")
	at := seedTime.Add(24 * time.Hour)
	results := make(chan bool, 8)
	for range 8 {
		go func() {
			var claimed bool
			err := s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
				var err error
				_, claimed, err = tx.Runs.Claim(ctx, NewRun{ScheduleID: &a.auto.schedule.ID, Job: "morning-briefing",
					Trigger: RunBySchedule, ScheduledFor: at, Status: RunRunning, Now: time.Now()})
				time.Sleep(20 * time.Millisecond) // hold the lock a while
				return err
			})
			if err != nil {
				t.Error(err)
			}
			results <- claimed
		}()
	}
	n := 0
	for range 8 {
		if <-results {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d claims won, want 1", n)
	}
	// Without a schedule row, (owner, job, time) still keys a scheduled run.
	err = s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		_, claimed, err := tx.Runs.Claim(ctx, NewRun{Job: "morning-briefing", Trigger: RunBySchedule, ScheduledFor: at,
			Status: RunRunning, Now: time.Now()})
		if claimed {
			t.Errorf("a direct run for the same job and time was claimed again")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
