package agent

import (
	"context"

	"github.com/stewardhq/steward/internal/steward"
)

// Gate decides every write call. There is no path that runs a write without a decision from
// the gate or a human. internal/safety implements it (kill switch → caps → mode → standing
// rules → ask).
type Gate interface {
	// Decide is asked when the model requests a write.
	Decide(ctx context.Context, tx Tx, req steward.GateRequest) (steward.GateDecision, error)
	// Enforce runs in the write's own transaction just before it executes (after a rule or
	// a human allowed it): the kill switch and hard caps apply again, and money is charged
	// to the ledger. A Deny here means the call does not run.
	Enforce(ctx context.Context, tx Tx, req steward.GateRequest) (steward.GateDecision, error)
}
