package webapp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// TestWebCancelTurn (no browser): POST /turns/{id}/cancel needs the session's CSRF token; with
// it, a suspended turn is cancelled (JSON for the chat page's Stop, a redirect for a form),
// its write never runs, the web confirm of it says so in words (409), and a second owner's
// cancel of it is 404.
func TestWebCancelTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, o, runner := serverWith(t, scripted.New(scripted.Reply(scripted.Calls(scripted.Call("w1", "create_task", `{"title":"buy milk"}`))), scripted.Reply(scripted.Text("Added."))))
	owner, key := o.Owner(t, "alice")
	_, bobKey := o.Owner(t, "bob")
	session := func(key string) (*http.Client, string) {
		c := newClient()
		if a := signInAs(t, c, srv.URL, key); a.status != http.StatusSeeOther {
			t.Fatalf("sign in: %d", a.status)
		}
		resp, err := c.Get(srv.URL + "/approvals")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(b))
		if m == nil {
			t.Fatalf("no CSRF token on the approvals page: %s", b)
		}
		return c, m[1]
	}
	do := func(c *http.Client, path string, form url.Values, accept string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	v, err := runner.Start(ctx, agent.Input{OwnerID: owner.ID, Message: "add milk"}, nil)
	if err != nil || v.Status != steward.StatusSuspended {
		t.Fatalf("start: %+v %v", v, err)
	}
	path := "/turns/" + v.TurnID.String() + "/cancel"
	alice, token := session(key)
	if status, _, _ := do(alice, path, url.Values{}, "application/json"); status != http.StatusForbidden {
		t.Errorf("cancel without the CSRF token: %d, want 403", status)
	}
	bob, bobToken := session(bobKey)
	if status, body, _ := do(bob, path, url.Values{"csrf": {bobToken}}, "application/json"); status != http.StatusNotFound || !strings.Contains(body, "turn not found") {
		t.Errorf("bob cancels alice's turn: %d %s, want 404 in words", status, body)
	}
	status, body, _ := do(alice, path, url.Values{"csrf": {token}}, "application/json")
	var got steward.View
	if status != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || got.Status != steward.StatusCancelled {
		t.Fatalf("cancel: %d %s, want 200 with the cancelled turn", status, body)
	}
	if status, _, h := do(alice, path, url.Values{"csrf": {token}}, ""); status != http.StatusSeeOther || h.Get("Location") != "/turns/"+v.TurnID.String() {
		t.Errorf("form cancel again: %d to %q, want a redirect to the story", status, h.Get("Location"))
	}
	// The chat page's confirm (JSON, X-CSRF-Token) answers in its stream, in words.
	req, _ := http.NewRequest("POST", srv.URL+"/turns/"+v.TurnID.String()+"/confirm",
		strings.NewReader(`{"decisions":[{"call_id":"w1","approve":true,"args_hash":"`+v.Pending[0].ArgsHash+`"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", token)
	resp, err := alice.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "was cancelled") {
		t.Errorf("web confirm of the cancelled turn: %d %s, want it to say the turn was cancelled", resp.StatusCode, b)
	}
	var n int
	if err := o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		ts, err := tx.Tasks.ListTasks(ctx, "")
		n = len(ts)
		return err
	}); err != nil || n != 0 {
		t.Errorf("%d tasks (%v) after the cancel, want 0", n, err)
	}
}
