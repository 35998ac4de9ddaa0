package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm/scripted"
)

// TestUndoRoute: POST /v1/turns/{id}/calls/{call_id}/undo reverts an approved create_task
// once (200, the task gone); again is 409; an unknown call or turn, or one that is not a
// UUID, is 404; an irreversible call (notify) is 422; another owner's call is 404.
func TestUndoRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, createTask("w1", "buy milk"), text("Added it."),
		scripted.Reply(scripted.Calls(scripted.Call("n1", "notify", `{"title":"hi","message":"hello"}`))), text("Sent."))
	v := e.chat("remind me to buy milk")
	viewOf(t, e.confirm(v.TurnID, approveAll(v)))
	path := "/v1/turns/" + v.TurnID.String() + "/calls/w1/undo"

	bob := e.addOwner("bob")
	errorOf(t, e.do(request{method: "POST", path: path, key: bob}), http.StatusNotFound, "not_found")
	resp := e.do(request{method: "POST", path: path, key: e.key})
	if resp.status != http.StatusOK || !strings.Contains(string(resp.body), `"op":"delete_task"`) {
		t.Fatalf("undo: %d %s", resp.status, resp.body)
	}
	if n := len(e.tasks()); n != 0 {
		t.Fatalf("%d tasks after undo, want 0", n)
	}
	if msg := errorOf(t, e.do(request{method: "POST", path: path, key: e.key}), http.StatusConflict, "conflict").Error.Message; !strings.Contains(msg, "already undone") {
		t.Fatalf("second undo said %q", msg)
	}
	errorOf(t, e.do(request{method: "POST", path: "/v1/turns/" + v.TurnID.String() + "/calls/nope/undo", key: e.key}), http.StatusNotFound, "not_found")
	errorOf(t, e.do(request{method: "POST", path: "/v1/turns/" + uuid.NewString() + "/calls/w1/undo", key: e.key}), http.StatusNotFound, "not_found")
	errorOf(t, e.do(request{method: "POST", path: "/v1/turns/x/calls/w1/undo", key: e.key}), http.StatusNotFound, "not_found")

	n := e.chat("say hello")
	if len(n.Pending) != 1 || n.Pending[0].Reversible {
		t.Fatalf("notify pending = %+v, want one irreversible call", n.Pending)
	}
	viewOf(t, e.confirm(n.TurnID, approveAll(n)))
	if msg := errorOf(t, e.do(request{method: "POST", path: "/v1/turns/" + n.TurnID.String() + "/calls/n1/undo", key: e.key}),
		http.StatusUnprocessableEntity, "invalid").Error.Message; !strings.Contains(msg, "can't be undone") {
		t.Fatalf("undo of notify said %q", msg)
	}
}
