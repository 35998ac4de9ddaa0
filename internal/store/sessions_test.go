package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestWebSessions: a session is found by its secret through the runtime's door
// (steward_door), only while it is neither revoked nor expired, and names its owner.
func TestWebSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 2)
	runtimeDoor, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	defer runtimeDoor.Close()
	alice, _ := o.Owner(t, "alice")
	var live, revoked, expired store.WebSession
	var liveSecret, revokedSecret, expiredSecret string
	err = o.Store.WithOwner(ctx, alice.ID, func(tx *store.Tx) error {
		var err error
		if live, liveSecret, err = tx.Sessions.Create(ctx, "Firefox", time.Now().Add(time.Hour)); err != nil {
			return err
		}
		if revoked, revokedSecret, err = tx.Sessions.Create(ctx, "Chromium", time.Now().Add(time.Hour)); err != nil {
			return err
		}
		if expired, expiredSecret, err = tx.Sessions.Create(ctx, "Safari", time.Now().Add(time.Hour)); err != nil {
			return err
		}
		return tx.Sessions.Revoke(ctx, revoked.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	super, err := pgx.Connect(ctx, o.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(ctx)
	if _, err := super.Exec(ctx, `UPDATE web_sessions SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 hour' WHERE id = $1`, expired.ID); err != nil {
		t.Fatal(err)
	}

	p, err := runtimeDoor.LookupSession(ctx, liveSecret)
	if err != nil || p.OwnerID != alice.ID || p.SessionID != live.ID || p.OwnerName != "alice" {
		t.Fatalf("LookupSession(live) = %+v, %v; want alice's session %s", p, err, live.ID)
	}
	for name, secret := range map[string]string{"revoked": revokedSecret, "expired": expiredSecret,
		"unknown": "sws_" + liveSecret[5:] + "x", "an API key": "stw_abc", "empty": ""} {
		if p, err := runtimeDoor.LookupSession(ctx, secret); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("LookupSession(%s) = %+v, %v; want ErrNotFound", name, p, err)
		}
	}
	err = o.Store.WithOwner(ctx, alice.ID, func(tx *store.Tx) error {
		list, err := tx.Sessions.List(ctx)
		if err != nil || len(list) != 1 || list[0].ID != live.ID || list[0].UserAgent != "Firefox" {
			t.Errorf("live sessions = %+v, %v; want only the Firefox one", list, err)
		}
		if err := tx.Sessions.Revoke(ctx, revoked.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("revoking twice: %v, want ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The hash alone is stored: no column holds the secret.
	var n int
	if err := super.QueryRow(ctx, `SELECT count(*) FROM web_sessions WHERE position(convert_to($1, 'UTF8') in hash) > 0 OR user_agent = $1`, liveSecret).Scan(&n); err != nil || n != 0 {
		t.Errorf("the secret is stored (%d rows, %v)", n, err)
	}
}
