package links_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/household"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/links"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/sessions"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
	"github.com/stewardhq/steward/internal/undo"
	"github.com/stewardhq/steward/internal/webapp"
)

// clock is a test clock the runner and the links share.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type env struct {
	o     testdb.Opened
	srv   *httptest.Server
	svc   *links.Service
	run   *agent.Runner
	clock *clock
	owner store.Owner
	key   string
	// afterSuspend counts the runner's AfterSuspend calls (the app delivers then).
	afterSuspend *atomic.Int32
}

// setup serves the API with the link pages on a fresh database, the demo model, and an owner
// alice with a default channel; the door is the runtime's (steward_door).
func setup(t *testing.T, channel bool) *env { t.Helper(); return setupBehind(t, channel, "") }

// setupBehind is setup with the link pages behind a proxy that names the client in header
// (STEWARD_TRUSTED_PROXY_HEADER; "" for none).
func setupBehind(t *testing.T, channel bool, header string) *env {
	t.Helper()
	ctx := context.Background()
	o := testdb.Open(t, 30)
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Now()}
	door, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	// The runner's hook is the service's own Issuer, so the tests' changes to it (the public
	// URL once the server listens, no key) reach the links it writes.
	svc := &links.Service{Store: o.Store, Door: door,
		Issuer: links.Issuer{TTL: 30 * time.Minute, Key: []byte("0123456789abcdef0123456789abcdef"), Now: c.now}}
	afterSuspend := new(atomic.Int32)
	run := agent.New(agent.Config{Model: demo.New(), Tools: reg, Store: o.Store, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour, Now: c.now},
		agent.Hooks{Suspended: []func(context.Context, agent.Tx, steward.Turn) (bool, error){svc.Suspended},
			AfterSuspend: func(context.Context, uuid.UUID, uuid.UUID) { afterSuspend.Add(1) }})
	svc.Confirmer = run
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Runner: run, Store: o.Store, Auth: door, Logger: zerolog.Nop(),
		Links: webapp.LinkPages(svc, header),
		Web: webapp.Routes(webapp.Deps{Runner: run, Store: o.Store, Door: door, Logger: zerolog.Nop(),
			Sessions: &sessions.Service{Store: o.Store, Door: door, Now: c.now}, Activity: &activity.Service{Store: o.Store, Now: c.now},
			Control: &control.Service{Store: o.Store, Now: c.now}, Rules: &rules.Service{Store: o.Store, Tools: reg},
			Undo: &undo.Service{Store: o.Store, Now: c.now}, Household: &household.Service{Store: o.Store, Confirmer: run, Now: c.now}})}))
	t.Cleanup(srv.Close)
	svc.PublicURL = srv.URL
	owner, key := o.Owner(t, "alice")
	if channel {
		err := o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
			_, err := tx.Channels.SetWebhook(ctx, "https://hooks.example.com/alice", "")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return &env{o: o, srv: srv, svc: svc, run: run, clock: c, owner: owner, key: key, afterSuspend: afterSuspend}
}

// suspend starts a turn whose create_task waits for approval and returns it with the
// approve and deny links of its notification.
func (e *env) suspend(t *testing.T) (turn uuid.UUID, approve, deny string) {
	t.Helper()
	v, err := e.run.Start(context.Background(), agent.Input{OwnerID: e.owner.ID, Message: "remind me to buy milk"}, nil)
	if err != nil || v.Status != steward.StatusSuspended {
		t.Fatalf("start = %+v, %v; want suspended", v, err)
	}
	n := e.notifications(t)
	if len(n) != 1 {
		t.Fatalf("notifications = %+v, want 1", n)
	}
	msg := e.svc.Expand(n[0].Message) // what the deliverer sends
	if !strings.Contains(msg, `create_task: title="buy milk"`) {
		t.Errorf("notification %q does not list the call with its arguments", msg)
	}
	a := regexp.MustCompile(`Approve: (\S+)`).FindStringSubmatch(msg)
	d := regexp.MustCompile(`Deny: (\S+)`).FindStringSubmatch(msg)
	if a == nil || d == nil || !strings.HasPrefix(a[1], e.srv.URL+"/a/") {
		t.Fatalf("notification %q has no approve and deny links to %s/a/", msg, e.srv.URL)
	}
	return v.TurnID, a[1], d[1]
}

func (e *env) notifications(t *testing.T) []steward.Notification {
	t.Helper()
	var n []steward.Notification
	err := e.o.Store.WithOwner(context.Background(), e.owner.ID, func(tx *store.Tx) error {
		var err error
		n, err = tx.Tasks.ListNotifications(context.Background(), 10)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// state is alice's number of tasks and the turn's status.
func (e *env) state(t *testing.T, turn uuid.UUID) (int, steward.Status) {
	t.Helper()
	var tasks []steward.Task
	var tr steward.Turn
	err := e.o.Store.WithOwner(context.Background(), e.owner.ID, func(tx *store.Tx) error {
		var err error
		if tasks, err = tx.Tasks.ListTasks(context.Background(), ""); err != nil {
			return err
		}
		tr, err = tx.Turns.Get(context.Background(), turn)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(tasks), tr.Status
}

func do(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func want(t *testing.T, what string, status int, body string, wantStatus int, wantText string) {
	t.Helper()
	if status != wantStatus || !strings.Contains(body, wantText) {
		t.Errorf("%s = %d %q; want %d with %q", what, status, body, wantStatus, wantText)
	}
}

func TestApproveLinkWorksOnce(t *testing.T) {
	e := setup(t, true)
	turn, approve, _ := e.suspend(t)

	// A GET (a link scanner's prefetch, or the owner opening it) only shows the page.
	for range 3 {
		status, body := do(t, "GET", approve)
		want(t, "GET approve link", status, body, 200, "create_task")
		want(t, "GET approve link", status, body, 200, `<pre class="args">{&#34;title&#34;: &#34;buy milk&#34;}</pre>`)
		want(t, "GET approve link", status, body, 200, `<form method="post" action="/a/`)
	}
	if n, st := e.state(t, turn); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("after GETs: %d tasks, turn %s; want 0 tasks and the turn still suspended", n, st)
	}

	status, body := do(t, "POST", approve)
	want(t, "POST approve link", status, body, 200, "Done")
	if n, st := e.state(t, turn); n != 1 || st != steward.StatusCompleted {
		t.Fatalf("after POST: %d tasks, turn %s; want 1 task and the turn completed", n, st)
	}

	status, body = do(t, "POST", approve)
	want(t, "second POST", status, body, 410, "already used. Nothing was changed.")
	status, body = do(t, "GET", approve)
	want(t, "GET after use", status, body, 410, "already used")
	if n, _ := e.state(t, turn); n != 1 {
		t.Fatalf("after the second use: %d tasks, want 1", n)
	}
}

func TestDenyLink(t *testing.T) {
	e := setup(t, true)
	turn, approve, deny := e.suspend(t)
	status, body := do(t, "GET", deny)
	want(t, "GET deny link", status, body, 200, `<button type="submit">Deny</button>`)
	status, body = do(t, "POST", deny)
	want(t, "POST deny link", status, body, 200, "Done")
	if n, st := e.state(t, turn); n != 0 || st != steward.StatusCompleted {
		t.Fatalf("after deny: %d tasks, turn %s; want 0 tasks and the turn completed", n, st)
	}
	// The approve link of the same suspension is void now.
	status, body = do(t, "POST", approve)
	want(t, "approve after deny", status, body, 410, "no longer waiting")
	if n, _ := e.state(t, turn); n != 0 {
		t.Fatalf("approve after deny created %d tasks", n)
	}
}

func TestExpiredLinkChangesNothing(t *testing.T) {
	e := setup(t, true)
	turn, approve, _ := e.suspend(t)
	e.clock.add(31 * time.Minute) // past STEWARD_LINK_TTL (30m here), within the turn's hour
	for _, m := range []string{"GET", "POST"} {
		status, body := do(t, m, approve)
		want(t, m+" expired link", status, body, 410, "has expired. Nothing was changed.")
	}
	if n, st := e.state(t, turn); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("after an expired link: %d tasks, turn %s; want 0 and suspended", n, st)
	}
}

func TestForgedTokenChangesNothing(t *testing.T) {
	e := setup(t, true)
	turn, approve, _ := e.suspend(t)
	var b [32]byte
	_, _ = rand.Read(b[:])
	forged := base64.RawURLEncoding.EncodeToString(b[:])
	// One character changed in a real token is as foreign as a random one.
	tok := approve[strings.LastIndex(approve, "/")+1:]
	flipped := "A" + tok[1:]
	if tok[0] == 'A' {
		flipped = "B" + tok[1:]
	}
	for _, tk := range []string{forged, flipped, "short", strings.Repeat("~", 43), strings.Repeat("-", 43)} {
		for _, m := range []string{"GET", "POST"} {
			status, body := do(t, m, e.srv.URL+"/a/"+tk)
			want(t, m+" /a/"+tk, status, body, 404, "not valid. Nothing was changed.")
		}
	}
	if n, st := e.state(t, turn); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("after forged tokens: %d tasks, turn %s; want 0 and suspended", n, st)
	}
}

func TestLinkOfAnotherOwnerIsForeign(t *testing.T) {
	e := setup(t, true)
	_, approve, _ := e.suspend(t)
	// Bob's turn suspends too; alice's link cannot decide it, and his own links are his.
	bob, _ := e.o.Owner(t, "bob")
	v, err := e.run.Start(context.Background(), agent.Input{OwnerID: bob.ID, Message: "remind me to buy milk"}, nil)
	if err != nil || v.Status != steward.StatusSuspended {
		t.Fatalf("bob's turn = %+v, %v", v, err)
	}
	status, body := do(t, "POST", approve)
	want(t, "alice's link", status, body, 200, "Done")
	var bobTurn steward.Turn
	err = e.o.Store.WithOwner(context.Background(), bob.ID, func(tx *store.Tx) error {
		bobTurn, err = tx.Turns.Get(context.Background(), v.TurnID)
		return err
	})
	if err != nil || bobTurn.Status != steward.StatusSuspended {
		t.Fatalf("bob's turn after alice's link: %+v, %v; want still suspended", bobTurn.Status, err)
	}
}

func TestRacedLinkExecutesOnce(t *testing.T) {
	e := setup(t, true)
	turn, approve, _ := e.suspend(t)
	token := approve[strings.LastIndex(approve, "/")+1:]
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = e.svc.Decide(context.Background(), token)
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case steward.ErrorCode(err) != steward.CodeConflict:
			t.Errorf("a raced decide failed with %v; want a conflict", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d of %d raced decides succeeded, want exactly 1", ok, n)
	}
	if tasks, st := e.state(t, turn); tasks != 1 || st != steward.StatusCompleted {
		t.Fatalf("after the race: %d tasks, turn %s; want 1 task, completed", tasks, st)
	}
}

func TestRacedLinkOverHTTPExecutesOnce(t *testing.T) {
	e := setup(t, true)
	turn, approve, _ := e.suspend(t)
	const n = 20
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _ = do(t, "POST", approve)
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case 200:
			ok++
		case 410, 429: // used, or over the per-token limit
		default:
			t.Errorf("a raced POST answered %d", s)
		}
	}
	if tasks, st := e.state(t, turn); ok != 1 || tasks != 1 || st != steward.StatusCompleted {
		t.Fatalf("statuses %v: %d tasks, turn %s; want one 200, 1 task, completed", statuses, tasks, st)
	}
}

func TestDecidedThroughAPIVoidsLink(t *testing.T) {
	e := setup(t, true)
	turn, approve, _ := e.suspend(t)
	var pending steward.PendingCall
	err := e.o.Store.WithOwner(context.Background(), e.owner.ID, func(tx *store.Tx) error {
		tr, err := tx.Turns.Get(context.Background(), turn)
		if err == nil {
			pending = tr.State.Pending[0]
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"decisions":[{"call_id":%q,"approve":true,"args_hash":%q}]}`, pending.CallID, pending.ArgsHash)
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/turns/"+turn.String()+"/confirm", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("confirm through the API = %d", resp.StatusCode)
	}
	for _, m := range []string{"GET", "POST"} {
		status, body := do(t, m, approve)
		want(t, m+" link after the API decided", status, body, 410, "no longer waiting for a decision")
	}
	if n, _ := e.state(t, turn); n != 1 {
		t.Fatalf("%d tasks, want the API's 1 only", n)
	}
}

// TestTokenNotStoredInClear: the stored notification holds no token and no link, only a
// placeholder the deliverer expands with STEWARD_SECRET_KEY as it sends; a link works.
func TestTokenNotStoredInClear(t *testing.T) {
	e := setup(t, true)
	turn, approve, _ := e.suspend(t)
	token := approve[strings.LastIndex(approve, "/")+1:]
	stored := e.notifications(t)[0].Message
	if strings.Contains(stored, "/a/") || strings.Contains(stored, token) {
		t.Fatalf("the stored notification holds the link: %q", stored)
	}
	if !strings.Contains(stored, "[one-tap link ") {
		t.Fatalf("the stored notification %q has no link placeholder", stored)
	}
	if status, body := do(t, "POST", approve); status != 200 {
		t.Fatalf("POST the expanded link: %d %q", status, body)
	}
	if n, st := e.state(t, turn); n != 1 || st != steward.StatusCompleted {
		t.Fatalf("after the link: %d tasks, turn %s", n, st)
	}
	other := &links.Issuer{PublicURL: e.svc.PublicURL, Key: []byte("another key, another deployment")}
	if got := other.Expand(stored); strings.Contains(got, token) {
		t.Fatalf("another key expands to the same token")
	}
}

func TestWithoutKeyNoLinks(t *testing.T) {
	e := setup(t, true)
	e.svc.Key = nil
	if _, err := e.run.Start(context.Background(), agent.Input{OwnerID: e.owner.ID, Message: "remind me to buy milk"}, nil); err != nil {
		t.Fatal(err)
	}
	n := e.notifications(t)
	if len(n) != 1 || strings.Contains(n[0].Message, "one-tap link ") || !strings.Contains(n[0].Message, "STEWARD_SECRET_KEY is not set") {
		t.Fatalf("notifications = %+v; want one without links that says STEWARD_SECRET_KEY is not set", n)
	}
}

func TestWithoutPublicURLNoLinks(t *testing.T) {
	e := setup(t, true)
	e.svc.PublicURL = ""
	if _, err := e.run.Start(context.Background(), agent.Input{OwnerID: e.owner.ID, Message: "remind me to buy milk"}, nil); err != nil {
		t.Fatal(err)
	}
	n := e.notifications(t)
	if len(n) != 1 || strings.Contains(n[0].Message, "/a/") || !strings.Contains(n[0].Message, "STEWARD_PUBLIC_URL is not set") {
		t.Fatalf("notifications = %+v; want one without links that says STEWARD_PUBLIC_URL is not set", n)
	}
}

func TestWithoutChannelNoNotification(t *testing.T) {
	e := setup(t, false)
	if _, err := e.run.Start(context.Background(), agent.Input{OwnerID: e.owner.ID, Message: "remind me to buy milk"}, nil); err != nil {
		t.Fatal(err)
	}
	if n := e.notifications(t); len(n) != 0 {
		t.Fatalf("notifications = %+v; want none without a default channel", n)
	}
}

// TestDeliveryOnlyAfterANotification: a suspension runs the delivery hook (AfterSuspend) when
// it stored a notification, and not when the owner has no channel (nothing to deliver: no
// transaction more).
func TestDeliveryOnlyAfterANotification(t *testing.T) {
	t.Parallel()
	for _, channel := range []bool{false, true} {
		e := setup(t, channel)
		v, err := e.run.Start(context.Background(), agent.Input{OwnerID: e.owner.ID, Message: "remind me to buy milk"}, nil)
		if err != nil || v.Status != steward.StatusSuspended {
			t.Fatalf("start = %+v, %v; want suspended", v, err)
		}
		want := int32(0)
		if channel {
			want = 1
		}
		if n, got := len(e.notifications(t)), e.afterSuspend.Load(); got != want || int32(n) != want {
			t.Errorf("with a channel %v: %d notifications stored, AfterSuspend ran %d times; want %d and %d", channel, n, got, want, want)
		}
	}
}

func TestLinkAttemptsAreLimited(t *testing.T) {
	e := setup(t, true)
	turn, approve, _ := e.suspend(t)
	for i := range 10 {
		if status, body := do(t, "GET", approve); status != 200 {
			t.Fatalf("GET %d = %d %q", i+1, status, body)
		}
	}
	status, body := do(t, "POST", approve)
	want(t, "11th attempt", status, body, 429, "Too many attempts")
	if n, st := e.state(t, turn); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("after a limited attempt: %d tasks, turn %s", n, st)
	}
}

// TestJunkFloodDoesNotBlockAnotherClientsLink (issue 27 §7): behind a proxy every request
// comes from the proxy's address; a flood of junk tokens from one client (as the proxy's
// X-Forwarded-For names it) slows that client down, and another client's valid link still
// shows and decides. The flooder cannot dodge its count by writing addresses of its own in
// front of the proxy's entry.
func TestJunkFloodDoesNotBlockAnotherClientsLink(t *testing.T) {
	e := setupBehind(t, true, "X-Forwarded-For")
	turn, approve, _ := e.suspend(t)
	from := func(method, url, client string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	last := 0
	for i := range 40 {
		// A forged left-most entry per request; the proxy's own entry is the right-most.
		last, _ = from("GET", e.srv.URL+"/a/junk"+fmt.Sprint(i), fmt.Sprintf("10.9.8.%d, 203.0.113.7", i))
	}
	if last != http.StatusTooManyRequests {
		t.Fatalf("the flooder's 40th junk link = %d; want 429 (it is one client, however it fills the header)", last)
	}
	status, body := from("GET", approve, "198.51.100.2")
	want(t, "another client's link page during the flood", status, body, 200, "Approve?")
	status, body = from("POST", approve, "198.51.100.2")
	want(t, "another client's approval during the flood", status, body, 200, "Done.")
	if n, st := e.state(t, turn); n != 1 || st != steward.StatusCompleted {
		t.Fatalf("after the other client's approval: %d tasks, turn %s; want 1, completed", n, st)
	}
}
