package store_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	. "github.com/stewardhq/steward/internal/store"
)

func stateHash(name string) []byte { h := sha256.Sum256([]byte("state of " + name)); return h[:] }

// seedOAuth gives an owner a sign-in in flight (the state "state of NAME") and a grant of the
// generic provider whose tokens name the owner.
func seedOAuth(ctx context.Context, tx *Tx, name string) error {
	if err := tx.OAuth.CreateState(ctx, stateHash(name), uuid.New(), "generic", []byte("verifier of "+name), time.Now().Add(time.Hour)); err != nil {
		return err
	}
	return tx.OAuth.SaveGrant(ctx, OAuthGrant{Provider: "generic", Email: name + "@example.test", Scopes: "mail",
		AccessToken: []byte("access of " + name), RefreshToken: []byte("refresh of " + name), ExpiresAt: time.Now().Add(time.Hour)})
}

// probeOAuth: bob finds no sign-in of alice's by its state and uses none; every grant call
// reaches his own grant only, and his writes are his.
func probeOAuth(t *testing.T, ctx context.Context, tx *Tx, refused func(string, error)) {
	t.Helper()
	covers("OAuth.CreateState", "OAuth.State", "OAuth.UseState", "OAuth.SaveGrant", "OAuth.Grant", "OAuth.Grants", "OAuth.Lease",
		"OAuth.Refreshed", "OAuth.Release", "OAuth.Disconnect", "OAuth.DeleteGrant")
	_, err := tx.OAuth.State(ctx, stateHash("alice"))
	refused("oauth state", err)
	refused("oauth use state", tx.OAuth.UseState(ctx, stateHash("alice")))
	if st, err := tx.OAuth.State(ctx, stateHash("bob")); err != nil || string(st.Verifier) != "verifier of bob" {
		t.Errorf("oauth state: %+v, %v: want bob's own", st, err)
	}
	gs, err := tx.OAuth.Grants(ctx)
	if err != nil || len(gs) != 1 || string(gs[0].RefreshToken) != "refresh of bob" {
		t.Errorf("oauth grants: %+v, %v: want bob's own", gs, err)
	}
	id := uuid.New()
	if g, err := tx.OAuth.Lease(ctx, "generic", id, time.Minute); err != nil || string(g.RefreshToken) != "refresh of bob" {
		t.Errorf("oauth lease: %+v, %v: want bob's own", g, err)
	}
	if err := tx.OAuth.Refreshed(ctx, "generic", id, []byte("new access"), []byte("new refresh"), time.Now().Add(time.Hour)); err != nil {
		t.Errorf("oauth refreshed: %v", err)
	}
	if err := tx.OAuth.Release(ctx, "generic", id); err != nil {
		t.Errorf("oauth release: %v", err)
	}
	if first, err := tx.OAuth.Disconnect(ctx, "generic", "revoked"); err != nil || !first {
		t.Errorf("oauth disconnect: first %v, %v", first, err)
	}
	if first, err := tx.OAuth.Disconnect(ctx, "generic", "revoked"); err != nil || first {
		t.Errorf("oauth disconnect again: first %v, %v: the owner is told once", first, err)
	}
	if g, err := tx.OAuth.Grant(ctx, "generic"); err != nil || g.Status != "disconnected" || string(g.AccessToken) != "new access" {
		t.Errorf("oauth grant: %+v, %v", g, err)
	}
	if err := tx.OAuth.DeleteGrant(ctx, "generic"); err != nil {
		t.Errorf("oauth delete grant: %v", err)
	}
	if err := tx.OAuth.DeleteGrant(ctx, "generic"); !errors.Is(err, ErrNotFound) {
		t.Errorf("oauth delete again: %v: alice's is not his", err)
	}
	if err := tx.OAuth.SaveGrant(ctx, OAuthGrant{Provider: "generic", Email: "bob@example.test", AccessToken: []byte("a"), RefreshToken: []byte("r"),
		ExpiresAt: time.Now()}); err != nil {
		t.Errorf("oauth save grant: %v", err)
	}
}

// checkOAuth: alice's sign-in and grant after bob's probes are as seeded.
func checkOAuth(t *testing.T, ctx context.Context, tx *Tx) {
	t.Helper()
	if st, err := tx.OAuth.State(ctx, stateHash("alice")); err != nil || st.Used {
		t.Errorf("alice's sign-in after bob: %+v, %v", st, err)
	}
	if g, err := tx.OAuth.Grant(ctx, "generic"); err != nil || g.Status != "connected" || string(g.RefreshToken) != "refresh of alice" || !g.LeaseUntil.IsZero() {
		t.Errorf("alice's grant after bob: %+v, %v", g, err)
	}
}
