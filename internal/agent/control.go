package agent

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Controls are the kill switches that apply to one owner.
type Controls struct {
	OwnerKilled  bool       `json:"owner_stopped"`
	OwnerReason  string     `json:"owner_reason,omitempty"`
	GlobalKilled bool       `json:"deployment_stopped"`
	GlobalReason string     `json:"deployment_reason,omitempty"`
	Since        *time.Time `json:"since,omitempty"`
}

// Killed reports whether either switch is engaged, and why.
func (c Controls) Killed() (bool, string) {
	switch {
	case c.GlobalKilled:
		return true, "the deployment is stopped: " + c.GlobalReason
	case c.OwnerKilled:
		return true, "Steward is stopped for this owner: " + c.OwnerReason
	}
	return false, ""
}

// DailyUsage is an owner's budget use today and their limits.
type DailyUsage struct {
	Messages        int   `json:"messages"`
	CostMicros      int64 `json:"cost_micros"`
	MessageLimit    int   `json:"message_limit"`
	CostLimitMicros int64 `json:"cost_limit_micros"`
}

// Money is an amount in integer minor units (cents) of an ISO 4217 currency.
type Money struct {
	Minor    int64  `json:"amount_minor"`
	Currency string `json:"currency"`
}

// Cap is a hard money limit: per action, and per rolling window.
type Cap struct {
	Currency       string        `json:"currency"`
	PerActionMinor int64         `json:"per_action_minor"`
	WindowMinor    int64         `json:"window_minor"`
	Window         time.Duration `json:"window"`
}

// Admission is a turn asking to start or resume.
type Admission struct {
	OwnerID uuid.UUID
	Trigger Trigger
	// Resume is true for a confirm: a resume is never refused for message quota.
	Resume bool
}

// Control admits turns and stops them. internal/safety implements it.
type Control interface {
	// Admit runs in the transaction that starts or resumes a turn and refuses it with an
	// *Error: killed (kill switch), over_budget (daily quota or cost, deployment cap).
	Admit(ctx context.Context, tx Tx, a Admission) error
	// Check runs before every model call and tool dispatch; an engaged kill switch returns
	// an *Error with CodeKilled, and the turn is aborted.
	Check(ctx context.Context, tx Tx) error
}
