package safety_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestGateDeniesUnreadableAmounts: a call to a money tool whose amount cannot be read — or
// reads as negative, or names no ISO 4217 currency — is denied by the gate, at decision and
// again right before it runs, never treated as zero or as a currency without a cap; even an
// owner in auto mode with a generous cap cannot run it (issue 9, money fails closed).
func TestGateDeniesUnreadableAmounts(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 4)
	ctx := context.Background()
	owner, _ := db.Owner(t, "alice")
	if err := db.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		if err := tx.Safety.SetMode(ctx, "auto"); err != nil {
			return err
		}
		_, err := tx.Safety.SetCap(ctx, steward.Cap{Currency: "EUR", PerActionMinor: 100_000, WindowMinor: 1_000_000, Window: 24 * time.Hour})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	gate := &safety.Gate{AllowAuto: true}
	base := steward.GateRequest{OwnerID: owner.ID, Trigger: steward.TriggerChat, CallID: "c1", Tool: "pay",
		Args: json.RawMessage(`{"to":"bob"}`), Rules: steward.RulesNeverAllow, MovesMoney: true}
	decide := func(req steward.GateRequest) (d, e steward.GateDecision) {
		t.Helper()
		if err := db.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
			var err error
			if d, err = gate.Decide(ctx, tx.Agent(), req); err != nil {
				return err
			}
			e, err = gate.Enforce(ctx, tx.Agent(), req)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return d, e
	}
	ok := base
	ok.Money = &steward.Money{Minor: 500, Currency: "EUR"}
	if d, e := decide(ok); d.Verdict != steward.Allow || e.Verdict != steward.Allow {
		t.Fatalf("a readable amount under the cap in auto mode: %s/%s, want allow", d.Verdict, e.Verdict)
	}
	for _, tc := range []struct {
		name string
		m    *steward.Money
	}{
		{"unreadable", nil},
		{"negative", &steward.Money{Minor: -500_000, Currency: "EUR"}},
		{"no currency", &steward.Money{Minor: 500, Currency: ""}},
		{"lowercase code", &steward.Money{Minor: 500_000_000, Currency: "eur"}},
		{"not a code", &steward.Money{Minor: 500, Currency: "EURO"}},
	} {
		name, m := tc.name, tc.m
		req := base
		req.Money = m
		d, e := decide(req)
		if d.Verdict != steward.Deny || e.Verdict != steward.Deny {
			t.Errorf("%s amount %+v: decide %s (by %q), enforce %s; want deny, deny", name, m, d.Verdict, d.By, e.Verdict)
			continue
		}
		if d.Reason == "" {
			t.Errorf("%s amount: denied without a reason for the model", name)
		}
	}
}
