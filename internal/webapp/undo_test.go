package webapp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// TestUndoButtonAndIrreversibleCard (no browser): the approval card of notify says it can't
// be undone and create_task's does not; once create_task ran, its story has an Undo form
// whose POST (with the session's CSRF token) deletes the task once and shows it undone; a
// POST without the token, or a second one, changes nothing.
func TestUndoButtonAndIrreversibleCard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, o, runner := serverWith(t, scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("w1", "create_task", `{"title":"buy milk"}`))), scripted.Reply(scripted.Text("Added.")),
		scripted.Reply(scripted.Calls(scripted.Call("n1", "notify", `{"title":"hi","message":"hello"}`)))))
	owner, key := o.Owner(t, "alice")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		resp, err := c.PostForm(srv.URL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	chat := func(msg string) steward.View {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/v1/chat", strings.NewReader(`{"message":"`+msg+`"}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v steward.View
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
			t.Fatalf("chat: %+v %v, want suspended", v, err)
		}
		return v
	}
	tasks := func() int {
		n := 0
		err := o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
			ts, err := tx.Tasks.ListTasks(ctx, "")
			n = len(ts)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	if a := signInAs(t, c, srv.URL, key); a.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", a.status)
	}
	v := chat("remind me to buy milk")
	if !v.Pending[0].Reversible {
		t.Fatalf("create_task pending = %+v, want reversible", v.Pending[0])
	}
	status, page := get("/approvals")
	if status != http.StatusOK {
		t.Fatalf("approvals: %d %s", status, page)
	}
	if strings.Contains(page, "can&#39;t be undone") || strings.Contains(page, "can't be undone") {
		t.Fatalf("create_task's card says it can't be undone: %s", page)
	}
	if _, err := runner.Confirm(ctx, owner.ID, v.TurnID, []steward.Decision{{CallID: "w1", Approve: true, ArgsHash: v.Pending[0].ArgsHash}}, nil); err != nil {
		t.Fatal(err)
	}
	if tasks() != 1 {
		t.Fatal("the task was not created")
	}

	// The story offers Undo, in a form carrying the CSRF token.
	story := "/turns/" + v.TurnID.String()
	_, page = get(story)
	action := story + "/calls/w1/undo"
	form := regexp.MustCompile(`<form method="post" class="inline undo" action="` + regexp.QuoteMeta(action) + `"><input type="hidden" name="csrf" value="([^"]+)"><button type="submit">Undo</button></form>`).FindStringSubmatch(page)
	if form == nil {
		t.Fatalf("story has no Undo form for w1: %s", page)
	}
	if status, _ := post(action, url.Values{}); status != http.StatusForbidden || tasks() != 1 {
		t.Fatalf("undo without the CSRF token: %d, %d tasks; want 403 and the task kept", status, tasks())
	}
	if status, _ := post(action, url.Values{"csrf": {form[1]}}); status != http.StatusSeeOther {
		t.Fatalf("undo: %d, want 303", status)
	}
	if tasks() != 0 {
		t.Fatal("the task is still there after Undo")
	}
	_, page = get(story)
	if strings.Contains(page, `class="inline undo"`) || !strings.Contains(page, "<strong>Undone</strong>") || !strings.Contains(page, "by web") {
		t.Fatalf("story after undo: %s", page)
	}
	if status, page := post(action, url.Values{"csrf": {form[1]}}); status != http.StatusConflict || !strings.Contains(page, "already undone") {
		t.Fatalf("second undo: %d %s, want 409 saying already undone", status, page)
	}

	// notify leaves the database: its card says so before the owner decides.
	n := chat("tell me hello")
	if n.Pending[0].Reversible {
		t.Fatalf("notify pending = %+v, want irreversible", n.Pending[0])
	}
	_, page = get("/approvals")
	if !strings.Contains(page, `<p class="final" role="note">This can&#39;t be undone once it runs.</p>`) {
		t.Fatalf("notify's card does not say it can't be undone: %s", page)
	}
}
