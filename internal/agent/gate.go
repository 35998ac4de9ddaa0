package agent

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
)

// Verdict is the gate's answer for one write call.
type Verdict string

// Verdicts: run it, refuse it, or suspend the turn for a human.
const (
	Allow Verdict = "allow"
	Deny  Verdict = "deny"
	Ask   Verdict = "ask"
)

// GateRequest is one write call the model asked for.
type GateRequest struct {
	OwnerID uuid.UUID
	TurnID  uuid.UUID
	Trigger Trigger
	Tool    string
	Args    json.RawMessage
}

// GateDecision is a verdict with who or what decided it, for the journal and the audit log.
type GateDecision struct {
	Verdict Verdict
	// By is "rule:<id>", "mode:deny", "mode:auto", "cap:<name>", "kill" — or "" for Ask.
	By string
	// Reason is shown to the model when the call is refused.
	Reason string
}

// Gate decides every write call. There is no path that runs a write without a decision from
// the gate or a human. internal/safety implements it (kill switch → caps → mode → standing
// rules → ask).
type Gate interface {
	Decide(ctx context.Context, tx Tx, req GateRequest) (GateDecision, error)
}
