package webapp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/sessions"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
	"github.com/stewardhq/steward/internal/webapp"
)

// TestWebChatContinues: on Lambda the request carries the invocation's deadline (here every
// request gets one within the turn's margin); a web chat turn needing more model calls than
// fit ends its stream with a continuing event (not an error), GET /turns/{id}/status says
// continuing while it goes on in the worker, and completed with the answer once it is done.
func TestWebChatContinues(t *testing.T) {
	ctx := context.Background()
	o := testdb.Open(t, 10)
	owner, key := o.Owner(t, "alice")
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("l1", "list_tasks", `{}`))),
		scripted.Reply(scripted.Text("You have no tasks.")),
	)
	var handed []uuid.UUID
	runner := agent.New(agent.Config{Model: model, Tools: reg, Store: o.Store, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour, ContinueMargin: 2 * time.Hour}, agent.Hooks{Continue: func(_ context.Context, _, turnID uuid.UUID) error { handed = append(handed, turnID); return nil }})
	door, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	h := httpapi.New(httpapi.Deps{Runner: runner, Store: o.Store, Auth: door, Logger: zerolog.Nop(),
		Web: webapp.Routes(withServices(webapp.Deps{Runner: runner, Store: o.Store, Door: door, Logger: zerolog.Nop(),
			Sessions: &sessions.Service{Store: o.Store, Now: time.Now}}))})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), time.Hour) // the invocation's deadline
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	e := &facesEnv{t: t, o: o, owner: owner, srv: srv,
		c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if a := signInAs(t, e.c, srv.URL, key); a.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", a.status)
	}

	status, body := e.post("/chat", url.Values{"message": {"what are my tasks?"}, "csrf": {e.csrf("/")}})
	events := regexp.MustCompile(`(?m)^data: (.*)$`).FindAllStringSubmatch(body, -1)
	if status != http.StatusOK || len(events) == 0 {
		t.Fatalf("chat: %d %s", status, body)
	}
	var last struct {
		Type string        `json:"type"`
		Turn *steward.View `json:"turn"`
	}
	if err := json.Unmarshal([]byte(events[len(events)-1][1]), &last); err != nil {
		t.Fatal(err)
	}
	if last.Type != "continuing" || last.Turn == nil || len(handed) != 1 || last.Turn.TurnID != handed[0] {
		t.Fatalf("last event %s (%+v), handed %v; want continuing with the handed-on turn", last.Type, last.Turn, handed)
	}
	poll := func() (int, string) { return e.get("/turns/" + handed[0].String() + "/status") }
	if status, body := poll(); status != http.StatusOK || !strings.Contains(body, `"type":"continuing"`) {
		t.Fatalf("status while continuing: %d %s", status, body)
	}
	if v, err := runner.ContinueTurn(ctx, owner.ID, handed[0]); err != nil || v.Status != steward.StatusCompleted {
		t.Fatalf("continue: %+v, %v", v, err)
	}
	if status, body := poll(); status != http.StatusOK || !strings.Contains(body, `"type":"completed"`) || !strings.Contains(body, "You have no tasks.") {
		t.Fatalf("status once done: %d %s", status, body)
	}
	if status, _ := e.get("/turns/" + uuid.NewString() + "/status"); status != http.StatusNotFound {
		t.Fatalf("status of an unknown turn: %d, want 404", status)
	}
	if status, _ := e.get("/turns/not-a-uuid/status"); status != http.StatusNotFound {
		t.Fatalf("status of a malformed id: %d, want 404", status)
	}
}
