package webapp_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// houseEnv is production's graph (internal/apptest) with the demo model, on a clock the test
// moves forward: alice and
// bob form the household "home", whose policy makes alice's create_task also wait for bob;
// dave is an owner outside it. Each of bob and dave is signed in to the web app.
type houseEnv struct {
	o                   testdb.Opened
	run                 *agent.Runner
	alice               store.Owner
	bob, dave, aliceWeb *facesEnv
	clock               atomic.Int64 // seconds added to the real time
}

func newHouseEnv(t *testing.T) *houseEnv {
	t.Helper()
	ctx := context.Background()
	e := &houseEnv{}
	now := func() time.Time { return time.Now().Add(time.Duration(e.clock.Load()) * time.Second) }
	app := apptest.New(t, apptest.Options{Now: now, MaxConns: 20,
		Env: map[string]string{"STEWARD_MAX_ITERATIONS": "4", "STEWARD_SUSPEND_TTL": "1h"}})
	o, srv := app.DB, app.Server
	e.o, e.run = o, app.Runner
	var aliceKey, bobKey, daveKey string
	e.alice, aliceKey = o.Owner(t, "alice")
	bob, bobKey := o.Owner(t, "bob")
	_, daveKey = o.Owner(t, "dave")
	if _, err := o.Door.CreateHousehold(ctx, "home"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uuid.UUID{e.alice.ID, bob.ID} {
		if err := o.Door.AddHouseholdMember(ctx, "home", id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := o.Door.AddHouseholdPolicy(ctx, store.HouseholdPolicy{Household: "home", Tool: "create_task", Approvers: []uuid.UUID{bob.ID}}); err != nil {
		t.Fatal(err)
	}
	signin := func(key string) *facesEnv {
		jar, _ := cookiejar.New(nil)
		f := &facesEnv{t: t, o: o, srv: srv,
			c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
		if a := signInAs(t, f.c, srv.URL, key); a.status != http.StatusSeeOther {
			t.Fatalf("sign in: %d", a.status)
		}
		return f
	}
	e.bob, e.dave, e.aliceWeb = signin(bobKey), signin(daveKey), signin(aliceKey)
	return e
}

// suspend starts alice's turn whose create_task waits for her and for bob.
func (e *houseEnv) suspend(t *testing.T) steward.View {
	t.Helper()
	v, err := e.run.Start(context.Background(), agent.Input{OwnerID: e.alice.ID, Message: "remind me to buy milk"}, nil)
	if err != nil || v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
		t.Fatalf("start = %+v, %v; want suspended on one call", v, err)
	}
	return v
}

// state is alice's number of tasks and the turn's status.
func (e *houseEnv) state(t *testing.T, v steward.View) (int, steward.Status) {
	t.Helper()
	var tasks []steward.Task
	var tr steward.Turn
	err := e.o.Store.WithOwner(context.Background(), e.alice.ID, func(tx *store.Tx) error {
		var err error
		if tasks, err = tx.Tasks.ListTasks(context.Background(), ""); err != nil {
			return err
		}
		tr, err = tx.Turns.Get(context.Background(), v.TurnID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(tasks), tr.Status
}

var requestAction = regexp.MustCompile(`action="/household/([0-9a-f-]{36})"`)

// request is the one pending request on bob's page, and the page.
func (e *houseEnv) request(t *testing.T) (string, string) {
	t.Helper()
	status, page := e.bob.get("/household")
	m := requestAction.FindAllStringSubmatch(page, -1)
	if status != http.StatusOK || len(m) != 1 {
		t.Fatalf("bob's /household = %d, %d forms; want one pending request:\n%s", status, len(m), page)
	}
	return m[0][1], page
}

func TestHouseholdPageApprove(t *testing.T) {
	e := newHouseEnv(t)
	v := e.suspend(t)
	// Alice approves her own call: the turn still waits for bob.
	p := v.Pending[0]
	held, err := e.run.Confirm(context.Background(), e.alice.ID, v.TurnID, []steward.Decision{{CallID: p.CallID, ArgsHash: p.ArgsHash, Approve: true}}, nil)
	if err != nil || !strings.Contains(held.Awaiting, "bob") {
		t.Fatalf("alice's confirm = %+v, %v; want awaiting bob", held, err)
	}

	id, page := e.request(t)
	for _, want := range []string{`href="/household" aria-current="page"`, "alice", `<code class="tool">create_task</code>`, `title=&#34;buy milk&#34;`, "expires ", ">Approve<", ">Deny<"} {
		if !strings.Contains(page, want) {
			t.Errorf("bob's page lacks %q:\n%s", want, page)
		}
	}
	// The call and nothing else of alice's: no turn, conversation, call id, hash or message.
	for _, leak := range []string{v.TurnID.String(), v.ConversationID.String(), p.CallID, p.ArgsHash, "remind me"} {
		if strings.Contains(page, leak) {
			t.Errorf("bob's page shows %q of alice's turn", leak)
		}
	}
	// Dave, outside the household, sees nothing; his POST to bob's request changes nothing.
	if status, page := e.dave.get("/household"); status != 200 || strings.Contains(page, "create_task") || !strings.Contains(page, "Nothing from your household") {
		t.Errorf("dave's /household = %d:\n%s", status, page)
	}
	if status, page := e.dave.post("/household/"+id, url.Values{"csrf": {e.dave.csrf("/household")}, "decision": {"approve"}}); status != http.StatusNotFound || !strings.Contains(page, "Not found") {
		t.Errorf("dave approves bob's request = %d:\n%s", status, page)
	}
	// Without the CSRF token: 403, nothing decided.
	if status, _ := e.bob.post("/household/"+id, url.Values{"decision": {"approve"}}); status != http.StatusForbidden {
		t.Errorf("POST without CSRF = %d, want 403", status)
	}
	if status, _ := e.bob.post("/household/"+id, url.Values{"csrf": {e.bob.csrf("/household")}, "decision": {"maybe"}}); status != http.StatusUnprocessableEntity {
		t.Errorf("POST decision=maybe = %d, want 422", status)
	}
	if n, st := e.state(t, v); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("before bob's approval: %d tasks, turn %s; want 0 and suspended", n, st)
	}

	csrf := e.bob.csrf("/household")
	status, _ := e.bob.post("/household/"+id, url.Values{"csrf": {csrf}, "decision": {"approve"}, "message": {"fine by me"}})
	if out := e.bob.redirected(); status != http.StatusSeeOther || !strings.Contains(out, "<h2>Approved</h2>") || !strings.Contains(out, "You <strong>approved</strong> this") {
		t.Fatalf("bob approves = %d:\n%s", status, out)
	}
	if n, st := e.state(t, v); n != 1 || st != steward.StatusCompleted {
		t.Fatalf("after bob approved: %d tasks, turn %s; want 1 and completed", n, st)
	}
	// Again: already decided, nothing runs twice.
	status, out := e.bob.post("/household/"+id, url.Values{"csrf": {csrf}, "decision": {"approve"}})
	if status != http.StatusConflict || !strings.Contains(out, "<h2>Already decided</h2>") {
		t.Errorf("bob's second approval = %d:\n%s", status, out)
	}
	if n, _ := e.state(t, v); n != 1 {
		t.Errorf("after the second approval: %d tasks, want 1", n)
	}
}

func TestHouseholdPageDeny(t *testing.T) {
	e := newHouseEnv(t)
	v := e.suspend(t)
	id, _ := e.request(t)
	status, _ := e.bob.post("/household/"+id, url.Values{"csrf": {e.bob.csrf("/household")}, "decision": {"deny"}, "message": {"we have milk"}})
	if out := e.bob.redirected(); status != http.StatusSeeOther || !strings.Contains(out, "<h2>Denied</h2>") || !strings.Contains(out, "You <strong>denied</strong> this") {
		t.Fatalf("bob denies = %d:\n%s", status, out)
	}
	if n, st := e.state(t, v); n != 0 || st != steward.StatusCompleted {
		t.Fatalf("after bob denied: %d tasks, turn %s; want 0 and completed with the refusal", n, st)
	}
	var call steward.CallRecord
	_ = e.o.Store.WithOwner(context.Background(), e.alice.ID, func(tx *store.Tx) error {
		var err error
		call, err = tx.Journal.Call(context.Background(), v.TurnID, v.Pending[0].CallID)
		return err
	})
	if call.Status != steward.CallDenied || !strings.Contains(call.Message, "denied by household member bob") || !strings.Contains(call.Message, "we have milk") {
		t.Errorf("journal = %+v; want denied by household member bob with his message", call)
	}
	// Alice's own household page: nothing addressed to her.
	if _, page := e.aliceWeb.get("/household"); strings.Contains(page, "create_task") {
		t.Errorf("alice's /household shows her own request:\n%s", page)
	}
}

func TestHouseholdPageExpired(t *testing.T) {
	e := newHouseEnv(t)
	v := e.suspend(t)
	id, _ := e.request(t)
	e.clock.Store(int64((2 * time.Hour).Seconds())) // past the suspension's hour
	_, page := e.bob.get("/household")
	if !strings.Contains(page, "<strong>Expired</strong>") || requestAction.MatchString(page) {
		t.Fatalf("bob's page after the expiry:\n%s", page)
	}
	status, out := e.bob.post("/household/"+id, url.Values{"csrf": {e.bob.csrf("/household")}, "decision": {"approve"}})
	if status != http.StatusConflict || !strings.Contains(out, "<h2>Expired</h2>") {
		t.Errorf("bob approves after the expiry = %d:\n%s", status, out)
	}
	if n, _ := e.state(t, v); n != 0 {
		t.Errorf("%d tasks, want 0", n)
	}
}
