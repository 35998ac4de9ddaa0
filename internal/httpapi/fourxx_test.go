package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Client mistakes that Postgres refuses (a check constraint, a NUL byte that text and jsonb
// cannot hold) are 4xx with the error shape, and store nothing (issue 10, item 5).
func TestClientMistakesAreRefusedNot500(t *testing.T) {
	t.Parallel()
	e, _, _ := fullEnv(t)
	cases := []struct {
		name, path, body string
	}{
		{"rule tool Notify", "/v1/rules", `{"tool":"Notify","effect":"allow"}`},
		{"rule tool with a space", "/v1/rules", `{"tool":"no tify","effect":"allow"}`},
		{"rule tool with a quote", "/v1/rules", `{"tool":"no\"tify","effect":"allow"}`},
		{"NUL in a rule predicate", "/v1/rules", `{"tool":"notify","effect":"allow","predicate":{"text":"a\u0000b"}}`},
		{"NUL in a rule note", "/v1/rules", `{"tool":"notify","effect":"allow","note":"a\u0000b"}`},
		{"NUL in fact content", "/v1/memory/facts", `{"content":"Alice \u0000 tea"}`},
		{"NUL in a stop reason", "/v1/control/stop", `{"reason":"gone \u0000 fishing"}`},
		{"NUL in a chat message", "/v1/chat", `{"message":"hello \u0000 there"}`},
	}
	for _, tc := range cases {
		resp := e.do(request{method: "POST", path: tc.path, key: e.key, body: tc.body})
		if resp.status < 400 || resp.status >= 500 {
			t.Errorf("%s: %d %s, want a 4xx", tc.name, resp.status, resp.body)
			continue
		}
		if ae := errorOf(t, resp, http.StatusUnprocessableEntity, "invalid"); strings.Contains(ae.Error.Message, "SQLSTATE") {
			t.Errorf("%s: the message leaks SQL: %s", tc.name, ae.Error.Message)
		}
	}
	resp := e.do(request{method: "POST", path: "/webhooks/wh_x%00", body: `{}`})
	errorOf(t, resp, http.StatusNotFound, "not_found")

	if turns, convs := e.counts(); turns != 0 || convs != 0 {
		t.Errorf("refused requests left %d turns and %d conversations", turns, convs)
	}
	err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		rules, err := tx.Rules.List(e.ctx)
		if err != nil || len(rules) != 0 {
			t.Errorf("rules stored: %v %v", rules, err)
		}
		ctl, err := tx.Safety.Controls(e.ctx)
		if killed, _ := ctl.Killed(); err != nil || killed {
			t.Errorf("the kill switch was engaged: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp := e.do(request{method: "GET", path: "/v1/memory/facts", key: e.key}); strings.Contains(string(resp.body), "tea") {
		t.Errorf("refused fact stored: %s", resp.body)
	}
}

// Rules name registered write tools, or "*" (issue 10, item 7).
func TestRulesNameWriteTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, tool := range []string{"send_money", "list_tasks", "current_time"} {
		resp := e.do(request{method: "POST", path: "/v1/rules", key: e.key, body: `{"tool":"` + tool + `","effect":"deny"}`})
		ae := errorOf(t, resp, http.StatusUnprocessableEntity, "invalid")
		if !strings.Contains(ae.Error.Message, "create_task") || !strings.Contains(ae.Error.Message, "notify") {
			t.Errorf("%s: the message does not list the write tools: %s", tool, ae.Error.Message)
		}
	}
	for _, tool := range []string{"notify", "*"} {
		if resp := e.do(request{method: "POST", path: "/v1/rules", key: e.key, body: `{"tool":"` + tool + `","effect":"deny"}`}); resp.status != http.StatusCreated {
			t.Errorf("rule on %s: %d %s", tool, resp.status, resp.body)
		}
	}
	if resp := e.do(request{method: "GET", path: "/v1/rules", key: e.key}); strings.Contains(string(resp.body), "send_money") || strings.Contains(string(resp.body), "list_tasks") {
		t.Errorf("refused rules stored: %s", resp.body)
	}
}

// A signed webhook body with a NUL byte is refused at the edge, and leaves no run and no
// turn running until the sweep (issue 10, item 6).
func TestWebhookBodyWithNULIsRefused(t *testing.T) {
	t.Parallel()
	e, hooks, processed := fullEnv(t)
	hook, err := hooks.Create(e.ctx, e.owner, "github")
	if err != nil {
		t.Fatal(err)
	}
	body := "{\"title\":\"a\x00b\"}"
	resp := e.do(request{method: "POST", path: hook.URLPath, body: body, header: signed(t, hook.Secret, "m1", time.Now(), body)})
	if resp.status == http.StatusAccepted {
		select {
		case <-processed:
		case <-time.After(10 * time.Second):
			t.Fatal("the accepted delivery was never processed")
		}
	}
	for _, turn := range e.turns() {
		if turn.Status == steward.StatusRunning {
			t.Errorf("turn %s left running", turn.ID)
		}
	}
	errorOf(t, resp, http.StatusUnprocessableEntity, "invalid")
	err = e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		rs, err := tx.Runs.List(e.ctx, "", 10)
		if len(rs) != 0 {
			t.Errorf("refused delivery left %d runs", len(rs))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A turn whose outcome Postgres cannot hold (here a model answer with a NUL byte) is failed
// at once, not left running until the sweep (issue 10, item 6).
func TestUnsavableTurnFailsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, text("done \x00 here"))
	resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hello"}`})
	v := viewOf(t, resp)
	if v.Status != steward.StatusFailed || v.Error == "" {
		t.Fatalf("view = %s", resp.body)
	}
	if st := e.turnStatus(v.TurnID); st != steward.StatusFailed {
		t.Fatalf("stored turn is %s, want failed", st)
	}
}
