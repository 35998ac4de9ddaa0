package openaiapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/openaiapi"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// TestContinuingTurnAnswersStillWorking: on Lambda the request carries the invocation's
// deadline (here: a server that gives every request one within the turn's margin); a turn
// needing more model calls than fit stops as continuing, and the completion says it is
// still working, with the turn's id, status continuing and a normal finish — not an error,
// and not a turn that runs into the function's timeout.
func TestContinuingTurnAnswersStillWorking(t *testing.T) {
	db := testdb.Open(t, 10)
	owner, key := db.Owner(t, "alice")
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("l1", "list_tasks", `{}`))),
		scripted.Reply(scripted.Text("You have no tasks.")),
		scripted.Reply(scripted.Calls(scripted.Call("l2", "list_tasks", `{}`))),
		scripted.Reply(scripted.Text("Still no tasks.")),
	)
	var handed []uuid.UUID
	runner := agent.New(agent.Config{Model: model, Tools: reg, Store: db.Store, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour, Control: &safety.Control{GlobalCost: db.Door.GlobalCostToday}, ContinueMargin: 2 * time.Hour}, agent.Hooks{Continue: func(_ context.Context, _, turnID uuid.UUID) error { handed = append(handed, turnID); return nil }})
	h := httpapi.New(httpapi.Deps{Runner: runner, Store: db.Store, Auth: db.Door, Logger: zerolog.Nop(), OpenAI: &openaiapi.Service{Runner: runner, Conversations: &activity.Service{Store: db.Store}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), time.Hour) // the invocation's deadline
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(srv.Close)
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))

	for _, stream := range []bool{false, true} {
		params := openai.ChatCompletionNewParams{Model: "steward", Messages: history([]string{"what are my tasks?"})}
		var content, finish, raw string
		if !stream {
			c, err := client.Chat.Completions.New(context.Background(), params)
			if err != nil {
				t.Fatalf("plain: %v", err)
			}
			content, finish, raw = c.Choices[0].Message.Content, string(c.Choices[0].FinishReason), c.JSON.ExtraFields["steward"].Raw()
		} else {
			s := client.Chat.Completions.NewStreaming(context.Background(), params)
			acc := openai.ChatCompletionAccumulator{}
			for s.Next() {
				acc.AddChunk(s.Current())
				if f, ok := s.Current().JSON.ExtraFields["steward"]; ok {
					raw = f.Raw()
				}
			}
			if err := s.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			content, finish = acc.Choices[0].Message.Content, string(acc.Choices[0].FinishReason)
		}
		x := extOf(t, raw)
		if x.Status != steward.StatusContinuing || finish != "stop" || len(handed) == 0 || x.TurnID != handed[len(handed)-1].String() ||
			!strings.Contains(content, "still working") || !strings.Contains(content, x.TurnID) {
			t.Fatalf("stream %v: content %q, finish %q, steward %+v, handed %v; want a still-working answer naming the continuing turn", stream, content, finish, x, handed)
		}
		if v, err := runner.ContinueTurn(context.Background(), owner.ID, handed[len(handed)-1]); err != nil || v.Status != steward.StatusCompleted {
			t.Fatalf("continue: %+v, %v", v, err)
		}
	}
}
