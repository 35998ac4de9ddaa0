package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/steward"
)

// faultyGemini is the Gemini REST API answering each request with fault: a handler that hangs,
// fails or answers nonsense on cue. hung is closed when the test ends, releasing a hanging
// handler.
func faultyGemini(t *testing.T, fault func(w http.ResponseWriter, r *http.Request, n int)) string {
	t.Helper()
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n++
		fault(w, r, n)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// geminiEnv is the whole app with the real Gemini adapter talking to url, each model call
// bounded by timeout.
func geminiEnv(t *testing.T, url string, timeout time.Duration) *env {
	t.Helper()
	return appEnv(t, apptest.Options{Env: map[string]string{
		"GEMINI_API_KEY": "test-key", "GEMINI_BASE_URL": url, "STEWARD_MODEL_TIMEOUT": timeout.String()}})
}

// refusedURL is a loopback address where nothing listens: a connection there is refused.
func refusedURL() string {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

// answer writes body as the API's answer: the JSON itself, or one server-sent event of it to
// a streamed request (alt=sse).
func answer(w http.ResponseWriter, r *http.Request, body string) {
	if r.URL.Query().Get("alt") == "sse" {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+body+"\r\n\r\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}

const geminiText = `{"candidates":[{"content":{"role":"model","parts":[{"text":"%s"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":3,"totalTokenCount":13}}`

// TestModelFaultsEndTheTurnInWords: whatever the model's API does mid-turn — hang, fail after
// the retries, refuse connections, cut its answer short, answer nonsense or nothing, call a tool that does not
// exist — the chat answers 200 with the turn ended and a reason the owner can read (or the
// turn goes on, for an unknown tool), never a 500, never a turn left running, never a write.
func TestModelFaultsEndTheTurnInWords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		fault  func(w http.ResponseWriter, r *http.Request, n int)
		status steward.Status
		reason string // in the turn's error, or its answer when completed
	}{
		{"timeout", func(w http.ResponseWriter, r *http.Request, n int) {
			select { // hangs past the turn's bound
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
		}, steward.StatusFailed, "did not answer within 2s"},
		{"5xx after retries", func(w http.ResponseWriter, r *http.Request, n int) {
			http.Error(w, `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`, http.StatusServiceUnavailable)
		}, steward.StatusFailed, "service is unavailable"},
		{"connection refused", nil, steward.StatusFailed, "could not be reached"},
		{"truncated answer", func(w http.ResponseWriter, r *http.Request, n int) {
			answer(w, r, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Here is`)
		}, steward.StatusFailed, "could not be used"},
		{"malformed JSON", func(w http.ResponseWriter, r *http.Request, n int) {
			answer(w, r, `{"candidates": 42}`)
		}, steward.StatusFailed, "could not be used"},
		{"no candidate", func(w http.ResponseWriter, r *http.Request, n int) {
			answer(w, r, `{"candidates":[],"usageMetadata":{"promptTokenCount":10}}`)
		}, steward.StatusFailed, "could not be used"},
		{"empty candidate", func(w http.ResponseWriter, r *http.Request, n int) {
			answer(w, r, `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"STOP"}]}`)
		}, steward.StatusFailed, "answered with nothing"},
		{"unknown tool", func(w http.ResponseWriter, r *http.Request, n int) {
			if n%2 == 1 {
				answer(w, r, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"delete_everything","args":{}}}]},"finishReason":"STOP"}]}`)
				return
			}
			answer(w, r, strings.Replace(geminiText, "%s", "I cannot do that.", 1))
		}, steward.StatusCompleted, "I cannot do that."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := refusedURL()
			if c.fault != nil {
				url = faultyGemini(t, c.fault)
			}
			e := geminiEnv(t, url, 2*time.Second)
			for _, stream := range []bool{false, true} {
				var v steward.View
				if stream {
					_, done := e.streamChat(`{"message":"add milk to my list"}`)
					events := <-done
					last := events[len(events)-1]
					v = viewOfEvent(t, last)
				} else {
					resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"add milk to my list"}`})
					v = viewOf(t, resp)
				}
				got := v.Error
				if c.status == steward.StatusCompleted {
					got = v.Answer
				}
				if v.Status != c.status || !strings.Contains(got, c.reason) {
					t.Errorf("stream=%v: turn %s %q %q, want %s with %q", stream, v.Status, v.Error, v.Answer, c.status, c.reason)
				}
				if st := e.turnStatus(v.TurnID); st != c.status {
					t.Errorf("stream=%v: stored turn %s, want %s", stream, st, c.status)
				}
			}
			if n := len(e.tasks()); n != 0 {
				t.Errorf("%d tasks, want none", n)
			}
		})
	}
}

// viewOfEvent decodes the turn a stream's last event carries (suspended, continuing,
// completed, error).
func viewOfEvent(t *testing.T, ev sseEvent) steward.View {
	t.Helper()
	var v steward.View
	if err := json.Unmarshal(ev.data, &v); err != nil || v.TurnID == uuid.Nil {
		t.Fatalf("last event %s %s: not a turn", ev.typ, ev.data)
	}
	return v
}
