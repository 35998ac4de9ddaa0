package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/script"
	"github.com/stewardhq/steward/internal/steward"
)

// TestHostileCodeLeavesServerResponsive: alice's turn runs code that doubles a list until
// memory runs out, then an endless loop, then a huge string; each ends with an error in words
// the model reads, the turn completes, and bob is answered meanwhile, quickly.
func TestHostileCodeLeavesServerResponsive(t *testing.T) {
	t.Parallel()
	attacks := []struct{ code, words string }{
		{"x = [0]\nfor i in range(64):\n    x = x + x", "more memory than Steward allows"},
		{"while True:\n    pass", "steps"},
		{"s = 'x' * (1 << 29)\nresult = len(s + s)", "more memory than Steward allows"},
	}
	var steps []scripted.Step
	for i, a := range attacks {
		steps = append(steps, scripted.Reply(scripted.Calls(scripted.Call("c"+string(rune('1'+i)), "run_code", jsonOf(t, map[string]string{"code": a.code})))))
	}
	steps = append(steps, text("Those did not work."))
	e := newEnv(t, nil, steps...)
	bob := e.addOwner("bob")
	done := make(chan steward.View, 1)
	start := time.Now()
	go func() { done <- e.chat("compute something enormous") }()
	var slowest time.Duration
	for waiting := true; waiting; {
		select {
		case v := <-done:
			if v.Status != steward.StatusCompleted {
				t.Fatalf("alice's turn: %+v\n%s", v, e.logs)
			}
			waiting = false
		case <-time.After(200 * time.Millisecond):
			t0 := time.Now()
			if resp := e.do(request{method: "GET", path: "/v1/conversations", key: bob}); resp.status != 200 {
				t.Fatalf("bob answered %d %s", resp.status, resp.body)
			}
			slowest = max(slowest, time.Since(t0))
		}
		if time.Since(start) > time.Duration(3*len(attacks))*script.Timeout {
			t.Fatal("the hostile code outlived its limits")
		}
	}
	if slowest > time.Second {
		t.Errorf("bob waited %v while alice's code ran", slowest)
	}
	reqs := e.model.Requests()
	for i, a := range attacks {
		msgs := reqs[i+1].Messages
		res := msgs[len(msgs)-1].Parts[0].ToolResult
		if res == nil || !res.IsError || !strings.Contains(string(res.Output), a.words) {
			t.Errorf("attack %d reached the model as %+v; want an error saying %q", i+1, res, a.words)
		}
	}
	t.Logf("three attacks in %v; bob's slowest answer %v", time.Since(start).Round(time.Millisecond), slowest.Round(time.Millisecond))
}
