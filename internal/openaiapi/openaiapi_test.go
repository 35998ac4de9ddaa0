package openaiapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// env is the real router on a fresh database with one owner, a scripted model, and the
// official OpenAI client pointed at it.
type env struct {
	t      *testing.T
	ctx    context.Context
	store  *store.Store
	model  *scripted.Model
	srv    *httptest.Server
	owner  store.Owner
	key    string
	client openai.Client
}

func newEnv(t *testing.T, steps ...scripted.Step) *env {
	t.Helper()
	db := testdb.Open(t, 10)
	owner, key := db.Owner(t, "alice")
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: context.Background(), store: db.Store, model: scripted.New(steps...), owner: owner, key: key}
	runner := agent.New(agent.Config{Model: e.model, Tools: reg, Store: db.Store, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour, Control: &safety.Control{GlobalCost: db.Door.GlobalCostToday}}, agent.Hooks{})
	e.srv = httptest.NewServer(httpapi.New(httpapi.Deps{Runner: runner, Store: db.Store, Auth: db.Door, Logger: zerolog.Nop(), OpenAI: &openaiapi.Service{Runner: runner, Conversations: &activity.Service{Store: db.Store}}}))
	t.Cleanup(e.srv.Close)
	e.client = openai.NewClient(option.WithBaseURL(e.srv.URL+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
	return e
}

// chat sends messages, alternating user and assistant, starting with the user.
func (e *env) chat(texts ...string) *openai.ChatCompletion {
	e.t.Helper()
	c, err := e.client.Chat.Completions.New(e.ctx, openai.ChatCompletionNewParams{Model: "steward", Messages: history(texts)})
	if err != nil {
		e.t.Fatalf("chat %q: %v", texts[len(texts)-1], err)
	}
	return c
}

func history(texts []string) []openai.ChatCompletionMessageParamUnion {
	var msgs []openai.ChatCompletionMessageParamUnion
	for i, s := range texts {
		if i%2 == 0 {
			msgs = append(msgs, openai.UserMessage(s))
		} else {
			msgs = append(msgs, openai.AssistantMessage(s))
		}
	}
	return msgs
}

type stewardExt struct {
	TurnID         string         `json:"turn_id"`
	ConversationID string         `json:"conversation_id"`
	Status         steward.Status `json:"status"`
	Pending        []struct {
		Number int    `json:"number"`
		Tool   string `json:"tool"`
	} `json:"pending"`
}

func extOf(t *testing.T, raw string) stewardExt {
	t.Helper()
	var x stewardExt
	if err := json.Unmarshal([]byte(raw), &x); err != nil {
		t.Fatalf("steward extension %q: %v", raw, err)
	}
	return x
}

// tasks lists the owner's open tasks.
func (e *env) tasks() []steward.Task {
	e.t.Helper()
	var out []steward.Task
	if err := e.store.WithOwner(e.ctx, e.owner.ID, func(tx *store.Tx) error {
		var err error
		out, err = tx.Tasks.ListTasks(e.ctx, "")
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// conversations returns the owner's conversations and the number of stored messages of each.
func (e *env) conversations() map[string]int {
	e.t.Helper()
	out := map[string]int{}
	if err := e.store.WithOwner(e.ctx, e.owner.ID, func(tx *store.Tx) error {
		convs, err := tx.Conversations.List(e.ctx, 100)
		for _, c := range convs {
			msgs, err := tx.Conversations.Messages(e.ctx, c.ID)
			if err != nil {
				return err
			}
			out[c.ID.String()] = len(msgs)
		}
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func TestPlainAnswer(t *testing.T) {
	e := newEnv(t, scripted.Reply(scripted.Text("Hello, I am Steward.")))
	c := e.chat("hi")
	if len(c.Choices) != 1 || c.Choices[0].Message.Content != "Hello, I am Steward." || c.Choices[0].FinishReason != "stop" || c.Model != "steward" {
		t.Fatalf("completion = %+v", c)
	}
	if x := extOf(t, c.JSON.ExtraFields["steward"].Raw()); x.Status != steward.StatusCompleted || len(x.Pending) != 0 {
		t.Fatalf("steward = %+v", x)
	}
	models, err := e.client.Models.List(e.ctx)
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != "steward" {
		t.Fatalf("models = %+v, %v", models, err)
	}
}

func TestStream(t *testing.T) {
	e := newEnv(t, scripted.Reply(scripted.Text("Streaming works fine.")))
	s := e.client.Chat.Completions.NewStreaming(e.ctx, openai.ChatCompletionNewParams{Model: "steward", Messages: history([]string{"hi"})})
	acc := openai.ChatCompletionAccumulator{}
	chunks, last := 0, ""
	for s.Next() {
		ch := s.Current()
		acc.AddChunk(ch)
		chunks++
		if f, ok := ch.JSON.ExtraFields["steward"]; ok {
			last = f.Raw()
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "Streaming works fine." || chunks < 3 {
		t.Fatalf("streamed %q in %d chunks", got, chunks)
	}
	if acc.Choices[0].FinishReason != "stop" || extOf(t, last).Status != steward.StatusCompleted {
		t.Fatalf("finish %q, steward %s", acc.Choices[0].FinishReason, last)
	}
}

// writeScript suspends on a create_task call, then answers after the owner's decision.
func writeScript() []scripted.Step {
	return []scripted.Step{
		scripted.Reply(scripted.Calls(scripted.Call("c1", "create_task", `{"title":"buy milk"}`))),
		scripted.Reply(scripted.Text("Done, I handled the milk.")),
	}
}

func TestSuspendThenApproveByReply(t *testing.T) {
	e := newEnv(t, writeScript()...)
	first := e.chat("remind me to buy milk")
	listing := first.Choices[0].Message.Content
	x := extOf(t, first.JSON.ExtraFields["steward"].Raw())
	if x.Status != steward.StatusSuspended || len(x.Pending) != 1 || x.Pending[0].Tool != "create_task" || first.Choices[0].FinishReason != "stop" {
		t.Fatalf("steward = %+v, finish %q", x, first.Choices[0].FinishReason)
	}
	if !strings.Contains(listing, `1. create_task {"title":"buy milk"}`) || !strings.Contains(listing, `"approve"`) {
		t.Fatalf("listing = %q", listing)
	}
	if n := len(e.tasks()); n != 0 {
		t.Fatalf("%d tasks before the approval", n)
	}
	done := e.chat("remind me to buy milk", listing, "approve")
	if got := done.Choices[0].Message.Content; got != "Done, I handled the milk." {
		t.Fatalf("answer after approve = %q", got)
	}
	if x := extOf(t, done.JSON.ExtraFields["steward"].Raw()); x.TurnID != extOf(t, first.JSON.ExtraFields["steward"].Raw()).TurnID || x.Status != steward.StatusCompleted {
		t.Fatalf("approve resumed %+v", x)
	}
	if tasks := e.tasks(); len(tasks) != 1 || tasks[0].Title != "buy milk" {
		t.Fatalf("tasks = %+v", tasks)
	}
	// Replaying the approval finds nothing pending any more: a new message, no second task.
	_, _ = e.client.Chat.Completions.New(e.ctx, openai.ChatCompletionNewParams{Model: "steward",
		Messages: history([]string{"remind me to buy milk", listing, "approve"})})
	if n := len(e.tasks()); n != 1 {
		t.Fatalf("%d tasks after replaying the approval", n)
	}
}

func TestDenyByReply(t *testing.T) {
	e := newEnv(t, writeScript()...)
	first := e.chat("remind me to buy milk")
	listing := first.Choices[0].Message.Content
	done := e.chat("remind me to buy milk", listing, "deny 1 I already bought it")
	if x := extOf(t, done.JSON.ExtraFields["steward"].Raw()); x.Status != steward.StatusCompleted {
		t.Fatalf("deny resumed %+v", x)
	}
	if n := len(e.tasks()); n != 0 {
		t.Fatalf("%d tasks after a denial", n)
	}
	// The model was told why.
	reqs := e.model.Requests()
	last := reqs[len(reqs)-1].Messages
	if b, _ := json.Marshal(last[len(last)-1]); !strings.Contains(string(b), "I already bought it") {
		t.Fatalf("the model was not given the reason: %s", b)
	}
}

func TestOtherMessageLeavesCallsPending(t *testing.T) {
	e := newEnv(t, append(writeScript()[:1], scripted.Reply(scripted.Text("It is sunny.")), scripted.Reply(scripted.Text("Done.")))...)
	first := e.chat("remind me to buy milk")
	listing := first.Choices[0].Message.Content
	other := e.chat("remind me to buy milk", listing, "what is the weather?")
	if got := other.Choices[0].Message.Content; got != "It is sunny." {
		t.Fatalf("answer = %q", got)
	}
	if n := len(e.tasks()); n != 0 {
		t.Fatalf("%d tasks: the other message decided the call", n)
	}
	// An approval without any listing in the request (pinned, no history) decides nothing.
	conv := extOf(t, first.JSON.ExtraFields["steward"].Raw()).ConversationID
	_, err := e.client.Chat.Completions.New(e.ctx, openai.ChatCompletionNewParams{Model: "steward", Messages: history([]string{"approve"})},
		option.WithHeader("X-Steward-Conversation-Id", conv))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict || len(e.tasks()) != 0 {
		t.Fatalf("approve without a listing: %v", err)
	}
	// With the history, the listing further up still binds the reply.
	done := e.chat("remind me to buy milk", listing, "what is the weather?", "It is sunny.", "approve")
	if got := done.Choices[0].Message.Content; got != "Done." || len(e.tasks()) != 1 {
		t.Fatalf("answer %q, %d tasks after the approval", got, len(e.tasks()))
	}
}

func TestHistoryResendDoesNotDuplicate(t *testing.T) {
	e := newEnv(t, scripted.Reply(scripted.Text("One.")), scripted.Reply(scripted.Text("Two.")), scripted.Reply(scripted.Text("Three.")))
	e.chat("first question")
	e.chat("first question", "One.", "second question")
	third := e.chat("first question", "One.", "second question", "Two.", "third question")
	convs := e.conversations()
	if len(convs) != 1 {
		t.Fatalf("conversations = %v", convs)
	}
	for _, n := range convs {
		if n != 6 {
			t.Fatalf("stored %d messages, want 6 (three turns, no duplicates)", n)
		}
	}
	// The model saw the earlier turns once each, from Steward's own history.
	reqs := e.model.Requests()
	if got := len(reqs[2].Messages); got != 5 {
		t.Fatalf("third model call had %d messages, want 5", got)
	}
	// Pinning the conversation continues it even without the history.
	id := extOf(t, third.JSON.ExtraFields["steward"].Raw()).ConversationID
	_, _ = e.client.Chat.Completions.New(e.ctx, openai.ChatCompletionNewParams{Model: "steward", Messages: history([]string{"fourth"})},
		option.WithHeader("X-Steward-Conversation-Id", id))
	if convs := e.conversations(); len(convs) != 1 {
		t.Fatalf("a pinned request started a new conversation: %v", convs)
	}
}

func TestWrongKeyIs401InOpenAIShape(t *testing.T) {
	e := newEnv(t)
	bad := openai.NewClient(option.WithBaseURL(e.srv.URL+"/v1"), option.WithAPIKey("sk-wrong"), option.WithMaxRetries(0))
	_, err := bad.Chat.Completions.New(e.ctx, openai.ChatCompletionNewParams{Model: "steward", Messages: history([]string{"hi"})})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || apiErr.Type != "authentication_error" ||
		apiErr.Code != "invalid_api_key" || apiErr.Message == "" {
		t.Fatalf("err = %#v", err)
	}
	if len(e.conversations()) != 0 {
		t.Fatal("a refused request wrote a conversation")
	}
}

func TestBadInputIs4xxAndWritesNothing(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, body string
		status     int
	}{
		{"no messages", `{"model":"steward","messages":[]}`, 400},
		{"unknown role", `{"model":"steward","messages":[{"role":"wizard","content":"hi"}]}`, 400},
		{"tool role", `{"model":"steward","messages":[{"role":"tool","content":"hi"}]}`, 400},
		{"last not user", `{"model":"steward","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`, 400},
		{"image part", `{"model":"steward","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400},
		{"malformed JSON", `{"model":"steward","messages":[`, 400},
		{"not an object", `[1]`, 400},
		{"empty message", `{"model":"steward","messages":[{"role":"user","content":"  "}]}`, 400},
		{"unknown model", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, 404},
		{"2 MB body", `{"model":"steward","messages":[{"role":"user","content":"` + strings.Repeat("a", 2<<20) + `"}]}`, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/chat/completions", strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+e.key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var body struct {
				Error struct {
					Message, Type string
					Code          *string
				}
			}
			if resp.StatusCode != c.status || json.Unmarshal(b, &body) != nil || body.Error.Message == "" ||
				body.Error.Type != "invalid_request_error" || body.Error.Code == nil {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
		})
	}
	if n := len(e.conversations()); n != 0 || len(e.model.Requests()) != 0 {
		t.Fatalf("bad requests wrote %d conversations, called the model %d times", n, len(e.model.Requests()))
	}
}

func TestStreamedSuspendThenApprove(t *testing.T) {
	e := newEnv(t, writeScript()...)
	s := e.client.Chat.Completions.NewStreaming(e.ctx, openai.ChatCompletionNewParams{Model: "steward", Messages: history([]string{"remind me to buy milk"})})
	acc := openai.ChatCompletionAccumulator{}
	last := ""
	for s.Next() {
		acc.AddChunk(s.Current())
		if f, ok := s.Current().JSON.ExtraFields["steward"]; ok {
			last = f.Raw()
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	listing := acc.Choices[0].Message.Content
	if x := extOf(t, last); x.Status != steward.StatusSuspended || len(x.Pending) != 1 || !strings.Contains(listing, "1. create_task") {
		t.Fatalf("streamed %q, steward %s", listing, last)
	}
	e.chat("remind me to buy milk", listing, "approve 1")
	if n := len(e.tasks()); n != 1 {
		t.Fatalf("%d tasks after approving the streamed listing", n)
	}
}
