package agent_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/chain"
	"github.com/stewardhq/steward/internal/llm/gemini"
	"github.com/stewardhq/steward/internal/llm/openai"
	"github.com/stewardhq/steward/internal/llm/retry"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// fakeAPI answers every request with status and body.
func fakeAPI(t *testing.T, status int, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// events reads a turn's story: its audit events of kind, in order, decoded.
func (h *harness) events(turnID uuid.UUID, kind string) []map[string]any {
	h.t.Helper()
	var out []map[string]any
	err := h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
		evs, err := tx.Journal.TurnEvents(h.ctx, turnID)
		for _, e := range evs {
			if e.Kind != kind {
				continue
			}
			var d map[string]any
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return err
			}
			out = append(out, d)
		}
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// TestFallbackAttemptsInStory: Gemini answers 503, the OpenAI-compatible fake answers; the
// turn completes with the fallback's answer and its story shows both attempts.
func TestFallbackAttemptsInStory(t *testing.T) {
	t.Parallel()
	g, err := gemini.New(t.Context(), gemini.Config{APIKey: "k", Model: "gemini-3.8-flash", Retry: retry.Policy{Attempts: 1},
		BaseURL: fakeAPI(t, http.StatusServiceUnavailable, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	o, err := openai.New(openai.Config{APIKey: "k", Model: "gpt-test", Retry: retry.Policy{Attempts: 1},
		BaseURL: fakeAPI(t, http.StatusOK, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test",
		"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Answered by the fallback."}}],
		"usage":{"prompt_tokens":40,"completion_tokens":6,"total_tokens":46}}`) + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := chain.New(chain.Config{}, g, o)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, c)
	v := h.start("hello")
	if v.Status != steward.StatusCompleted || v.Answer != "Answered by the fallback." {
		t.Fatalf("turn = %s %q, want completed with the fallback's answer", v.Status, v.Answer)
	}
	got := h.events(v.TurnID, "model_attempt")
	if len(got) != 2 {
		t.Fatalf("model_attempt events = %v, want 2 (gemini failed, gpt answered)", got)
	}
	if got[0]["model"] != "gemini-3.8-flash" || got[0]["outcome"] != "failed" || got[0]["error_class"] != llm.ClassServer {
		t.Errorf("first attempt = %v, want gemini-3.8-flash failed with %s", got[0], llm.ClassServer)
	}
	if got[1]["model"] != "gpt-test" || got[1]["outcome"] != "answered" {
		t.Errorf("second attempt = %v, want gpt-test answered", got[1])
	}
	if calls := h.events(v.TurnID, "model_call"); len(calls) != 1 || calls[0]["model"] != "gpt-test" {
		t.Errorf("model_call events = %v, want one naming gpt-test, the model that answered", calls)
	}
}

// attemptsModel answers with a failed attempt that used tokens before the answer.
type attemptsModel struct{}

func (attemptsModel) Name() string { return "first" }
func (attemptsModel) Generate(context.Context, llm.Request, llm.DeltaFunc) (llm.Response, error) {
	return llm.Response{Model: "second", Finish: llm.FinishStop,
		Message: steward.Message{Role: steward.RoleModel, Parts: []steward.Part{{Text: "ok"}}},
		Usage:   steward.Usage{InputTokens: 100, OutputTokens: 10},
		Attempts: []llm.Attempt{{Model: "first", Error: "gemini: status 429 RESOURCE_EXHAUSTED",
			Usage: steward.Usage{InputTokens: 1000, OutputTokens: 5}}}}, nil
}

// TestBudgetsCountEveryAttempt: a failed attempt's usage is counted in the turn's usage and
// cost (priced at its own model) as well as the answer's.
func TestBudgetsCountEveryAttempt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, attemptsModel{})
	h.runner.Price = func(model string, u steward.Usage) int64 {
		if model == "first" {
			return 2 * (u.InputTokens + u.OutputTokens)
		}
		return u.InputTokens + u.OutputTokens
	}
	v := h.start("hello")
	if v.Status != steward.StatusCompleted {
		t.Fatalf("status %s", v.Status)
	}
	var turn steward.Turn
	err := h.store.WithOwner(h.ctx, h.owner, func(tx *store.Tx) error {
		var err error
		turn, err = tx.Turns.Get(h.ctx, v.TurnID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if turn.Usage.InputTokens != 1100 || turn.Usage.OutputTokens != 15 || turn.CostMicros != 2*1005+110 {
		t.Errorf("turn usage %+v cost %d, want 1100/15 tokens and %d micros", turn.Usage, turn.CostMicros, 2*1005+110)
	}
	got := h.events(v.TurnID, "model_attempt")
	if len(got) != 2 || got[0]["error_class"] != llm.ClassRateLimited || got[1]["outcome"] != "answered" {
		t.Errorf("model_attempt events = %v, want the rate-limited attempt then the answer", got)
	}
}
