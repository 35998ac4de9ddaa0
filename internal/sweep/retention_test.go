package sweep_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/sweep"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestRetentionDeletesOldRowsOnly: the sweep, through the runtime's door role, deletes the
// audit events, webhook deliveries, finished memory outbox items and finished job runs older
// than their retention, in batches, and keeps the young ones, an unfinished outbox item, the
// newest run of a schedule, and — whatever the configuration says — audit events younger
// than 30 days.
func TestRetentionDeletesOldRowsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 2)
	alice, _ := o.Owner(t, "alice")
	door, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	su, err := pgx.Connect(ctx, o.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	// Rows of every age, written as the superuser with triggers and foreign keys off.
	_, err = su.Exec(ctx, `SET session_replication_role = replica;
		INSERT INTO audit_log (owner_id, kind, created_at)
		SELECT $1::uuid, 'old', now() - interval '400 days' FROM generate_series(1, 5)
		UNION ALL SELECT $1::uuid, 'month', now() - interval '40 days'
		UNION ALL SELECT $1::uuid, 'young', now() - interval '10 days';
		INSERT INTO webhooks (id, owner_id, hook_id, source, secret) VALUES
			('00000000-0000-0000-0000-00000000000a', $1::uuid, 'wh_aaaaaaaaaaaaaaaaaaaa', 'bank', 'whsec_aaaaaaaaaaaaaaaaaaaa');
		INSERT INTO job_runs (id, owner_id, schedule_id, job, trigger, scheduled_for, status, finished_at, created_at) VALUES
			('00000000-0000-0000-0000-000000000001', $1::uuid, NULL, 'old', 'webhook', now() - interval '200 days', 'completed', now() - interval '200 days', now() - interval '200 days'),
			('00000000-0000-0000-0000-000000000002', $1::uuid, NULL, 'young', 'webhook', now() - interval '2 days', 'completed', now() - interval '2 days', now() - interval '2 days'),
			('00000000-0000-0000-0000-000000000003', $1::uuid, '00000000-0000-0000-0000-0000000000b0', 'daily', 'schedule', now() - interval '300 days', 'completed', now() - interval '300 days', now() - interval '300 days'),
			('00000000-0000-0000-0000-000000000004', $1::uuid, '00000000-0000-0000-0000-0000000000b0', 'daily', 'schedule', now() - interval '299 days', 'completed', now() - interval '299 days', now() - interval '299 days'),
			('00000000-0000-0000-0000-000000000005', $1::uuid, NULL, 'stuck', 'cli', now() - interval '200 days', 'running', NULL, now() - interval '200 days');
		INSERT INTO webhook_deliveries (owner_id, webhook_id, message_id, run_id, body, received_at) VALUES
			($1::uuid, '00000000-0000-0000-0000-00000000000a', 'm-old', '00000000-0000-0000-0000-000000000002', '\x7b7d', now() - interval '60 days'),
			($1::uuid, '00000000-0000-0000-0000-00000000000a', 'm-young', '00000000-0000-0000-0000-000000000002', '\x7b7d', now() - interval '1 day');
		INSERT INTO memory_outbox (owner_id, turn_id, conversation_id, created_at, done_at, failed_at)
		SELECT $1::uuid, gen_random_uuid(), gen_random_uuid(), now() - interval '30 days', now() - interval '30 days', NULL FROM generate_series(1, 3)
		UNION ALL SELECT $1::uuid, gen_random_uuid(), gen_random_uuid(), now() - interval '30 days', NULL, now() - interval '20 days'
		UNION ALL SELECT $1::uuid, gen_random_uuid(), gen_random_uuid(), now() - interval '30 days', NULL, NULL
		UNION ALL SELECT $1::uuid, gen_random_uuid(), gen_random_uuid(), now() - interval '1 day', now() - interval '1 day', NULL;
		SET session_replication_role = DEFAULT`, pgx.QueryExecModeSimpleProtocol, alice.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	left := func(sql string) string {
		var s string
		if err := su.QueryRow(ctx, sql).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	sw := &sweep.Sweeper{Store: o.Store, Owners: door, Retirer: door, Retention: sweep.Retention{
		Audit: 365 * 24 * time.Hour, WebhookDeliveries: 30 * 24 * time.Hour, MemoryOutbox: 7 * 24 * time.Hour,
		JobRuns: 90 * 24 * time.Hour, Batch: 2}}
	swept, err := sw.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (sweep.Retired{Audit: 5, WebhookDeliveries: 1, MemoryOutbox: 4, JobRuns: 2}); swept.Retired != want {
		t.Errorf("retired %+v; want %+v", swept.Retired, want)
	}
	if got := left(`SELECT string_agg(kind, ',' ORDER BY id) FROM audit_log`); got != "month,young" {
		t.Errorf("audit events left: %s; want month,young", got)
	}
	if got := left(`SELECT string_agg(message_id, ',') FROM webhook_deliveries`); got != "m-young" {
		t.Errorf("webhook deliveries left: %s; want m-young", got)
	}
	if got := left(`SELECT count(*) FILTER (WHERE done_at IS NULL AND failed_at IS NULL) || ' pending, ' || count(*) || ' in all' FROM memory_outbox`); got != "1 pending, 2 in all" {
		t.Errorf("memory outbox left: %s; want the pending item and the young one", got)
	}
	if got := left(`SELECT string_agg(right(id::text, 1), ',' ORDER BY id) FROM job_runs`); got != "2,4,5" {
		t.Errorf("job runs left: %s; want 2,4,5 (young, the schedule's newest, unfinished)", got)
	}

	// An hour of audit retention takes the 40-day-old event but keeps the 10-day-old one: the
	// database refuses to retire audit events younger than 30 days.
	sw.Retention = sweep.Retention{Audit: time.Hour}
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := left(`SELECT string_agg(kind, ',' ORDER BY id) FROM audit_log`); got != "young" {
		t.Errorf("audit events left with an hour's retention: %s; want young (kept: younger than 30 days)", got)
	}
}

// TestAuditStaysAppendOnlyForTheApp: the application role can neither delete an audit event
// nor call the retention functions; only the door's retention deletes.
func TestAuditStaysAppendOnlyForTheApp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.New(t)
	app, err := pgx.Connect(ctx, d.AppURL)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(ctx)
	for _, sql := range []string{`DELETE FROM audit_log`, `SELECT retire_audit(now(), 10)`, `SELECT retire_job_runs(now(), 10)`} {
		if _, err := app.Exec(ctx, sql); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s as steward_app: %v; want permission denied", sql, err)
		}
	}
}
