//go:build unix

package lambdatest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm/gemini/geminifake"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/work"
)

// slowGemini is a Gemini that takes callDelay per generateContent call and answers a turn
// that needs three calls: list_tasks, list_tasks again, then a text answer (by the number of
// tool results the request carries). Embeddings go to geminifake.
type slowGemini struct {
	fake *geminifake.Server
	mu   sync.Mutex
	gen  int
}

const callDelay = 2 * time.Second

func (g *slowGemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, ":batchEmbedContents") {
		g.fake.ServeHTTP(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.gen++
	g.mu.Unlock()
	results := strings.Count(string(raw), `"functionResponse"`)
	time.Sleep(callDelay)
	part := fmt.Sprintf(`{"functionCall":{"id":"c%d","name":"list_tasks","args":{}}}`, results+1)
	if results >= 2 {
		part = `{"text":"You have no tasks."}`
	}
	body := `{"candidates":[{"content":{"role":"model","parts":[` + part + `]},"finishReason":"STOP"}],` +
		`"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":10,"totalTokenCount":110}}`
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body) //nolint:errcheck // the client reports a short body
}

func (g *slowGemini) calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gen
}

// TestTurnOutlivesTheDeadlineUnderTheLambdaEmulator is issue 16's deadline test: a turn that
// needs three model calls of 2 s each, in chat and worker functions with a 6 s timeout and a
// 3 s margin. The chat invocation answers continuing and sends {owner_id, turn_id} to the run
// queue; worker invocations fed the queue's messages finish the turn: completed once, three
// model calls in all, each read run once. Redelivering a message does nothing.
func TestTurnOutlivesTheDeadlineUnderTheLambdaEmulator(t *testing.T) {
	t.Parallel()
	rie := findRIE(t)
	ctx := context.Background()
	db := testdb.New(t)
	door, err := store.OpenDoor(ctx, db.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	owner, key, err := door.CreateOwner(ctx, "deadline")
	door.Close()
	if err != nil {
		t.Fatal(err)
	}
	gem := &slowGemini{fake: geminifake.New()}
	gsrv := httptest.NewServer(gem)
	t.Cleanup(gsrv.Close)
	sqs := newFakeSQS(t)
	env := []string{
		"APP_DATABASE_URL=" + db.AppURL, "DOOR_DATABASE_URL=" + db.DoorURL,
		"GEMINI_API_KEY=test", "GEMINI_BASE_URL=" + gsrv.URL, "STEWARD_LOG_LEVEL=debug",
		"AWS_LAMBDA_FUNCTION_TIMEOUT=6", "STEWARD_CONTINUE_MARGIN=3s", "STEWARD_RUN_QUEUE_URL=" + sqs.queueURL(),
		"AWS_REGION=" + sqsRegion, "AWS_ACCESS_KEY_ID=" + sqsCreds.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + sqsCreds.SecretAccessKey, "AWS_SESSION_TOKEN=" + sqsCreds.SessionToken,
	}
	bins := buildBootstraps(t, runtime.GOARCH, "functions/chat", "functions/worker")
	chat := startRIE(t, rie, "chat", bins["functions/chat"], env)
	worker := startRIE(t, rie, "worker", bins["functions/worker"], env)

	// 1. chat: the turn cannot finish within 6 s; it answers continuing and hands itself on.
	status, body := chat.invokeFunctionURL(t, chatEvent(key, "application/json", "what are my tasks? look twice"))
	var v steward.View
	if status != http.StatusOK || json.Unmarshal(body, &v) != nil || v.Status != steward.StatusContinuing {
		t.Fatalf("chat: %d %s, want 200 with status continuing", status, body)
	}
	sent, _ := sqs.state()
	if len(sent) != 1 {
		t.Fatalf("fake SQS got %d messages after chat, want 1", len(sent))
	}
	var msg work.Message
	if err := json.Unmarshal([]byte(sent[0].MessageBody), &msg); err != nil || msg.OwnerID != owner.ID || msg.Kind != agent.ContinueKind || msg.Key != v.TurnID.String() {
		t.Fatalf("message %q (%v), want {owner_id %s, kind %s, key %s}", sent[0].MessageBody, err, owner.ID, agent.ContinueKind, v.TurnID)
	}

	// 2. The worker takes each message the queue got, as the event source mapping would.
	for i := 0; i < len(sent); i++ {
		if i > 4 {
			t.Fatalf("%d continuations; the turn does not progress", i)
		}
		rec := sqsRecord(sent[i].ID, sent[i].MessageBody)
		if resp := worker.invokeWorker(t, events.SQSEvent{Records: []events.SQSMessage{rec}}); len(resp.BatchItemFailures) != 0 {
			t.Fatalf("worker failed message %d: %+v", i, resp.BatchItemFailures)
		}
		sent, _ = sqs.state()
	}
	turn := readTurn(t, db.AppURL, owner.ID, v.TurnID)
	if turn.Status != steward.StatusCompleted || turn.Answer != "You have no tasks." {
		t.Fatalf("turn %s %q (%s), want completed with the answer", turn.Status, turn.Answer, turn.Error)
	}
	if n := gem.calls(); n != 3 {
		t.Fatalf("%d model calls, want 3", n)
	}
	if n := completedEvents(t, db.AppURL, owner.ID, v.TurnID); n != 1 {
		t.Fatalf("%d turn_completed events, want 1", n)
	}

	// 3. A redelivered message does nothing: the turn is no longer continuing.
	rec := sqsRecord(sent[0].ID, sent[0].MessageBody)
	if resp := worker.invokeWorker(t, events.SQSEvent{Records: []events.SQSMessage{rec}}); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("the redelivered message failed: %+v", resp.BatchItemFailures)
	}
	if n := gem.calls(); n != 3 || completedEvents(t, db.AppURL, owner.ID, v.TurnID) != 1 {
		t.Fatalf("after the redelivery: %d model calls, want still 3 and one completion", n)
	}
}

// readTurn reads one turn as its owner.
func readTurn(t *testing.T, appURL string, owner, id uuid.UUID) steward.Turn {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, appURL, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var turn steward.Turn
	err = st.WithOwner(ctx, owner, func(tx *store.Tx) error {
		turn, err = tx.Turns.Get(ctx, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return turn
}

// completedEvents counts a turn's turn_completed audit events.
func completedEvents(t *testing.T, appURL string, owner, id uuid.UUID) int {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, appURL, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	err = st.WithOwner(ctx, owner, func(tx *store.Tx) error {
		evs, err := tx.Journal.TurnEvents(ctx, id)
		for _, e := range evs {
			if e.Kind == "turn_completed" {
				n++
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
