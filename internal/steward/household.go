package steward

import (
	"slices"
	"time"

	"github.com/google/uuid"
)

// Household approvals (docs/API.md, "Household approvals"): a call of a household
// member that matches one of the household's policies waits for the other members the
// policy names as well as for its owner.

// HouseholdCall is one pending call filed for the household's approval when its turn
// suspends: what the members may see of it.
type HouseholdCall struct {
	CallID   string `json:"call_id"`
	ArgsHash string `json:"args_hash"`
	Tool     string `json:"tool"`
	// Summary is the readable line of its arguments.
	Summary string `json:"summary"`
	// AmountMinor and Currency are the amount a money tool's call moves; nil when the tool
	// moves none, or its amount could not be read (a policy's minimum then matches: fail
	// closed).
	AmountMinor *int64 `json:"amount_minor,omitempty"`
	Currency    string `json:"currency,omitempty"`
	// Amount is the amount for reading ("12.50 EUR").
	Amount string `json:"amount,omitempty"`
}

// Vote statuses of a household approval.
const (
	VotePending  = "pending"
	VoteApproved = "approved"
	VoteDenied   = "denied"
	VoteVoid     = "void"
	// VoteExpired: the requester's suspension expired before the request was decided.
	VoteExpired = "expired"
)

// HouseholdVote is one approver's vote on one call of the requester's turn; the requester's
// own vote is the one whose ApproverID is the turn's owner.
type HouseholdVote struct {
	CallID       string
	ArgsHash     string
	Tool         string
	ApproverID   uuid.UUID
	ApproverName string
	Status       string
	Message      string
}

// HouseholdStory is who decided what on a household call once its votes closed: the
// household_approval event of the resumed turn (agent.Hooks.Hold returns it).
type HouseholdStory struct {
	Votes []HouseholdStoryVote `json:"votes"`
}

// HouseholdStoryVote is one vote of a HouseholdStory; By is the approver's name, or "owner".
type HouseholdStoryVote struct {
	ApproverID uuid.UUID `json:"approver_id"`
	By         string    `json:"by"`
	CallID     string    `json:"call_id"`
	Message    string    `json:"message,omitempty"`
	Tool       string    `json:"tool"`
	Vote       string    `json:"vote"`
}

// HouseholdWait is what a suspended turn's household votes still wait for: the members who
// have not voted — none once a vote denied, for the turn resumes with the refusal — and
// whether the owner's own vote is pending.
func HouseholdWait(votes []HouseholdVote, owner uuid.UUID) (members []string, ownerPending bool) {
	for _, v := range votes {
		switch {
		case v.Status == VoteDenied:
			return nil, false
		case v.Status != VotePending:
		case v.ApproverID == owner:
			ownerPending = true
		case !slices.Contains(members, v.ApproverName):
			members = append(members, v.ApproverName)
		}
	}
	return members, ownerPending
}

// HouseholdApproval is a request in a member's inbox: the call and nothing else of the
// requesting owner's data.
type HouseholdApproval struct {
	ID            uuid.UUID  `json:"id"`
	RequesterName string     `json:"requester"`
	Tool          string     `json:"tool"`
	Summary       string     `json:"summary"`
	Amount        string     `json:"amount,omitempty"`
	Status        string     `json:"status"`
	Message       string     `json:"message,omitempty"`
	DecidedAt     *time.Time `json:"decided_at,omitempty"`
	ExpiresAt     time.Time  `json:"expires_at"`
	CreatedAt     time.Time  `json:"created_at"`
	// RequesterID, TurnID and CallID are what the service resumes; never shown.
	RequesterID uuid.UUID `json:"-"`
	TurnID      uuid.UUID `json:"-"`
	CallID      string    `json:"-"`
}
