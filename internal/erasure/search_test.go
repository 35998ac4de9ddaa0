package erasure_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/erasure"
)

// TestRenameSearchAndForgetARange: a renamed conversation is found by its new title, another
// by its words (with the words around them), neither by another owner, whose rename and
// facts read are 404; a time range is counted first and forgotten only when confirmed.
func TestRenameSearchAndForgetARange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, bobKey := e.DB.Owner(t, "bob")
	first := e.start(t, uuid.Nil, "what time is it")
	second := e.start(t, uuid.Nil, "what is the date, "+canary+"?")

	path := "/v1/conversations/" + first.ConversationID.String()
	if status, body := e.call(t, bobKey, http.MethodPatch, path, map[string]string{"title": "mine now"}); status != http.StatusNotFound {
		t.Errorf("bob renames alice's conversation: %d %s", status, body)
	}
	if status, body := e.call(t, bobKey, http.MethodGet, path+"/facts", nil); status != http.StatusNotFound {
		t.Errorf("bob reads alice's conversation's facts: %d %s", status, body)
	}
	if status, body := e.call(t, e.key, http.MethodPatch, path, map[string]string{"title": "  "}); status != http.StatusUnprocessableEntity {
		t.Errorf("an empty title: %d %s, want 422", status, body)
	}
	if status, body := e.call(t, e.key, http.MethodPatch, path, map[string]string{"title": "Clock questions"}); status != http.StatusOK || !strings.Contains(string(body), `"title":"Clock questions"`) {
		t.Fatalf("rename: %d %s", status, body)
	}
	search := func(key, q string) (int, []erasure.Day) {
		status, body := e.call(t, key, http.MethodGet, "/v1/conversations/search?q="+q, nil)
		var out struct{ Days []erasure.Day }
		_ = json.Unmarshal(body, &out)
		return status, out.Days
	}
	if status, days := search(e.key, "clock"); status != http.StatusOK || len(days) != 1 || len(days[0].Conversations) != 1 ||
		days[0].Conversations[0].ID != first.ConversationID || days[0].Date != time.Now().UTC().Format(time.DateOnly) {
		t.Errorf("search by title: %d %+v", status, days)
	}
	if _, days := search(e.key, canary); len(days) != 1 || days[0].Conversations[0].ID != second.ConversationID ||
		!strings.Contains(days[0].Conversations[0].Snippet, canary) {
		t.Errorf("search by words: %+v", days)
	}
	if _, days := search(bobKey, canary); len(days) != 0 {
		t.Errorf("bob's search finds alice's conversation: %+v", days)
	}
	if status, _ := search(e.key, "%25"); status != http.StatusOK {
		t.Errorf("a search for %%: %d", status)
	}

	from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	status, body := e.call(t, e.key, http.MethodPost, "/v1/forget", map[string]any{"from": from, "to": to})
	var n erasure.Forgotten
	if err := json.Unmarshal(body, &n); err != nil || status != http.StatusOK || n.Done || n.Conversations != 2 {
		t.Fatalf("count a range: %d %s", status, body)
	}
	if status, body := e.call(t, e.key, http.MethodGet, "/v1/conversations", nil); status != http.StatusOK || !strings.Contains(string(body), second.ConversationID.String()) {
		t.Fatalf("counting deleted something: %d %s", status, body)
	}
	status, body = e.call(t, e.key, http.MethodPost, "/v1/forget", map[string]any{"from": from, "to": to, "confirm": true})
	if err := json.Unmarshal(body, &n); err != nil || status != http.StatusOK || !n.Done || n.Conversations != 2 {
		t.Fatalf("forget a range: %d %s", status, body)
	}
	if status, body := e.call(t, e.key, http.MethodGet, "/v1/conversations", nil); status != http.StatusOK || strings.Contains(string(body), "conversation_id") || strings.Contains(string(body), second.ConversationID.String()) {
		t.Errorf("after forgetting the range: %d %s", status, body)
	}
	if status, body := e.call(t, e.key, http.MethodPost, "/v1/forget", map[string]any{"from": to, "to": from}); status != http.StatusUnprocessableEntity {
		t.Errorf("a range backwards: %d %s, want 422", status, body)
	}
}
