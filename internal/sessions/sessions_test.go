package sessions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/sessions"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestDeviceLinkOnce: a device link signs one device in, once and within DeviceLinkTTL;
// a second use, an expired link and an unknown token are refused in words.
func TestDeviceLinkOnce(t *testing.T) {
	t.Parallel()
	o := testdb.Open(t, 4)
	alice, _ := o.Owner(t, "alice")
	door, err := store.OpenDoor(context.Background(), o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	now := time.Now()
	svc := &sessions.Service{Store: o.Store, Door: door, Now: func() time.Time { return now }}
	ctx := context.Background()

	token, _, err := svc.NewDeviceLink(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.CheckDeviceLink(ctx, token); err != nil {
		t.Fatalf("a fresh link: %v", err)
	}
	owner, _, secret, err := svc.UseDeviceLink(ctx, token, "phone", time.Hour)
	if err != nil || owner != alice.ID {
		t.Fatalf("first use: %v, %v", owner, err)
	}
	if p, err := door.LookupSession(ctx, secret); err != nil || p.OwnerID != alice.ID {
		t.Fatalf("the new session: %+v, %v", p, err)
	}
	refused := func(what string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: err = %v; want %q", what, err, want)
		}
	}
	_, _, _, err = svc.UseDeviceLink(ctx, token, "another phone", time.Hour)
	refused("second use", err, "already used")
	refused("second look", svc.CheckDeviceLink(ctx, token), "already used")
	if l, err := svc.DeviceLink(ctx, alice.ID, token); err != nil || l.UsedAt == nil {
		t.Fatalf("settings' view of the used link: %+v, %v", l, err)
	}

	late, _, err := svc.NewDeviceLink(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(sessions.DeviceLinkTTL)
	_, _, _, err = svc.UseDeviceLink(ctx, late, "phone", time.Hour)
	refused("an expired link", err, "has expired")
	_, _, _, err = svc.UseDeviceLink(ctx, strings.Repeat("A", 43), "phone", time.Hour)
	refused("an unknown token", err, "not valid")
	_, _, _, err = svc.UseDeviceLink(ctx, "short", "phone", time.Hour)
	refused("a malformed token", err, "not valid")
}
