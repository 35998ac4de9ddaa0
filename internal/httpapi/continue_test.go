package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"

	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
)

// TestChatStreamEndsContinuing: a request with a deadline (a Lambda invocation's) too close
// for the turn's next model call streams a final continuing event with the turn, the turn is
// handed on, and GET /v1/turns/{id} shows it continuing; the turn kept the request's deadline
// although it runs on a context a client disconnect does not cancel.
func TestChatStreamEndsContinuing(t *testing.T) {
	t.Parallel()
	withDeadline := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), time.Hour)
			defer cancel()
			h.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	var handed []uuid.UUID
	e := newEnvWith(t, withDeadline, func(c *agent.Config, h *agent.Hooks) {
		c.ContinueMargin = 2 * time.Hour
		h.Continue = func(_ context.Context, _, turn uuid.UUID) error {
			handed = append(handed, turn)
			return nil
		}
	},
		scripted.Reply(scripted.Calls(scripted.Call("r1", "list_tasks", `{}`))),
		scripted.Reply(scripted.Text("none")))
	resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"my tasks?"}`,
		header: map[string]string{"Accept": "text/event-stream"}})
	events := parseSSE(t, resp.body)
	last := events[len(events)-1]
	var v steward.View
	if err := json.Unmarshal(last.data, &v); err != nil || last.typ != "continuing" || v.Status != steward.StatusContinuing {
		t.Fatalf("last event %s %s, want continuing:\n%s", last.typ, last.data, resp.body)
	}
	if strings.Count(string(resp.body), "event: continuing") != 1 || len(handed) != 1 || handed[0] != v.TurnID {
		t.Fatalf("handed %v, stream:\n%s", handed, resp.body)
	}
	got := viewOf(t, e.do(request{method: "GET", path: "/v1/turns/" + v.TurnID.String(), key: e.key}))
	if got.Status != steward.StatusContinuing || got.TurnID != v.TurnID {
		t.Fatalf("GET /v1/turns/{id}: %+v, want continuing", got)
	}
}
