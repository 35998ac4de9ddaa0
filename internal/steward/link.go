package steward

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// LinkCall is one pending call an approval link decides: its id and the args hash the owner
// was shown (docs/NOTIFICATIONS.md, "Approve from a notification").
type LinkCall struct {
	CallID   string `json:"call_id"`
	ArgsHash string `json:"args_hash"`
}

// NewLink is a one-tap approval link to store: only the SHA-256 of its token is kept.
type NewLink struct {
	TurnID uuid.UUID
	Hash   []byte
	// Approve is the link's one decision (approve all its calls, or deny them all).
	Approve bool
	Calls   []LinkCall
	// SuspendedUntil is the turn's ExpiresAt when the link was made: it binds the link to
	// that suspension.
	SuspendedUntil time.Time
	ExpiresAt      time.Time
}

// Link is a stored approval link.
type Link struct {
	ID             uuid.UUID
	TurnID         uuid.UUID
	Approve        bool
	Calls          []LinkCall
	SuspendedUntil time.Time
	ExpiresAt      time.Time
	UsedAt         *time.Time
}

// LinkCallsJSON encodes a link's calls as stored.
func LinkCallsJSON(calls []LinkCall) []byte {
	b, _ := json.Marshal(calls) // strings only: cannot fail
	return b
}
