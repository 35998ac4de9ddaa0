//go:build unix

package lambdatest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/deployment"
	"github.com/stewardhq/steward/internal/work"
)

// sampleEvent reads events/<name>.json, the sample `sam local invoke` uses, into v, refusing
// fields v does not have (a misspelt field would be a silent no-op for the operator).
func sampleEvent(t *testing.T, name string, v any) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "events", name+".json"))
	if err != nil {
		t.Fatalf("no sample event for %s: %v", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("events/%s.json is not the function's event: %v", name, err)
	}
	return raw
}

// TestSampleEvents: every function of the template has a sample event in events/ that
// decodes as the event its function takes (TestLocalEnvironment checks events/env.json).
func TestSampleEvents(t *testing.T) {
	t.Parallel()
	for name, fn := range rawFunctions(t) {
		base := filepath.Base(fn.CodeUri)
		switch base {
		case "chat":
			sampleEvent(t, base, &events.LambdaFunctionURLRequest{})
		case "scheduler":
			sampleEvent(t, base, &autonomy.Event{})
		case "worker":
			var ev events.SQSEvent
			sampleEvent(t, base, &ev)
			for _, rec := range ev.Records {
				dec := json.NewDecoder(strings.NewReader(rec.Body))
				dec.DisallowUnknownFields()
				var m work.Message
				if err := dec.Decode(&m); err != nil || m.OwnerID == uuid.Nil || m.Kind != autonomy.WebhookKind || m.Key == "" {
					t.Errorf("events/worker.json: record body %q is not {owner_id, kind, key}: %v", rec.Body, err)
				}
			}
			if len(ev.Records) == 0 || ev.Records[0].EventSource != "aws:sqs" {
				t.Errorf("events/worker.json: no SQS record")
			}
		case "api", "confirm", "webhook":
			var ev events.APIGatewayV2HTTPRequest
			sampleEvent(t, base, &ev)
			if ev.RequestContext.HTTP.Method == "" || ev.RawPath == "" {
				t.Errorf("events/%s.json: no method or path", base)
			}
		case "migrate":
			if ev := (deployment.Event{}); sampleEvent(t, base, &ev) != nil && ev.Action != deployment.ActionMigrate {
				t.Errorf("events/migrate.json: action %q, want %s", ev.Action, deployment.ActionMigrate)
			}
		default:
			t.Errorf("%s (%s): no sample event kind known to this test", name, base)
		}
	}
}

// TestSampleEventsUnderTheLambdaEmulator runs the api and scheduler bootstraps under the
// Runtime Interface Emulator on their sample events, and every line they log while invoked
// carries the invocation's aws_request_id.
func TestSampleEventsUnderTheLambdaEmulator(t *testing.T) {
	t.Parallel()
	rie := findRIE(t)
	f := newAutonomyFixture(t, "samples")
	bins := buildBootstraps(t, runtime.GOARCH, "functions/api", "functions/scheduler")
	api := startRIE(t, rie, "api", bins["functions/api"], f.env())
	sched := startRIE(t, rie, "scheduler", bins["functions/scheduler"], f.env())

	var health events.APIGatewayV2HTTPRequest
	sampleEvent(t, "api", &health)
	if status, body := api.invokeHTTPAPI(t, health); status != http.StatusOK {
		t.Errorf("api on events/api.json: %d %s", status, body)
	}
	sched.invokeScheduler(t, string(sampleEvent(t, "scheduler", &autonomy.Event{})))

	for _, e := range []*emulator{api, sched} {
		// The emulator copies the function's output to its log asynchronously: wait a little
		// for the invocation's end (INVOKE RTDONE) to be there before reading the lines.
		for deadline := time.Now().Add(5 * time.Second); !strings.Contains(e.logs.String(), "INVOKE RTDONE(") && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
		// The function's lines between the emulator's INVOKE START and RTDONE (cold-start
		// lines belong to no invocation).
		var logged int
		var invoking bool
		for _, line := range strings.Split(e.logs.String(), "\n") {
			switch {
			case strings.Contains(line, "INVOKE START("):
				invoking = true
			case strings.Contains(line, "INVOKE RTDONE("):
				invoking = false
			}
			var rec map[string]any
			if !invoking || !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			if id, _ := rec["aws_request_id"].(string); id == "" {
				t.Errorf("%s logged a line without aws_request_id: %s", e.name, line)
			}
			logged++
		}
		if logged == 0 {
			t.Errorf("%s logged nothing on its sample event:\n%s", e.name, e.logs.String())
		}
	}
}
