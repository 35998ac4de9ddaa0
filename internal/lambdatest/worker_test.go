//go:build unix

package lambdatest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/work"
)

// The role credentials the Lambda runtime would give the functions; the fake SQS checks
// every request is signed with them.
var sqsCreds = aws.Credentials{AccessKeyID: "AKIDWORKER", SecretAccessKey: "worker-secret", SessionToken: "worker-session"}

const sqsRegion = "eu-west-1"

// fakeSQS is SQS's JSON API (awsJson1_0) for SendMessage, checking each request's SigV4
// signature; with failing set it answers every request 500 InternalError.
type fakeSQS struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	failing bool
	sent    []sqsSend // the messages accepted
	tries   int       // every SendMessage request, accepted or not
}

type sqsSend struct {
	QueueURL    string `json:"QueueUrl"`
	MessageBody string
	ID          string
}

func newFakeSQS(t *testing.T) *fakeSQS {
	f := &fakeSQS{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// queueURL is the queue's URL, on the fake's origin as a real queue URL is on SQS's endpoint.
func (f *fakeSQS) queueURL() string { return f.srv.URL + "/123456789012/steward-RunQueue" }

func (f *fakeSQS) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	fail := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.sqs#" + typ, "message": msg}) //nolint:errcheck // the client reports it
	}
	if r.Method != http.MethodPost || r.URL.Path != "/" || r.Header.Get("X-Amz-Target") != "AmazonSQS.SendMessage" ||
		r.Header.Get("Content-Type") != "application/x-amz-json-1.0" {
		f.t.Errorf("fake SQS: %s %s target %q content-type %q, want POST / AmazonSQS.SendMessage application/x-amz-json-1.0",
			r.Method, r.URL.Path, r.Header.Get("X-Amz-Target"), r.Header.Get("Content-Type"))
		fail(http.StatusBadRequest, "InvalidAction", "not SendMessage")
		return
	}
	if err := checkSQSSignature(r, body); err != nil {
		f.t.Errorf("fake SQS: %v", err)
		fail(http.StatusForbidden, "InvalidSignature", err.Error())
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries++
	if f.failing {
		fail(http.StatusInternalServerError, "InternalError", "the fake is failing")
		return
	}
	var m sqsSend
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil || m.QueueURL != f.queueURL() {
		f.t.Errorf("fake SQS: SendMessage body %s: %v (want QueueUrl %s)", body, err, f.queueURL())
		fail(http.StatusBadRequest, "InvalidParameterValue", "bad body")
		return
	}
	m.ID = uuid.NewString()
	f.sent = append(f.sent, m)
	json.NewEncoder(w).Encode(map[string]string{"MessageId": m.ID}) //nolint:errcheck // test fake
}

func (f *fakeSQS) state() (sent []sqsSend, tries int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent), f.tries
}

func (f *fakeSQS) setFailing(v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failing = v
}

// checkSQSSignature signs again what arrived (method, host, path, the signed headers, the
// body's hash) with sqsCreds at the request's X-Amz-Date, as SQS would, and compares.
func checkSQSSignature(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+sqsCreds.AccessKeyID+"/") || !strings.Contains(auth, "/"+sqsRegion+"/sqs/aws4_request") {
		return fmt.Errorf("Authorization %q is not SigV4 for sqs in %s with the role's key", auth, sqsRegion)
	}
	if r.Header.Get("X-Amz-Security-Token") != sqsCreds.SessionToken {
		return fmt.Errorf("X-Amz-Security-Token is not the role's session token")
	}
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date: %v", err)
	}
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	for _, h := range strings.Split(signed, ";") {
		if h != "host" && h != "content-length" {
			again.Header.Set(h, r.Header.Get(h))
		}
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), sqsCreds, again, hex.EncodeToString(sum[:]), "sqs", sqsRegion, when); err != nil {
		return err
	}
	if want := again.Header.Get("Authorization"); auth != want {
		return fmt.Errorf("SigV4 signature does not match the request as received:\n got %s\nwant %s", auth, want)
	}
	return nil
}

// invokeWorker sends an SQS event and decodes the partial batch response.
func (e *emulator) invokeWorker(t *testing.T, ev events.SQSEvent) events.SQSEventResponse {
	t.Helper()
	payload := e.invoke(t, ev)
	var out struct {
		events.SQSEventResponse
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	}
	if err := json.Unmarshal(payload, &out); err != nil || out.ErrorType != "" || out.ErrorMessage != "" {
		t.Fatalf("%s: not a batch response: %q (%v)\n%s", e.name, payload, err, e.logs.String())
	}
	return out.SQSEventResponse
}

// sqsRecord is the record the event source mapping would deliver for a message.
func sqsRecord(id, body string) events.SQSMessage {
	return events.SQSMessage{MessageId: id, ReceiptHandle: "rh-" + id, Body: body, EventSource: "aws:sqs",
		EventSourceARN: "arn:aws:sqs:" + sqsRegion + ":123456789012:steward-RunQueue", AWSRegion: sqsRegion,
		Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
}

// TestRunQueueUnderTheLambdaEmulator is issue 15 §2: the functions/webhook bootstrap, with
// STEWARD_RUN_QUEUE_URL on a fake SQS, answers 202 and sends a correctly signed SendMessage
// {owner_id, run_id}; the functions/worker bootstrap gets that message in a real SQS event
// next to a malformed one and reports only the malformed one as failed, running the run
// once — a redelivery does nothing more. With the fake failing, the webhook still answers
// 202 and the scheduler's tick drains the run.
func TestRunQueueUnderTheLambdaEmulator(t *testing.T) {
	t.Parallel()
	rie := findRIE(t)
	f := newAutonomyFixture(t, "queued")
	hook, err := f.hooks.Create(f.ctx, f.owner, "github")
	if err != nil {
		t.Fatal(err)
	}
	sqs := newFakeSQS(t)
	awsEnv := []string{"AWS_REGION=" + sqsRegion, "AWS_ACCESS_KEY_ID=" + sqsCreds.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + sqsCreds.SecretAccessKey, "AWS_SESSION_TOKEN=" + sqsCreds.SessionToken}
	bins := buildBootstraps(t, runtime.GOARCH, "functions/webhook", "functions/worker", "functions/scheduler")
	checkInitError(t, "worker", bins["functions/worker"])
	webhook := startRIE(t, rie, "webhook", bins["functions/webhook"], append(append(f.env(), awsEnv...), "STEWARD_RUN_QUEUE_URL="+sqs.queueURL()))
	worker := startRIE(t, rie, "worker", bins["functions/worker"], append(f.env(), awsEnv...))
	scheduler := startRIE(t, rie, "scheduler", bins["functions/scheduler"], f.env())

	deliver := func(msgID string) autonomy.Receipt {
		t.Helper()
		body := `{"action":"opened","issue":{"title":"queued ` + msgID + `","number":7}}`
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		sig, err := autonomy.Sign(hook.Secret, msgID, ts, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		status, resp := webhook.invokeHTTPAPI(t, events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: "POST /webhooks/{hook_id}", RawPath: hook.URLPath,
			Headers: map[string]string{"content-type": "application/json",
				autonomy.HeaderID: msgID, autonomy.HeaderTimestamp: ts, autonomy.HeaderSignature: sig},
			PathParameters: map[string]string{"hook_id": hook.HookID},
			Body:           body,
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				RouteKey: "POST /webhooks/{hook_id}", Stage: "$default", RequestID: "webhook-" + msgID,
				DomainName: "api.execute-api.test.amazonaws.com",
				HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: hook.URLPath, Protocol: "HTTP/1.1", SourceIP: "192.0.2.1"},
			},
		})
		var rc autonomy.Receipt
		if status != http.StatusAccepted || json.Unmarshal(resp, &rc) != nil || rc.RunID == uuid.Nil {
			t.Fatalf("delivery %s: %d %s, want 202 with a run id", msgID, status, resp)
		}
		return rc
	}
	runOf := func(id uuid.UUID) store.JobRun {
		t.Helper()
		for _, r := range f.runs("") {
			if r.ID == id {
				return r
			}
		}
		t.Fatalf("no job_run %s", id)
		return store.JobRun{}
	}

	// 1. The webhook sends {owner_id, run_id}, signed, before its 202; the run waits queued.
	first := deliver("msg_queue_1")
	sent, _ := sqs.state()
	if len(sent) != 1 {
		t.Fatalf("fake SQS got %d messages, want 1", len(sent))
	}
	var msg work.Message
	dec := json.NewDecoder(strings.NewReader(sent[0].MessageBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&msg); err != nil || msg.OwnerID != f.owner || msg.Kind != autonomy.WebhookKind || msg.Key != first.RunID.String() {
		t.Fatalf("message body %q (%v), want {owner_id %s, kind %s, key %s}", sent[0].MessageBody, err, f.owner, autonomy.WebhookKind, first.RunID)
	}
	if r := runOf(first.RunID); r.Status != store.RunQueued {
		t.Fatalf("run %s is %s before the worker ran, want queued", r.ID, r.Status)
	}

	// 2. The worker gets it in a batch with a malformed record: only that one fails.
	good, bad := sqsRecord(sent[0].ID, sent[0].MessageBody), sqsRecord("bad-1", `{"owner_id": "not json`)
	resp := worker.invokeWorker(t, events.SQSEvent{Records: []events.SQSMessage{good, bad}})
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != bad.MessageId {
		t.Fatalf("batch item failures %+v, want only %s", resp.BatchItemFailures, bad.MessageId)
	}
	done := runOf(first.RunID)
	f.checkRecorded(done, steward.TriggerWebhook)

	// 3. The same record again (SQS delivers at least once): nothing more happens.
	if resp := worker.invokeWorker(t, events.SQSEvent{Records: []events.SQSMessage{good}}); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("the redelivered record failed: %+v", resp.BatchItemFailures)
	}
	again := runOf(first.RunID)
	if again.Status != done.Status || *again.TurnID != *done.TurnID || !again.FinishedAt.Equal(*done.FinishedAt) {
		t.Fatalf("the redelivery changed the run: %+v, was %+v", again, done)
	}
	if n := countTurns(t, f); n != 1 {
		t.Fatalf("%d turns after the redelivery, want 1", n)
	}

	// 4. SQS failing: the webhook still answers 202, logs, and the run stays queued …
	sqs.setFailing(true)
	_, before := sqs.state()
	second := deliver("msg_queue_2")
	if _, tries := sqs.state(); tries <= before {
		t.Fatalf("the webhook did not try to send the second run")
	}
	// The failed send is logged, on the invocation's line (its aws_request_id). The
	// emulator copies the function's output to its log asynchronously: wait for it a little.
	var logged bool
	for deadline := time.Now().Add(5 * time.Second); !logged && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, line := range strings.Split(webhook.logs.String(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil || !strings.Contains(fmt.Sprint(rec["message"]), "run queue send failed") {
				continue
			}
			logged = true
			if id, _ := rec["aws_request_id"].(string); id == "" {
				t.Errorf("the failed send is logged without the invocation's aws_request_id: %s", line)
			}
		}
	}
	if !logged {
		t.Errorf("the failed send is not logged:\n%s", webhook.logs.String())
	}
	if r := runOf(second.RunID); r.Status != store.RunQueued {
		t.Fatalf("run %s is %s after a failed send, want queued", r.ID, r.Status)
	}
	// … until the scheduler's tick drains it, once its worker is overdue (a minute; moved
	// back here rather than waited for).
	backdateRun(t, f, second.RunID, 5*time.Minute)
	scheduler.invokeScheduler(t, `{"scheduled_time":"`+time.Now().UTC().Truncate(time.Minute).Format(time.RFC3339)+`"}`)
	f.checkRecorded(runOf(second.RunID), steward.TriggerWebhook)
	if n := countTurns(t, f); n != 2 {
		t.Fatalf("%d turns, want 2 (one per delivery)", n)
	}
}

// countTurns counts every turn of the fixture's database (as the superuser).
func countTurns(t *testing.T, f *autonomyFixture) int {
	t.Helper()
	conn, err := pgx.Connect(f.ctx, f.db.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(f.ctx)
	var n int
	if err := conn.QueryRow(f.ctx, `SELECT count(*) FROM turns`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// backdateRun moves a queued run's creation back by d (as the superuser), as if its worker
// had been overdue that long.
func backdateRun(t *testing.T, f *autonomyFixture, id uuid.UUID, d time.Duration) {
	t.Helper()
	conn, err := pgx.Connect(f.ctx, f.db.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(f.ctx)
	if _, err := conn.Exec(f.ctx, `UPDATE job_runs SET created_at = created_at - make_interval(secs => $2) WHERE id = $1`, id, d.Seconds()); err != nil {
		t.Fatal(err)
	}
	// The run's work item (internal/work) is what the drain reads: due d earlier too.
	if _, err := conn.Exec(f.ctx, `UPDATE work SET run_after = run_after - make_interval(secs => $2) WHERE kind = 'webhook_run' AND key = $1::text`, id.String(), d.Seconds()); err != nil {
		t.Fatal(err)
	}
}
