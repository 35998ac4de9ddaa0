package agent

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// TestEventDataIsTheMapsJSON: the audit events' structs encode to the JSON the maps they
// replaced gave, byte for byte — what the trace, the web app and the exports read.
func TestEventDataIsTheMapsJSON(t *testing.T) {
	id := uuid.New()
	usage := steward.Usage{InputTokens: 12, OutputTokens: 3, CachedTokens: 1}
	at := time.Date(2026, 12, 1, 10, 0, 0, 5, time.UTC)
	reason, empty := "a rule <allows> it & more", ""
	for _, c := range []struct {
		name   string
		typed  any
		asMaps map[string]any
	}{
		{"turn_started", turnStarted{ConversationID: id, Model: "m", PromptSHA256: "abc", PromptVersion: PromptVersion, Trigger: steward.TriggerChat},
			map[string]any{"trigger": steward.TriggerChat, "conversation_id": id, "model": "m", "prompt_version": PromptVersion, "prompt_sha256": "abc"}},
		{"model_call", modelCall{Model: "m", Finish: llm.FinishStop, FinishDetail: "STOP", Usage: usage, CostMicros: 7, LatencyMS: 3, Tools: true},
			map[string]any{"model": "m", "finish": llm.FinishStop, "finish_detail": "STOP", "usage": usage, "cost_micros": int64(7), "latency_ms": int64(3), "tools": true}},
		{"model_call failed", modelCall{Model: "m", Error: "model call failed"},
			map[string]any{"model": "m", "finish": llm.Finish(""), "finish_detail": "", "usage": steward.Usage{}, "cost_micros": int64(0), "latency_ms": int64(0), "tools": false, "error": "model call failed"}},
		{"turn_completed", turnEnded{Error: "", Iterations: 2, Usage: usage},
			map[string]any{"error": "", "iterations": 2, "usage": usage}},
		{"turn_suspended", turnSuspended{Pending: 1, ExpiresAt: at},
			map[string]any{"pending": 1, "expires_at": at}},
		{"tool_requested", toolRequested{CallID: "c1", Tool: "create_task", Kind: steward.KindWrite, ArgsHash: "h"},
			map[string]any{"call_id": "c1", "tool": "create_task", "kind": steward.KindWrite, "args_hash": "h"}},
		{"gate_decision", gateDecision{CallID: "c1", Tool: "t", Verdict: steward.Allow, By: "rule:1", Reason: &reason},
			map[string]any{"call_id": "c1", "tool": "t", "verdict": steward.Allow, "by": "rule:1", "reason": reason}},
		{"gate_decision, no reason given", gateDecision{CallID: "c1", Tool: "t", Verdict: steward.Ask, By: "", Reason: &empty},
			map[string]any{"call_id": "c1", "tool": "t", "verdict": steward.Ask, "by": "", "reason": ""}},
		{"gate_decision at execution", gateDecision{CallID: "c1", Tool: "t", Verdict: steward.Allow, By: "kill", At: "execution"},
			map[string]any{"call_id": "c1", "tool": "t", "verdict": steward.Allow, "by": "kill", "at": "execution"}},
		{"gate_decision by the owner", gateDecision{CallID: "c1", Tool: "t", Verdict: steward.Deny, By: "human"},
			map[string]any{"call_id": "c1", "tool": "t", "verdict": steward.Deny, "by": "human"}},
		{"tool_result", toolResult{CallID: "c1", Tool: "t", OK: true, Bytes: 10, DurationMS: 4},
			map[string]any{"call_id": "c1", "tool": "t", "ok": true, "bytes": 10, "duration_ms": int64(4)}},
		{"turn_resumed", turnResumed{Decisions: 2}, map[string]any{"decisions": 2}},
	} {
		got, err := json.Marshal(c.typed)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(c.asMaps)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
}
