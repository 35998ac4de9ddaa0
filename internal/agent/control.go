package agent

import (
	"context"

	"github.com/stewardhq/steward/internal/steward"
)

// Control admits turns and stops them. internal/safety implements it.
type Control interface {
	// Admit runs in the transaction that starts or resumes a turn and refuses it with an
	// *Error: killed (kill switch), over_budget (daily quota or cost, deployment cap).
	Admit(ctx context.Context, tx Tx, a steward.Admission) error
	// Check runs before every model call and tool dispatch; an engaged kill switch returns
	// an *Error with CodeKilled, and the turn is aborted.
	Check(ctx context.Context, tx Tx) error
}
