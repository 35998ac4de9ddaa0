package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// TestModelFailureAfterAnApprovedWriteSaysWhatWasDone: the owner approves a task, it is
// created, then the model fails. The confirm's answer says the task was created before the
// failure, the conversation keeps the exchange (so "try again" does not create it twice: the
// next turn's model sees the task made), and the next turn starts from it.
func TestModelFailureAfterAnApprovedWriteSaysWhatWasDone(t *testing.T) {
	t.Parallel()
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("c1", "create_task", `{"title":"Call the school"}`))),
		scripted.Fail(llm.Unavailable(errors.New("gemini: 503 UNAVAILABLE"))),
		scripted.Reply(scripted.Text("The task is already there.")),
	)
	h := newHarness(t, model)
	v := h.start("remind me to call the school")
	if v.Status != steward.StatusSuspended {
		t.Fatalf("status %s, want suspended", v.Status)
	}
	v, err := h.confirm(v, approveAll(v))
	if err != nil {
		t.Fatalf("confirm: %v", err)
	}
	if n := len(h.tasks()); n != 1 {
		t.Fatalf("%d tasks, want the approved one", n)
	}
	if v.Status != steward.StatusFailed || !strings.Contains(v.Error, "Created task “Call the school”") || !strings.Contains(v.Error, "unavailable") {
		t.Fatalf("turn %s %q: want failed, saying the task was created and then the model failed", v.Status, v.Error)
	}
	var msgs []steward.StoredMessage
	if err := h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
		var err error
		msgs, err = tx.Conversations.Messages(h.ctx, v.ConversationID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 {
		t.Fatal("the conversation shows no messages of a turn whose write was done")
	}
	again, err := h.runner.Start(h.ctx, agent.Input{OwnerID: h.owner, ConversationID: &v.ConversationID, Message: "try again"}, nil)
	if err != nil || again.Status != steward.StatusCompleted {
		t.Fatalf("second turn: %+v %v", again, err)
	}
	reqs := model.Requests()
	seen := false
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, p := range m.Parts {
			if p.ToolResult != nil && p.ToolResult.Name == "create_task" {
				seen = true
			}
		}
	}
	if !seen {
		t.Error("the next turn's model was not shown the task created before the failure")
	}
}
