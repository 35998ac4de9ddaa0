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
	CallID  string
	Tool    string
	Args    json.RawMessage
	// Money is the amount the call moves, for tools that declare one.
	Money *Money
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
	// Decide is asked when the model requests a write.
	Decide(ctx context.Context, tx Tx, req GateRequest) (GateDecision, error)
	// Enforce runs in the write's own transaction just before it executes (after a rule or
	// a human allowed it): the kill switch and hard caps apply again, and money is charged
	// to the ledger. A Deny here means the call does not run.
	Enforce(ctx context.Context, tx Tx, req GateRequest) (GateDecision, error)
}
