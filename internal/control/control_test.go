package control_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
)

// The operator's kill switch checks its reason like the owner's does: at most 500
// characters (not bytes) of text Postgres can store, a default when empty; a refused reason
// changes nothing.
func TestOperatorKillReason(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 2)
	ctx := context.Background()
	op := control.Operator{Door: db.Door}

	for name, reason := range map[string]string{
		"501 characters": strings.Repeat("é", 501),
		"NUL byte":       "card\x00lost",
	} {
		if err := op.SetDeploymentKill(ctx, true, reason); steward.ErrorCode(err) != steward.CodeInvalid {
			t.Errorf("%s: err = %v, want invalid", name, err)
		}
	}
	if st, err := op.Status(ctx); err != nil || st.Stopped {
		t.Fatalf("a refused reason stopped the deployment: %+v, %v", st, err)
	}
	// 500 two-byte characters are 1000 bytes and within the limit.
	if err := op.SetDeploymentKill(ctx, true, strings.Repeat("é", 500)); err != nil {
		t.Fatalf("500 characters: %v", err)
	}
	if err := op.SetDeploymentKill(ctx, true, "  "); err != nil {
		t.Fatal(err)
	}
	st, err := op.Status(ctx)
	if err != nil || !st.Stopped || st.Reason != "stopped by the operator" {
		t.Fatalf("status after a blank reason: %+v, %v", st, err)
	}
	if err := op.SetDeploymentKill(ctx, false, "ignored"); err != nil {
		t.Fatal(err)
	}
	if st, err := op.Status(ctx); err != nil || st.Stopped || st.Reason != "" {
		t.Fatalf("status after resume: %+v, %v", st, err)
	}
	if err := op.SetOwnerKill(ctx, uuid.New(), true, "x"); steward.ErrorCode(err) != steward.CodeNotFound {
		t.Fatalf("unknown owner: err = %v, want not found", err)
	}
}

// Budgets fail closed: the service refuses a negative or unbounded limit even when a face
// forgot to, and a refused change leaves both limits as they were.
func TestOperatorSetBudgetBounds(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 2)
	ctx := context.Background()
	owner, _ := db.Owner(t, "alice")
	op := control.Operator{Door: db.Door}
	neg, huge, negCost := int32(-1), int64(control.MaxDailyCostMicros+1), int64(-1)
	if _, err := op.SetBudget(ctx, owner.ID, &neg, nil); steward.ErrorCode(err) != steward.CodeInvalid {
		t.Errorf("negative messages: err = %v, want invalid", err)
	}
	if _, err := op.SetBudget(ctx, owner.ID, nil, &huge); steward.ErrorCode(err) != steward.CodeInvalid {
		t.Errorf("cost over the bound: err = %v, want invalid", err)
	}
	if _, err := op.SetBudget(ctx, owner.ID, nil, &negCost); steward.ErrorCode(err) != steward.CodeInvalid {
		t.Errorf("negative cost: err = %v, want invalid", err)
	}
	svc := &control.Service{Store: db.Store}
	v, err := svc.View(ctx, owner.ID)
	if err != nil || v.Budget.MessageLimit != 500 || v.Budget.CostLimitUSD != 5 {
		t.Fatalf("limits after refused changes: %+v, %v", v.Budget, err)
	}
	three := int32(3)
	got, err := op.SetBudget(ctx, owner.ID, &three, nil)
	if err != nil || got.Messages != 3 || got.CostMicros != 5_000_000 {
		t.Fatalf("set messages: %+v, %v", got, err)
	}
}

// The owner's side answers each change with the view as it now is, and the budget resets at
// the next midnight UTC of the service's clock.
func TestServiceStopModeView(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 2)
	ctx := context.Background()
	owner, _ := db.Owner(t, "alice")
	now := time.Date(2031, 5, 6, 23, 59, 0, 0, time.UTC)
	svc := &control.Service{Store: db.Store, Now: func() time.Time { return now }}

	v, err := svc.Stop(ctx, owner.ID, "  lost my phone ")
	if err != nil || !v.Stopped || !v.OwnerKilled || v.OwnerReason != "lost my phone" {
		t.Fatalf("stop: %+v, %v", v, err)
	}
	if want := time.Date(2031, 5, 7, 0, 0, 0, 0, time.UTC); !v.Budget.ResetsAt.Equal(want) {
		t.Fatalf("resets_at = %s, want %s", v.Budget.ResetsAt, want)
	}
	if v, err = svc.Resume(ctx, owner.ID); err != nil || v.Stopped {
		t.Fatalf("resume: %+v, %v", v, err)
	}
	if _, err := svc.SetMode(ctx, owner.ID, control.ModeAuto); steward.ErrorCode(err) != steward.CodeInvalid {
		t.Fatalf("auto without AllowAutoMode: err = %v, want invalid", err)
	}
	if v, err = svc.SetMode(ctx, owner.ID, control.ModeDeny); err != nil || v.Mode != "deny" {
		t.Fatalf("deny: %+v, %v", v, err)
	}
	svc.AllowAutoMode = true
	if v, err = svc.SetMode(ctx, owner.ID, control.ModeAuto); err != nil || v.Mode != "auto" {
		t.Fatalf("auto when allowed: %+v, %v", v, err)
	}
}
