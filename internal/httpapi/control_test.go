package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

func TestKillSwitchOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, text("hi"))
	resp := e.do(request{method: "POST", path: "/v1/control/stop", key: e.key, body: `{"reason":"going on holiday"}`})
	if resp.status != http.StatusOK || !strings.Contains(string(resp.body), `"stopped":true`) {
		t.Fatalf("stop: %d %s", resp.status, resp.body)
	}
	resp = e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hello"}`})
	var body struct {
		Error struct{ Code, Reason, Message string } `json:"error"`
	}
	json.Unmarshal(resp.body, &body)
	if resp.status != http.StatusLocked || body.Error.Code != "killed" || body.Error.Reason != "killed" || !strings.Contains(body.Error.Message, "holiday") {
		t.Fatalf("chat while stopped: %d %s", resp.status, resp.body)
	}
	if turns, convs := e.counts(); turns != 0 || convs != 0 {
		t.Fatalf("a refused chat left %d turns, %d conversations", turns, convs)
	}
	if resp := e.do(request{method: "POST", path: "/v1/control/resume", key: e.key}); resp.status != http.StatusOK || !strings.Contains(string(resp.body), `"stopped":false`) {
		t.Fatalf("resume: %d %s", resp.status, resp.body)
	}
	if v := e.chat("hello"); v.Status != steward.StatusCompleted {
		t.Fatalf("after resume: %+v", v)
	}
	// Another owner's switch is theirs alone.
	bob := e.addOwner("bob")
	if resp := e.do(request{method: "GET", path: "/v1/control", key: bob}); !strings.Contains(string(resp.body), `"stopped":false`) {
		t.Fatalf("bob's control: %s", resp.body)
	}
}

func TestOverBudgetCarriesItsReason(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if err := e.door.SetDailyLimits(e.ctx, e.owner, 0, 5_000_000); err != nil {
		t.Fatal(err)
	}
	resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hello"}`})
	if resp.status != http.StatusTooManyRequests || !strings.Contains(string(resp.body), `"reason":"owner_quota"`) {
		t.Fatalf("over quota: %d %s", resp.status, resp.body)
	}
	untilMidnight(t, "over quota", resp)
	if err := e.door.SetDailyLimits(e.ctx, e.owner, 10, 5_000_000); err != nil {
		t.Fatal(err)
	}
	if err := e.door.SetGlobalCostCap(e.ctx, 0); err != nil {
		t.Fatal(err)
	}
	resp = e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hello"}`})
	if resp.status != http.StatusServiceUnavailable || !strings.Contains(string(resp.body), `"reason":"daily_cap"`) {
		t.Fatalf("over the deployment cap: %d %s", resp.status, resp.body)
	}
	untilMidnight(t, "over the deployment cap", resp)
}

// untilMidnight checks that a budget's refusal says to retry when the day's budgets reset:
// Retry-After is the seconds until the next midnight UTC.
func untilMidnight(t *testing.T, what string, resp response) {
	t.Helper()
	now := time.Now().UTC()
	want := int(now.Truncate(24*time.Hour).Add(24*time.Hour).Sub(now) / time.Second)
	got, err := strconv.Atoi(resp.header.Get("Retry-After"))
	if err != nil || got < want-60 || got > want+60 {
		t.Errorf("%s: Retry-After %q, want about %d (the seconds until midnight UTC)", what, resp.header.Get("Retry-After"), want)
	}
}

func TestRulesEventsAndActivity(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, createTask("w1", "buy milk"), text("Added."), createTask("w2", "buy bread"), text("Added too."))
	resp := e.do(request{method: "POST", path: "/v1/rules", key: e.key, body: `{"tool":"create_task","effect":"allow","predicate":{"title":"buy bread"}}`})
	if resp.status != http.StatusCreated {
		t.Fatalf("create rule: %d %s", resp.status, resp.body)
	}
	var rule steward.Rule
	json.Unmarshal(resp.body, &rule)
	for _, bad := range []string{`{"tool":"","effect":"allow"}`, `{"tool":"x","effect":"maybe"}`, `{"tool":"x","effect":"deny","predicate":[1]}`} {
		if resp := e.do(request{method: "POST", path: "/v1/rules", key: e.key, body: bad}); resp.status != http.StatusUnprocessableEntity {
			t.Errorf("rule %s: %d %s", bad, resp.status, resp.body)
		}
	}
	// The predicate does not cover "buy milk": it waits for a human; "buy bread" runs.
	v := e.chat("remind me to buy milk")
	if v.Status != steward.StatusSuspended {
		t.Fatalf("milk: %+v", v)
	}
	if v2 := e.chat("and bread"); v2.Status != steward.StatusCompleted {
		t.Fatalf("bread under the allow rule: %+v", v2)
	}
	resp = e.do(request{method: "GET", path: "/v1/turns/" + v.TurnID.String() + "/events", key: e.key})
	if resp.status != http.StatusOK || !strings.Contains(string(resp.body), `"turn_suspended"`) {
		t.Fatalf("events: %d %s", resp.status, resp.body)
	}
	bob := e.addOwner("bob")
	if resp := e.do(request{method: "GET", path: "/v1/turns/" + v.TurnID.String() + "/events", key: bob}); resp.status != http.StatusNotFound {
		t.Fatalf("bob reads alice's events: %d", resp.status)
	}
	resp = e.do(request{method: "GET", path: "/v1/activity", key: e.key})
	var feed struct{ Activity []steward.View }
	json.Unmarshal(resp.body, &feed)
	if len(feed.Activity) != 2 || feed.Activity[0].Trigger != steward.TriggerChat {
		t.Fatalf("activity: %s", resp.body)
	}
	if resp := e.do(request{method: "DELETE", path: "/v1/rules/" + rule.ID.String(), key: bob}); resp.status != http.StatusNotFound {
		t.Fatalf("bob deletes alice's rule: %d", resp.status)
	}
	if resp := e.do(request{method: "DELETE", path: "/v1/rules/" + rule.ID.String(), key: e.key}); resp.status != http.StatusNoContent {
		t.Fatalf("delete rule: %d %s", resp.status, resp.body)
	}
	if resp := e.do(request{method: "GET", path: "/v1/rules", key: e.key}); string(resp.body) != "{\"rules\":[]}\n" {
		t.Fatalf("rules after delete: %s", resp.body)
	}
}

func TestModeDenyRefusesWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, createTask("w1", "buy milk"), text("I could not add it."))
	if resp := e.do(request{method: "POST", path: "/v1/control/mode", key: e.key, body: `{"mode":"auto"}`}); resp.status != http.StatusUnprocessableEntity {
		t.Fatalf("auto without the server's permission: %d %s", resp.status, resp.body)
	}
	if resp := e.do(request{method: "POST", path: "/v1/control/mode", key: e.key, body: `{"mode":"sometimes"}`}); resp.status != http.StatusUnprocessableEntity {
		t.Fatalf("unknown mode: %d", resp.status)
	}
	resp := e.do(request{method: "POST", path: "/v1/control/mode", key: e.key, body: `{"mode":"deny"}`})
	if resp.status != http.StatusOK || !strings.Contains(string(resp.body), `"mode":"deny"`) {
		t.Fatalf("mode deny: %d %s", resp.status, resp.body)
	}
	v := e.chat("remind me to buy milk")
	if v.Status != steward.StatusCompleted || len(e.tasks()) != 0 {
		t.Fatalf("in deny mode: %+v, %d tasks", v, len(e.tasks()))
	}
}

// TestControlShowsBudget: GET /v1/control shows the owner their daily limits and today's use
// (issue 9.3).
func TestControlShowsBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, text("hi"))
	if err := e.door.SetDailyLimits(e.ctx, e.owner, 10, 250_000); err != nil {
		t.Fatal(err)
	}
	e.chat("hello")
	resp := e.do(request{method: "GET", path: "/v1/control", key: e.key})
	if resp.status != http.StatusOK || !strings.Contains(string(resp.body), `"budget":{"messages_today":1,"message_limit":10,"cost_usd_today":0,"cost_limit_usd":0.25,"resets_at":"`) {
		t.Fatalf("alice's control: %d %s", resp.status, resp.body)
	}
	// Another owner's use is theirs alone; the defaults are 500 messages and $5 a day.
	bob := e.addOwner("bob")
	resp = e.do(request{method: "GET", path: "/v1/control", key: bob})
	if !strings.Contains(string(resp.body), `"budget":{"messages_today":0,"message_limit":500,"cost_usd_today":0,"cost_limit_usd":5,`) {
		t.Fatalf("bob's control: %s", resp.body)
	}
}
