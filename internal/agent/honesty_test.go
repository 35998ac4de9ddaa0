package agent_test

import (
	"reflect"
	"testing"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
)

// TestClaimWithoutCallIsFlagged: an answer claiming "I added the task" from a turn that
// called no tool is flagged in the turn's story.
func TestClaimWithoutCallIsFlagged(t *testing.T) {
	t.Parallel()
	h := newHarness(t, scripted.New(scripted.Reply(scripted.Text("Sure! I added the task \"buy milk\" to your list."))))
	v := h.start("add buy milk to my tasks")
	if v.Status != steward.StatusCompleted {
		t.Fatalf("status %s", v.Status)
	}
	flags := h.events(v.TurnID, agent.EventUnverifiedClaim)
	if len(flags) != 1 {
		t.Fatalf("%s events = %v, want 1", agent.EventUnverifiedClaim, flags)
	}
	if claims, _ := flags[0]["claims"].([]any); len(claims) != 1 || claims[0] != "I added" {
		t.Errorf("flag = %v, want the claim \"I added\"", flags[0])
	}
	if n := len(h.tasks()); n != 0 {
		t.Errorf("%d tasks exist; the claim was false", n)
	}
}

// TestClaimWithExecutedCallIsNotFlagged: the same answer after create_task was approved and
// executed is not flagged; after the owner denied it, it is.
func TestClaimWithExecutedCallIsNotFlagged(t *testing.T) {
	t.Parallel()
	for _, approve := range []bool{true, false} {
		h := newHarness(t, scripted.New(
			scripted.Reply(scripted.Calls(scripted.Call("c1", "create_task", `{"title":"buy milk"}`))),
			scripted.Reply(scripted.Text("I added the task \"buy milk\"."))))
		v := h.start("add buy milk to my tasks")
		if v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
			t.Fatalf("view = %+v, want suspended on create_task", v)
		}
		ds := approveAll(v)
		ds[0].Approve = approve
		v, err := h.confirm(v, ds)
		if err != nil || v.Status != steward.StatusCompleted {
			t.Fatalf("confirm: %+v %v", v, err)
		}
		flags := h.events(v.TurnID, agent.EventUnverifiedClaim)
		if approve && (len(flags) != 0 || len(h.tasks()) != 1) {
			t.Errorf("approved and executed: flags %v, %d tasks; want no flag and 1 task", flags, len(h.tasks()))
		}
		if !approve && len(flags) != 1 {
			t.Errorf("denied: flags %v, want the claim flagged", flags)
		}
	}
}

func TestClaims(t *testing.T) {
	t.Parallel()
	for answer, want := range map[string][]string{
		"I added the task and I've scheduled a reminder.":           {"I added", "I've scheduled"},
		"I have just sent the mail.":                                {"I have just sent"},
		"I have not added anything. I didn't send it. I can add it": nil,
		"Should I create a task? I'll remember that.":               nil,
		"Your list has 3 tasks.":                                    nil,
		"i saved it":                                                {"i saved"},
	} {
		if got := agent.Claims(answer); !reflect.DeepEqual(got, want) {
			t.Errorf("Claims(%q) = %q, want %q", answer, got, want)
		}
	}
}
