package safety

import (
	"context"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/agent"
)

// Control implements agent.Control: the kill switches and the daily budgets.
type Control struct {
	// GlobalCost returns the deployment's estimated cost today and its daily cap (both in
	// millionths of a dollar). It reads across owners, so it comes from the store's Door.
	// Nil disables the deployment cap.
	GlobalCost func(ctx context.Context) (spent, cap int64, err error)
	// GlobalCostTTL lets admissions reuse the deployment's figures for this long (a sum over
	// every owner's turns today, on another connection); zero reads them for every turn.
	GlobalCostTTL time.Duration
	// Now is the one clock (docs/ARCHITECTURE.md §9): a budget's refusal says to retry at
	// the next midnight UTC, when the day's budgets reset.
	Now steward.Clock

	mu                   sync.Mutex
	costAt               time.Time
	costSpent, costLimit int64
}

var _ agent.Control = (*Control)(nil)

// Check refuses when a kill switch is engaged.
func (c *Control) Check(ctx context.Context, tx agent.Tx) error {
	ctl, err := tx.Safety.Controls(ctx)
	if err != nil {
		return err
	}
	if killed, why := ctl.Killed(); killed {
		return steward.Refusef(steward.CodeKilled, steward.ReasonKilled, "%s", why)
	}
	return nil
}

// Admit checks the kill switch, then the budgets: the owner's daily messages (not for a
// resume: the turn was charged when it began), the owner's daily cost, and the deployment's
// daily cost cap. Checking and charging are one step: the turn row created in the same
// transaction is the charge, and the owner lock serialises concurrent starts.
func (c *Control) Admit(ctx context.Context, tx agent.Tx, a steward.Admission) error {
	if !a.Resume {
		if err := tx.Safety.LockOwner(ctx); err != nil {
			return err
		}
	}
	ctl, u, err := tx.Safety.AdmitState(ctx)
	if err != nil {
		return err
	}
	if killed, why := ctl.Killed(); killed {
		return steward.Refusef(steward.CodeKilled, steward.ReasonKilled, "%s", why)
	}
	if !a.Resume && u.Messages >= u.MessageLimit {
		return c.overBudget(steward.ReasonOwnerQuota, "daily message quota of %d reached; it resets at midnight UTC", u.MessageLimit)
	}
	if u.CostMicros >= u.CostLimitMicros {
		return c.overBudget(steward.ReasonOwnerQuota, "daily cost budget of $%.2f reached; it resets at midnight UTC", float64(u.CostLimitMicros)/1e6)
	}
	if c.GlobalCost != nil {
		spent, limit, err := c.globalCost(ctx)
		if err != nil {
			return err
		}
		if spent >= limit {
			return c.overBudget(steward.ReasonDailyCap, "the deployment's daily cost cap of $%.2f across every owner is reached; it resets at midnight UTC "+
				"(the operator sets it: steward control cap USD, or STEWARD_DAILY_COST_CAP_USD)", float64(limit)/1e6)
		}
	}
	return nil
}

// overBudget is a budget's refusal, with RetryAfter until the next midnight UTC, when the
// day's budgets reset (the HTTP faces send it as Retry-After).
func (c *Control) overBudget(reason, format string, a ...any) error {
	e := steward.Refusef(steward.CodeOverBudget, reason, format, a...)
	now := c.Now.Now().UTC()
	e.RetryAfter = now.Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now)
	return e
}

// globalCost returns the deployment's figures, reusing them for GlobalCostTTL.
func (c *Control) globalCost(ctx context.Context) (int64, int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.GlobalCostTTL > 0 && time.Since(c.costAt) < c.GlobalCostTTL {
		return c.costSpent, c.costLimit, nil
	}
	spent, limit, err := c.GlobalCost(ctx)
	if err != nil {
		return 0, 0, err
	}
	c.costAt, c.costSpent, c.costLimit = time.Now(), spent, limit
	return spent, limit, nil
}
