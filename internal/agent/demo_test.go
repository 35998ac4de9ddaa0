package agent_test

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/llm/demo"
)

// TestDemoModelWalkthrough is the newcomer's first session with no GEMINI_API_KEY: a write
// suspends, is approved, and the demo model reports it; reads answer directly.
func TestDemoModelWalkthrough(t *testing.T) {
	t.Parallel()
	h := newHarness(t, demo.New())
	v := h.start("remind me to buy milk")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 || v.Pending[0].Tool != "create_task" || !strings.Contains(v.Model, "demo") {
		t.Fatalf("view = %+v", v)
	}
	v, err := h.confirm(v, approveAll(v))
	if err != nil || v.Status != steward.StatusCompleted || !strings.Contains(v.Answer, "buy milk") {
		t.Fatalf("after approval: %+v, %v", v, err)
	}
	v = h.start("list my tasks")
	if v.Status != steward.StatusCompleted || !strings.Contains(v.Answer, "buy milk") {
		t.Fatalf("list: %+v", v)
	}
	v = h.start("what time is it")
	if v.Status != steward.StatusCompleted || !strings.Contains(v.Answer, "It is") {
		t.Fatalf("time: %+v", v)
	}
	v = h.start("remember that I like green tea")
	if v.Status != steward.StatusSuspended || v.Pending[0].Tool != "remember" {
		t.Fatalf("remember: %+v", v)
	}
	v, err = h.confirm(v, []steward.Decision{{CallID: v.Pending[0].CallID, ArgsHash: v.Pending[0].ArgsHash, Approve: false, Message: "not now"}})
	if err != nil || !strings.Contains(v.Answer, "not") {
		t.Fatalf("denied remember: %+v, %v", v, err)
	}
	t.Logf("demo answers look like: %q", v.Answer)
}
