package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// seedAutomations gives an owner a pending reminder and an active automation.
func seedAutomations(ctx context.Context, tx *Tx, name string) error {
	if _, err := tx.Reminders().Create(ctx, NewReminder{Text: "reminder of " + name, Timezone: "UTC", DueAt: time.Now().Add(time.Hour)}); err != nil {
		return err
	}
	_, err := tx.Automations().Create(ctx, NewAutomation{Instruction: "automation of " + name, Kind: AutomationSchedule,
		Cron: "0 9 * * *", Timezone: "UTC", Since: time.Now()})
	return err
}

// TestAutomationsIsolation: bob, as steward_app under row-level security, naming alice's
// reminder and automation, reads, cancels, fires, pauses, edits, deletes and counts nothing
// of hers; her rows stay as they were.
func TestAutomationsIsolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.Open(t, 2)
	alice, _ := d.Owner(t, "alice")
	bob, _ := d.Owner(t, "bob")
	var rem Reminder
	var auto Automation
	err := d.Store.WithOwner(ctx, alice.ID, func(tx *Tx) error {
		if err := seedAutomations(ctx, tx, "alice"); err != nil {
			return err
		}
		rs, err := tx.Reminders().List(ctx, true, 10)
		if err != nil || len(rs) != 1 {
			t.Fatalf("alice's reminders %v %v", rs, err)
		}
		as, err := tx.Automations().List(ctx, 10)
		if err != nil || len(as) != 1 {
			t.Fatalf("alice's automations %v %v", as, err)
		}
		rem, auto = rs[0], as[0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(2 * time.Hour)
	notFound := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("bob %s alice's: %v, want not found", what, err)
		}
	}
	err = d.Store.WithOwner(ctx, bob.ID, func(tx *Tx) error {
		_, err := tx.Reminders().Get(ctx, rem.ID)
		notFound("gets", err)
		_, err = tx.Reminders().Cancel(ctx, rem.ID)
		notFound("cancels", err)
		_, err = tx.Reminders().Fire(ctx, rem.ID, now, false)
		notFound("fires", err)
		_, err = tx.Automations().Get(ctx, auto.ID)
		notFound("gets", err)
		_, err = tx.Automations().SetStatus(ctx, auto.ID, AutomationPaused, "bob", now)
		notFound("pauses", err)
		_, err = tx.Automations().Edit(ctx, auto.ID, "forward everything", "* * * * *", "", "UTC", now)
		notFound("edits", err)
		_, err = tx.Automations().RecordOutcome(ctx, auto.ID, true, 1, "bob")
		notFound("fails", err)
		notFound("deletes", tx.Automations().Delete(ctx, auto.ID))
		if runs, err := tx.Automations().Runs(ctx, auto.ID, 10); err != nil || len(runs) != 0 {
			t.Errorf("bob reads alice's runs: %v %v", runs, err)
		}
		rs, _ := tx.Reminders().List(ctx, true, 10)
		as, _ := tx.Automations().List(ctx, 10)
		n, _ := tx.Reminders().Pending(ctx)
		m, _ := tx.Automations().Active(ctx)
		if len(rs)+len(as)+n+m != 0 {
			t.Errorf("bob sees %d reminders, %d automations, counts %d, %d", len(rs), len(as), n, m)
		}
		tz, err := tx.Account.Timezone(ctx)
		if err != nil || tz != "UTC" {
			t.Errorf("bob's zone %q %v", tz, err)
		}
		return tx.Account.SetTimezone(ctx, "Europe/Berlin")
	})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Store.WithOwner(ctx, alice.ID, func(tx *Tx) error {
		r, err := tx.Reminders().Get(ctx, rem.ID)
		a, err2 := tx.Automations().Get(ctx, auto.ID)
		tz, err3 := tx.Account.Timezone(ctx)
		if err != nil || err2 != nil || err3 != nil || r.Status != ReminderPending || a.Status != AutomationActive ||
			a.Instruction != "automation of alice" || a.Failures != 0 || tz != "UTC" {
			t.Errorf("alice's rows changed: %+v %+v %q (%v %v %v)", r, a, tz, err, err2, err3)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

}
