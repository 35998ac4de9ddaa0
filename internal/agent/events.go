package agent

import (
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// The data of the audit events every turn records, as structs: encoding a map costs about
// seven times the allocations. Their JSON is what the maps they replace gave, key for key —
// fields in the order encoding/json sorts map keys (events_test.go checks it).
type (
	turnStarted struct {
		ConversationID uuid.UUID       `json:"conversation_id"`
		Model          string          `json:"model"`
		PromptSHA256   string          `json:"prompt_sha256"`
		PromptVersion  string          `json:"prompt_version"`
		Trigger        steward.Trigger `json:"trigger"`
	}
	modelCall struct {
		CostMicros   int64         `json:"cost_micros"`
		Error        string        `json:"error,omitempty"`
		Finish       llm.Finish    `json:"finish"`
		FinishDetail string        `json:"finish_detail"`
		LatencyMS    int64         `json:"latency_ms"`
		Model        string        `json:"model"`
		Tools        bool          `json:"tools"`
		Usage        steward.Usage `json:"usage"`
	}
	turnEnded struct {
		Error      string        `json:"error"`
		Iterations int           `json:"iterations"`
		Usage      steward.Usage `json:"usage"`
	}
	turnSuspended struct {
		ExpiresAt time.Time `json:"expires_at"`
		Pending   int       `json:"pending"`
	}
	toolRequested struct {
		ArgsHash string           `json:"args_hash"`
		CallID   string           `json:"call_id"`
		Kind     steward.ToolKind `json:"kind"`
		Tool     string           `json:"tool"`
	}
	gateDecision struct {
		At      string          `json:"at,omitempty"`
		By      string          `json:"by"`
		CallID  string          `json:"call_id"`
		Reason  *string         `json:"reason,omitempty"`
		Tool    string          `json:"tool"`
		Verdict steward.Verdict `json:"verdict"`
	}
	toolResult struct {
		Bytes      int    `json:"bytes"`
		CallID     string `json:"call_id"`
		DurationMS int64  `json:"duration_ms"`
		OK         bool   `json:"ok"`
		Tool       string `json:"tool"`
	}
	turnResumed struct {
		Decisions int `json:"decisions"`
	}
)
