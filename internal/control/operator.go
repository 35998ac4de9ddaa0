package control

import (
	"context"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// MaxDailyCostMicros bounds an owner's daily cost budget and the deployment's daily cost
// cap: $1,000,000.
const MaxDailyCostMicros = steward.MaxDailyDollarsMicros

// Operator is the operator's side of control, across owners, through the store's door
// (connected as steward_owner): the deployment's kill switch, one owner's, the deployment's
// status, and an owner's daily budget.
type Operator struct {
	Door *store.Door
}

// SetDeploymentKill engages (with a reason; empty means "stopped by the operator") or
// releases the deployment-wide kill switch.
func (o Operator) SetDeploymentKill(ctx context.Context, engaged bool, reason string) error {
	reason, err := operatorReason(engaged, reason)
	if err != nil {
		return err
	}
	return o.Door.SetGlobalKill(ctx, engaged, reason)
}

// SetOwnerKill engages or releases one owner's kill switch; an unknown owner is not found.
func (o Operator) SetOwnerKill(ctx context.Context, ownerID uuid.UUID, engaged bool, reason string) error {
	reason, err := operatorReason(engaged, reason)
	if err != nil {
		return err
	}
	return o.Door.SetOwnerKill(ctx, ownerID, engaged, reason)
}

func operatorReason(engaged bool, reason string) (string, error) {
	if !engaged {
		return "", nil
	}
	return Reason(reason, "stopped by the operator")
}

// Status is the deployment's kill switch, its daily cost cap and use, and the stopped owners.
func (o Operator) Status(ctx context.Context) (store.ControlStatus, error) {
	return o.Door.Control(ctx)
}

// SetDailyCostCap sets the deployment's daily cost cap, which refuses every owner's new
// turns once the day's model cost across owners reaches it (docs/CONFIGURATION.md,
// STEWARD_DAILY_COST_CAP_USD). There is no "unlimited" (limits fail closed): 0 refuses every
// new turn.
func (o Operator) SetDailyCostCap(ctx context.Context, capMicros int64) error {
	if capMicros < 0 || capMicros > MaxDailyCostMicros {
		return steward.Errorf(steward.CodeInvalid, "the deployment's daily cost cap is from $0 to $1000000")
	}
	return o.Door.SetGlobalCostCap(ctx, capMicros)
}

// SetBudget changes an owner's daily limits (nil keeps one) and returns both as they now
// are. There is no "unlimited" (budgets fail closed): 0 refuses every new turn.
func (o Operator) SetBudget(ctx context.Context, ownerID uuid.UUID, messages *int32, costMicros *int64) (store.DailyLimits, error) {
	if messages != nil && *messages < 0 {
		return store.DailyLimits{}, steward.Errorf(steward.CodeInvalid, "the daily message limit cannot be negative")
	}
	if costMicros != nil && (*costMicros < 0 || *costMicros > MaxDailyCostMicros) {
		return store.DailyLimits{}, steward.Errorf(steward.CodeInvalid, "the daily cost limit is from $0 to $1000000")
	}
	return o.Door.UpdateDailyLimits(ctx, ownerID, messages, costMicros)
}
