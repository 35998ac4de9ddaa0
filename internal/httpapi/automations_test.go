package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/llm/scripted"
)

// TestRemindersAndAutomationsAPI: the owner sets a zone, a reminder in words (shown in
// their zone and UTC), lists and cancels it; creates, pauses, edits and deletes an
// automation; bad input is a 422 in words, an unknown id a 404.
func TestRemindersAndAutomationsAPI(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 8, 14, 0, 0, 0, time.UTC)
	e := apptest.New(t, apptest.Options{Model: scripted.New(), Now: func() time.Time { return now }})
	_, key := e.DB.Owner(t, "ada")
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, e.Server.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, out
	}
	if code, out := call("PUT", "/v1/timezone", `{"timezone":"Mars/Olympus"}`); code != 422 {
		t.Fatalf("bad zone: %d %v", code, out)
	}
	if code, out := call("PUT", "/v1/timezone", `{"timezone":"Europe/Berlin"}`); code != 200 || out["timezone"] != "Europe/Berlin" {
		t.Fatalf("zone: %d %v", code, out)
	}
	code, r := call("POST", "/v1/reminders", `{"text":"call the school","at":"17:00"}`)
	if code != 201 || r["when"] != "Tue 8 Dec 2026 17:00 CET (16:00 UTC)" || r["due_at"] != "2026-12-08T16:00:00Z" {
		t.Fatalf("reminder: %d %v", code, r)
	}
	if code, out := call("POST", "/v1/reminders", `{"text":"x","at":"whenever"}`); code != 422 || !strings.Contains(errMessage(out), "not a time I can read") {
		t.Fatalf("bad time: %d %v", code, out)
	}
	if code, out := call("GET", "/v1/reminders", ""); code != 200 || len(out["reminders"].([]any)) != 1 {
		t.Fatalf("list: %d %v", code, out)
	}
	if code, out := call("DELETE", "/v1/reminders/"+r["id"].(string), ""); code != 200 || out["status"] != "cancelled" {
		t.Fatalf("cancel: %d %v", code, out)
	}
	if code, out := call("DELETE", "/v1/reminders/"+r["id"].(string), ""); code != 409 {
		t.Fatalf("cancel twice: %d %v", code, out)
	}
	// The cancelled one is listed with ?all (any boolean spelling); a word that is not one is refused.
	if code, out := call("GET", "/v1/reminders?all=1", ""); code != 200 || len(out["reminders"].([]any)) != 1 {
		t.Fatalf("list all: %d %v", code, out)
	}
	if code, out := call("GET", "/v1/reminders?all=maybe", ""); code != 400 || !strings.Contains(errMessage(out), "all must be true or false") {
		t.Fatalf("list all=maybe: %d %v", code, out)
	}
	code, a := call("POST", "/v1/automations", `{"instruction":"tell me my first meeting and the weather","schedule":"every weekday at 7:30"}`)
	if code != 201 || a["cron"] != "30 7 * * 1-5" || len(a["next_text"].([]any)) != 3 || a["next_text"].([]any)[0] != "Wed 9 Dec 2026 07:30 CET (06:30 UTC)" {
		t.Fatalf("automation: %d %v", code, a)
	}
	if code, out := call("POST", "/v1/automations", `{"instruction":"x","schedule":"every 5 minutes"}`); code != 422 || !strings.Contains(errMessage(out), "STEWARD_AUTOMATION_MIN_INTERVAL") {
		t.Fatalf("too often: %d %v", code, out)
	}
	id := a["id"].(string)
	if code, out := call("PATCH", "/v1/automations/"+id, `{"status":"paused"}`); code != 200 || out["status"] != "paused" {
		t.Fatalf("pause: %d %v", code, out)
	}
	if code, out := call("PATCH", "/v1/automations/"+id, `{"schedule":"every monday at 9","status":"active"}`); code != 200 || out["cron"] != "0 9 * * 1" || out["status"] != "active" {
		t.Fatalf("edit and resume: %d %v", code, out)
	}
	if code, out := call("GET", "/v1/automations", ""); code != 200 || len(out["automations"].([]any)) != 1 {
		t.Fatalf("list: %d %v", code, out)
	}
	if code, _ := call("DELETE", "/v1/automations/"+id, ""); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := call("GET", "/v1/automations/"+id, ""); code != 404 {
		t.Fatalf("deleted: %d", code)
	}
}

func errMessage(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}
