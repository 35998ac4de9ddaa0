package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestAppRoleCannotMintOrUnrevokeKeys: steward_app, which serves every request, cannot
// create an API key for its owner, rewrite one's hash to a key it knows, or bring back a key
// the operator revoked. It may still revoke its owner's own key.
func TestAppRoleCannotMintOrUnrevokeKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 2)
	owner, _ := o.Owner(t, "mallory")
	spare, _, err := o.Door.AddKey(ctx, owner.ID, "spare")
	if err != nil {
		t.Fatal(err)
	}
	revoked, meta, err := o.Door.AddKey(ctx, owner.ID, "leaked")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Door.RevokeKey(ctx, owner.ID, meta.ID); err != nil {
		t.Fatal(err)
	}
	var hash [32]byte
	for _, tc := range []struct{ name, sql string }{
		{"mint a key", `INSERT INTO api_keys (owner_id, name, prefix, hash) VALUES ($1, 'minted', 'stw_xxxxxx', $2)`},
		{"rewrite a key's hash", `UPDATE api_keys SET hash = $2 WHERE owner_id = $1 AND name = 'spare'`},
		{"un-revoke a key", `UPDATE api_keys SET revoked_at = NULL WHERE owner_id = $1 AND name = 'leaked' AND $2::bytea IS NOT NULL`},
		{"rename a key", `UPDATE api_keys SET name = 'renamed' WHERE owner_id = $1 AND $2::bytea IS NOT NULL`},
	} {
		err := o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error { return tx.RawExec(ctx, tc.sql, owner.ID, hash[:]) })
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s as %s: err = %v, want it refused (42501 insufficient_privilege)", tc.name, store.AppRole, err)
		}
	}
	if _, err := o.Door.Authenticate(ctx, revoked); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the revoked key authenticates again: %v", err)
	}
	if p, err := o.Door.Authenticate(ctx, spare); err != nil || p.OwnerID != owner.ID {
		t.Errorf("the spare key no longer authenticates: %+v, %v", p, err)
	}
	keys, err := o.Door.ListKeys(ctx, owner.ID)
	if err != nil || len(keys) != 3 {
		t.Fatalf("keys = %+v, %v; want the 3 the operator made", keys, err)
	}

	// Revoking is the one change the owner may make to their keys, and it is final.
	err = o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		for _, k := range keys {
			if k.Name == "spare" {
				return tx.Account.RevokeAPIKey(ctx, k.ID)
			}
		}
		return errors.New("no spare key")
	})
	if err != nil {
		t.Fatalf("the owner revoking their own key: %v", err)
	}
	if _, err := o.Door.Authenticate(ctx, spare); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the key the owner revoked still authenticates: %v", err)
	}
}

// TestDoorRoleReadsAcrossOwnersAndNothingMore: the runtime's door, as steward_door, answers
// every cross-owner read the runtime makes (API keys, the owner list, the daily cost, the
// memory queue, the scheduler's scans and sweep, webhook routing, delivery) for every owner, and is
// refused every write: the admin operations stay with steward_owner.
func TestDoorRoleReadsAcrossOwnersAndNothingMore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 2)
	a := seed(t, ctx, o.Store, o.Door, "alice")
	b := seed(t, ctx, o.Store, o.Door, "bob")
	keyA, meta, err := o.Door.AddKey(ctx, a.owner.ID, "door test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testdb.Connect(t, o.SuperURL).Exec(ctx, `UPDATE turns SET cost_micros = 7`); err != nil {
		t.Fatal(err)
	}
	door, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	if err := door.CheckRuntime(ctx); err != nil {
		t.Fatalf("the door role fails its own runtime check: %v", err)
	}

	if p, err := door.Authenticate(ctx, keyA); err != nil || p.OwnerID != a.owner.ID || p.OwnerName != "alice" || p.KeyID != meta.ID {
		t.Errorf("Authenticate = %+v, %v; want alice's key", p, err)
	}
	owners, err := door.ListOwners(ctx)
	if err != nil || len(owners) != 2 {
		t.Errorf("ListOwners = %+v, %v; want both owners", owners, err)
	}
	if spent, limit, err := door.GlobalCostToday(ctx); err != nil || spent != 224 || limit != 50_000_000 {
		t.Errorf("GlobalCostToday = %d of %d, %v; want 224 (per owner, a turn's 7, a voice call's 100 and a model call's 5) of the default cap", spent, limit, err)
	}
	if due, err := door.DueIngests(ctx, time.Now(), 10); err != nil || len(due) != 2 {
		t.Errorf("DueIngests = %+v, %v; want one per owner", due, err)
	}
	if scans, err := door.ScanSchedules(ctx); err != nil || len(scans) != 2 || !scans[0].Since.Equal(seedTime) || !scans[1].Since.Equal(seedTime) {
		t.Errorf("ScanSchedules = %+v, %v; want both owners' schedules, since their claimed runs", scans, err)
	}
	if items, err := door.ScanDueWork(ctx, map[string]time.Time{"isolation_probe": time.Now()}, time.Now(), 10); err != nil || len(items) != 2 {
		t.Errorf("ScanDueWork = %+v, %v; want both owners' work items", items, err)
	}
	if route, err := door.LookupWebhook(ctx, b.auto.webhook.HookID); err != nil || route.OwnerID != b.owner.ID || route.Secret != b.auto.secret {
		t.Errorf("LookupWebhook = %+v, %v; want bob's hook and its secret", route.Webhook, err)
	}
	if ids, err := door.ScanChannelOwners(ctx); err != nil || len(ids) != 2 {
		t.Errorf("ScanChannelOwners = %v, %v; want both owners", ids, err)
	}
	// The sweep's scan: alice's turn continuing (not the sweep's: the work spine's), bob's
	// suspended past its expiry.
	super := testdb.Connect(t, o.SuperURL)
	if _, err := super.Exec(ctx, `UPDATE turns SET status = 'continuing', updated_at = now() - interval '1 hour' WHERE owner_id = $1`, a.owner.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := super.Exec(ctx, `UPDATE turns SET status = 'suspended', expires_at = now() - interval '1 minute' WHERE owner_id = $1`, b.owner.ID); err != nil {
		t.Fatal(err)
	}
	if ids, err := door.ScanSweepOwners(ctx, time.Now(), time.Now().Add(-time.Hour)); err != nil || len(ids) != 1 || ids[0] != b.owner.ID {
		t.Errorf("ScanSweepOwners = %v, %v; want bob alone", ids, err)
	}

	// It reads only the columns those reads need: no message, no turn's state, no task.
	raw := testdb.Connect(t, o.DoorURL)
	for _, sql := range []string{`SELECT count(*) FROM messages`, `SELECT count(state) FROM turns`,
		`SELECT count(*) FROM tasks`, `SELECT count(last_error) FROM memory_outbox`, `SELECT count(summary) FROM household_approvals`} {
		var pgErr *pgconn.PgError
		if _, err := raw.Exec(ctx, sql); !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s as %s: err = %v, want permission denied (42501)", sql, store.DoorRole, err)
		}
	}

	for name, write := range map[string]func() error{
		"CreateOwner":      func() error { _, _, err := door.CreateOwner(ctx, "eve"); return err },
		"AddKey":           func() error { _, _, err := door.AddKey(ctx, a.owner.ID, "minted"); return err },
		"RevokeKey":        func() error { return door.RevokeKey(ctx, a.owner.ID, meta.ID) },
		"SetGlobalKill":    func() error { return door.SetGlobalKill(ctx, true, "door") },
		"SetGlobalCostCap": func() error { return door.SetGlobalCostCap(ctx, 1) },
		"SetOwnerKill":     func() error { return door.SetOwnerKill(ctx, a.owner.ID, true, "door") },
		"SetDailyLimits":   func() error { return door.SetDailyLimits(ctx, a.owner.ID, 1, 1) },
	} {
		var pgErr *pgconn.PgError
		if err := write(); !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s through the runtime's door: err = %v, want it refused (42501)", name, err)
		}
	}
	st, err := o.Door.Control(ctx)
	if err != nil || st.Stopped || len(st.StoppedOwners) != 0 || st.CostCapMicros != 50_000_000 {
		t.Errorf("controls after the door's attempts: %+v, %v; want them unchanged", st, err)
	}
	if owners, err := o.Door.ListOwners(ctx); err != nil || len(owners) != 2 {
		t.Errorf("owners after the door's attempts: %+v, %v", owners, err)
	}
	if _, err := door.Authenticate(ctx, keyA); err != nil {
		t.Errorf("alice's key after the door's attempts: %v", err)
	}
}
