package household_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/household"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/links"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/sweep"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

type member struct {
	owner store.Owner
	key   string
}

type env struct {
	o                 testdb.Opened
	srv               *httptest.Server
	run               *agent.Runner
	clock             *clock
	alice, bob, carol member
	dave              member // an owner outside the household
}

// setup serves the API on a fresh database with the demo model; alice, bob and carol form
// the household "home" and its policy makes alice's create_task also wait for approvers.
func setup(t *testing.T, approvers ...string) *env {
	t.Helper()
	ctx := context.Background()
	o := testdb.Open(t, 30)
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	// As the app wires them: the household's hooks and the links' (which write a
	// notification only for an owner with a channel) given to the runner, and the service
	// confirming through it.
	c := &clock{}
	hooks := household.Hooks{Tools: reg, Now: c.Now}
	issuer := links.Issuer{PublicURL: "https://steward.example", Key: []byte("0123456789abcdef0123456789abcdef"), Now: c.Now}
	// Auto mode is allowed (an owner still has to choose it).
	run := agent.New(agent.Config{Model: demo.New(), Tools: reg, Store: o.Store, Gate: &safety.Gate{AllowAuto: true}, MaxIterations: 4, SuspendTTL: time.Hour, Now: c.Now},
		agent.Hooks{Suspended: []func(context.Context, agent.Tx, steward.Turn) (bool, error){hooks.Suspended, issuer.Suspended}, Hold: hooks.Hold})
	svc := &household.Service{Store: o.Store, Confirmer: run, Now: c.Now}
	door, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Runner: run, Store: o.Store, Auth: door, Logger: zerolog.Nop(), Household: svc}))
	t.Cleanup(srv.Close)
	e := &env{o: o, srv: srv, run: run, clock: c}
	for _, m := range []struct {
		p    *member
		name string
	}{{&e.alice, "alice"}, {&e.bob, "bob"}, {&e.carol, "carol"}, {&e.dave, "dave"}} {
		m.p.owner, m.p.key = o.Owner(t, m.name)
	}
	if _, err := o.Door.CreateHousehold(ctx, "home"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []member{e.alice, e.bob, e.carol} {
		if err := o.Door.AddHouseholdMember(ctx, "home", m.owner.ID); err != nil {
			t.Fatal(err)
		}
	}
	var ids []uuid.UUID
	for _, a := range approvers {
		ids = append(ids, map[string]uuid.UUID{"bob": e.bob.owner.ID, "carol": e.carol.owner.ID}[a])
	}
	if _, err := o.Door.AddHouseholdPolicy(ctx, store.HouseholdPolicy{Household: "home", Tool: "create_task", Approvers: ids}); err != nil {
		t.Fatal(err)
	}
	return e
}

// suspend starts alice's turn whose create_task waits for approval.
func (e *env) suspend(t *testing.T) steward.View {
	t.Helper()
	v, err := e.run.Start(context.Background(), agent.Input{OwnerID: e.alice.owner.ID, Message: "remind me to buy milk"}, nil)
	if err != nil || v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
		t.Fatalf("start = %+v, %v; want suspended on one call", v, err)
	}
	return v
}

// confirm is alice's own decision on her turn.
func (e *env) confirm(t *testing.T, v steward.View, approve bool) (steward.View, error) {
	t.Helper()
	p := v.Pending[0]
	return e.run.Confirm(context.Background(), e.alice.owner.ID, v.TurnID,
		[]steward.Decision{{CallID: p.CallID, ArgsHash: p.ArgsHash, Approve: approve}}, nil)
}

// state is alice's number of tasks and the turn's status.
func (e *env) state(t *testing.T, turn uuid.UUID) (int, steward.Status) {
	t.Helper()
	var tasks []steward.Task
	var tr steward.Turn
	err := e.o.Store.WithOwner(context.Background(), e.alice.owner.ID, func(tx *store.Tx) error {
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

func (e *env) events(t *testing.T, turn uuid.UUID, kind string) []string {
	t.Helper()
	var out []string
	err := e.o.Store.WithOwner(context.Background(), e.alice.owner.ID, func(tx *store.Tx) error {
		evs, err := tx.Journal.TurnEvents(context.Background(), turn)
		for _, ev := range evs {
			if ev.Kind == kind {
				out = append(out, string(ev.Data))
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) do(t *testing.T, m member, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+m.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type inboxItem struct {
	ID        uuid.UUID `json:"id"`
	Requester string    `json:"requester"`
	Tool      string    `json:"tool"`
	Summary   string    `json:"summary"`
	Status    string    `json:"status"`
}

func (e *env) inbox(t *testing.T, m member) ([]inboxItem, string) {
	t.Helper()
	status, body := e.do(t, m, "GET", "/v1/household/approvals", "")
	if status != 200 {
		t.Fatalf("GET /v1/household/approvals = %d %s", status, body)
	}
	var out struct {
		Approvals []inboxItem `json:"approvals"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	return out.Approvals, body
}

func (e *env) decide(t *testing.T, m member, id uuid.UUID, approve bool) (int, string) {
	t.Helper()
	return e.do(t, m, "POST", "/v1/household/approvals/"+id.String(), fmt.Sprintf(`{"approve": %v, "message": "from %s"}`, approve, m.owner.Name))
}

func TestHouseholdCallWaitsForBothMembers(t *testing.T) {
	e := setup(t, "bob")
	v := e.suspend(t)

	// Bob sees the call, and nothing else of alice's; carol, not named, sees nothing.
	items, body := e.inbox(t, e.bob)
	if len(items) != 1 || items[0].Tool != "create_task" || items[0].Requester != "alice" ||
		items[0].Summary != `title="buy milk"` || items[0].Status != "pending" {
		t.Fatalf("bob's inbox = %s; want alice's create_task pending", body)
	}
	for _, leak := range []string{v.TurnID.String(), v.ConversationID.String(), v.Pending[0].CallID, v.Pending[0].ArgsHash, "remind me"} {
		if strings.Contains(body, leak) {
			t.Errorf("bob's inbox %s shows %q of alice's turn", body, leak)
		}
	}
	if items, body := e.inbox(t, e.carol); len(items) != 0 {
		t.Errorf("carol's inbox = %s; want empty", body)
	}

	// Alice approves: her decision is recorded, the turn still waits for bob.
	held, err := e.confirm(t, v, true)
	if err != nil || held.Status != steward.StatusSuspended || !strings.Contains(held.Awaiting, "bob") {
		t.Fatalf("alice's confirm = %+v, %v; want still suspended, awaiting bob", held, err)
	}
	if n, st := e.state(t, v.TurnID); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("after alice approved: %d tasks, turn %s; want 0 and suspended", n, st)
	}
	// Her second confirm finds her vote already cast and still waits.
	if again, err := e.confirm(t, v, true); err != nil || again.Status != steward.StatusSuspended {
		t.Fatalf("alice's second confirm = %+v, %v; want still suspended", again, err)
	}

	status, body := e.decide(t, e.bob, items[0].ID, true)
	if status != 200 || !strings.Contains(body, `"status":"approved"`) {
		t.Fatalf("bob approves = %d %s", status, body)
	}
	if n, st := e.state(t, v.TurnID); n != 1 || st != steward.StatusCompleted {
		t.Fatalf("after bob approved: %d tasks, turn %s; want 1 and completed", n, st)
	}
	// The story records who decided what.
	story := e.events(t, v.TurnID, "household_approval")
	if len(story) != 1 || !strings.Contains(story[0], `"by": "bob"`) || !strings.Contains(story[0], `"by": "owner"`) ||
		!strings.Contains(story[0], `"message": "from bob"`) {
		t.Errorf("household_approval events = %v; want one naming the owner's and bob's votes", story)
	}
	// A second vote changes nothing.
	if status, body := e.decide(t, e.bob, items[0].ID, true); status != 409 || !strings.Contains(body, "already decided") {
		t.Errorf("bob's second vote = %d %s; want 409 already decided", status, body)
	}
	if n, _ := e.state(t, v.TurnID); n != 1 {
		t.Errorf("after the second vote: %d tasks, want 1", n)
	}
}

func TestMemberApprovesFirstThenOwner(t *testing.T) {
	e := setup(t, "bob")
	v := e.suspend(t)
	items, _ := e.inbox(t, e.bob)
	if status, body := e.decide(t, e.bob, items[0].ID, true); status != 200 {
		t.Fatalf("bob approves = %d %s", status, body)
	}
	if n, st := e.state(t, v.TurnID); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("after bob alone: %d tasks, turn %s; want 0 and suspended (alice has not decided)", n, st)
	}
	done, err := e.confirm(t, v, true)
	if err != nil || done.Status != steward.StatusCompleted || done.Awaiting != "" {
		t.Fatalf("alice's confirm = %+v, %v; want completed", done, err)
	}
	if n, _ := e.state(t, v.TurnID); n != 1 {
		t.Fatalf("%d tasks, want 1", n)
	}
}

func TestHouseholdDenyByEitherEndsIt(t *testing.T) {
	t.Run("member denies", func(t *testing.T) {
		e := setup(t, "bob")
		v := e.suspend(t)
		if _, err := e.confirm(t, v, true); err != nil {
			t.Fatal(err)
		}
		items, _ := e.inbox(t, e.bob)
		if status, body := e.decide(t, e.bob, items[0].ID, false); status != 200 || !strings.Contains(body, `"status":"denied"`) {
			t.Fatalf("bob denies = %d %s", status, body)
		}
		if n, st := e.state(t, v.TurnID); n != 0 || st != steward.StatusCompleted {
			t.Fatalf("after bob denied: %d tasks, turn %s; want 0 and completed with the refusal", n, st)
		}
		var call steward.CallRecord
		_ = e.o.Store.WithOwner(context.Background(), e.alice.owner.ID, func(tx *store.Tx) error {
			var err error
			call, err = tx.Journal.Call(context.Background(), v.TurnID, v.Pending[0].CallID)
			return err
		})
		if call.Status != steward.CallDenied || !strings.Contains(call.Message, "denied by household member bob") {
			t.Errorf("journal = %+v; want denied by household member bob", call)
		}
		if _, err := e.confirm(t, v, true); steward.ErrorCode(err) != steward.CodeConflict {
			t.Errorf("alice's confirm after the deny = %v; want a conflict", err)
		}
	})
	t.Run("member denies before the owner decides", func(t *testing.T) {
		e := setup(t, "bob")
		v := e.suspend(t)
		items, _ := e.inbox(t, e.bob)
		if status, body := e.decide(t, e.bob, items[0].ID, false); status != 200 {
			t.Fatalf("bob denies = %d %s", status, body)
		}
		if n, st := e.state(t, v.TurnID); n != 0 || st != steward.StatusCompleted {
			t.Fatalf("after bob denied: %d tasks, turn %s; want 0 and completed", n, st)
		}
	})
	t.Run("owner denies", func(t *testing.T) {
		e := setup(t, "bob")
		v := e.suspend(t)
		done, err := e.confirm(t, v, false)
		if err != nil || done.Status != steward.StatusCompleted {
			t.Fatalf("alice denies = %+v, %v; want completed", done, err)
		}
		if n, _ := e.state(t, v.TurnID); n != 0 {
			t.Fatalf("%d tasks, want 0", n)
		}
		items, body := e.inbox(t, e.bob)
		if len(items) != 1 || items[0].Status != "void" {
			t.Fatalf("bob's inbox = %s; want the request void", body)
		}
		if status, body := e.decide(t, e.bob, items[0].ID, true); status != 409 {
			t.Errorf("bob approves a void request = %d %s; want 409", status, body)
		}
		if n, _ := e.state(t, v.TurnID); n != 0 {
			t.Fatalf("%d tasks after bob's late approval, want 0", n)
		}
	})
}

func TestMemberSeesOnlyTheCall(t *testing.T) {
	e := setup(t, "bob")
	v := e.suspend(t)
	items, _ := e.inbox(t, e.bob)
	// Bob cannot read alice's turn, its events or its conversation through the API.
	for _, path := range []string{"/v1/turns/" + v.TurnID.String(), "/v1/turns/" + v.TurnID.String() + "/events",
		"/v1/conversations/" + v.ConversationID.String()} {
		if status, body := e.do(t, e.bob, "GET", path, ""); status != 404 {
			t.Errorf("bob GET %s = %d %s; want 404", path, status, body)
		}
	}
	// Nor decide alice's turn directly.
	p := v.Pending[0]
	status, body := e.do(t, e.bob, "POST", "/v1/turns/"+v.TurnID.String()+"/confirm",
		fmt.Sprintf(`{"decisions":[{"call_id":%q,"args_hash":%q,"approve":true}]}`, p.CallID, p.ArgsHash))
	if status != 404 {
		t.Errorf("bob confirms alice's turn = %d %s; want 404", status, body)
	}
	// A request not addressed to them: carol (a member, not named) and dave (no member).
	for _, m := range []member{e.carol, e.dave, e.alice} {
		if status, body := e.decide(t, m, items[0].ID, true); status != 404 {
			t.Errorf("%s decides bob's request = %d %s; want 404", m.owner.Name, status, body)
		}
	}
	if items, body := e.inbox(t, e.alice); len(items) != 0 {
		t.Errorf("alice's inbox = %s; want empty (her own vote is not a request to her)", body)
	}
	if n, st := e.state(t, v.TurnID); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("%d tasks, turn %s; want 0 and suspended", n, st)
	}
	// Bad input: 4xx, nothing changes.
	for _, tc := range []struct{ body, id string }{{`{}`, items[0].ID.String()}, {`{"approve": "yes"}`, items[0].ID.String()},
		{`{"approve": true}`, "not-a-uuid"}, {`{"approve": true}`, uuid.NewString()}} {
		if status, body := e.do(t, e.bob, "POST", "/v1/household/approvals/"+tc.id, tc.body); status < 400 || status >= 500 {
			t.Errorf("POST %s %s = %d %s; want 4xx", tc.id, tc.body, status, body)
		}
	}
	if items, _ := e.inbox(t, e.bob); items[0].Status != "pending" {
		t.Errorf("after bad input the request is %s, want pending", items[0].Status)
	}
}

func TestConcurrentApprovalsResumeOnce(t *testing.T) {
	e := setup(t, "bob", "carol")
	for round := range 4 {
		v := e.suspend(t)
		if held, err := e.confirm(t, v, true); err != nil || held.Status != steward.StatusSuspended {
			t.Fatalf("round %d: alice's confirm = %+v, %v; want suspended", round, held, err)
		}
		var ids []uuid.UUID
		var who []member
		for _, m := range []member{e.bob, e.carol} {
			items, _ := e.inbox(t, m)
			for _, it := range items {
				if it.Status == "pending" {
					ids, who = append(ids, it.ID), append(who, m)
				}
			}
		}
		if len(ids) != 2 {
			t.Fatalf("round %d: %d pending requests, want 2", round, len(ids))
		}
		var wg sync.WaitGroup
		codes := make([]int, 2)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i], _ = e.decide(t, who[i], ids[i], true)
			}()
		}
		wg.Wait()
		if codes[0] != 200 || codes[1] != 200 {
			t.Fatalf("round %d: votes = %v; want both 200", round, codes)
		}
		if n, st := e.state(t, v.TurnID); n != round+1 || st != steward.StatusCompleted {
			t.Fatalf("round %d: %d tasks, turn %s; want %d and completed (one execution)", round, n, st, round+1)
		}
		if story := e.events(t, v.TurnID, "turn_resumed"); len(story) != 1 {
			t.Fatalf("round %d: turn_resumed %d times, want once", round, len(story))
		}
	}
}

func TestPolicyMatchesAmounts(t *testing.T) {
	e := setup(t, "bob")
	ctx := context.Background()
	min := int64(10000)
	if _, err := e.o.Door.AddHouseholdPolicy(ctx, store.HouseholdPolicy{Household: "home", Tool: "pay", MinAmountMinor: &min,
		Currency: "EUR", Approvers: []uuid.UUID{e.carol.owner.ID}}); err != nil {
		t.Fatal(err)
	}
	v := e.suspend(t)
	amount := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		call steward.HouseholdCall
		want int
	}{
		{steward.HouseholdCall{CallID: "small", Tool: "pay", AmountMinor: amount(9999), Currency: "EUR"}, 0},
		{steward.HouseholdCall{CallID: "big", Tool: "pay", AmountMinor: amount(10000), Currency: "EUR"}, 1},
		{steward.HouseholdCall{CallID: "usd", Tool: "pay", AmountMinor: amount(50000), Currency: "USD"}, 0},
		{steward.HouseholdCall{CallID: "unreadable", Tool: "pay"}, 1}, // fails closed
		{steward.HouseholdCall{CallID: "other", Tool: "forget"}, 0},
	} {
		var n int
		err := e.o.Store.WithOwner(ctx, e.alice.owner.ID, func(tx *store.Tx) error {
			var err error
			n, err = tx.Household.Request(ctx, v.TurnID, []steward.HouseholdCall{tc.call}, time.Now().Add(time.Hour))
			return err
		})
		if err != nil || n != tc.want {
			t.Errorf("request %s = %d, %v; want %d member votes", tc.call.CallID, n, err, tc.want)
		}
	}
	// Dave, outside the household, files nothing: he is in no household.
	dv, err := e.run.Start(ctx, agent.Input{OwnerID: e.dave.owner.ID, Message: "remind me to buy milk"}, nil)
	if err != nil || dv.Status != steward.StatusSuspended {
		t.Fatalf("dave's turn = %+v, %v", dv, err)
	}
	done, err := e.run.Confirm(ctx, e.dave.owner.ID, dv.TurnID, []steward.Decision{{CallID: dv.Pending[0].CallID, ArgsHash: dv.Pending[0].ArgsHash, Approve: true}}, nil)
	if err != nil || done.Status != steward.StatusCompleted {
		t.Errorf("dave's confirm = %+v, %v; want completed at once", done, err)
	}
}

// The owner's approve link (issue 17 §1) records her vote like her confirm: it is spent, the
// page says whom the turn waits for, and bob's approval then runs the call once.
func TestOwnerLinkRecordsVote(t *testing.T) {
	e := setup(t, "bob")
	ctx := context.Background()
	door, err := store.OpenDoor(ctx, e.o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	ls := &links.Service{Issuer: links.Issuer{PublicURL: "https://steward.example", Key: []byte("0123456789abcdef0123456789abcdef")},
		Store: e.o.Store, Door: door, Confirmer: e.run}
	err = e.o.Store.WithOwner(ctx, e.alice.owner.ID, func(tx *store.Tx) error {
		_, err := tx.Channels.SetWebhook(ctx, "https://hooks.example.com/alice", "")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	v := e.suspend(t)
	var msg string
	err = e.o.Store.WithOwner(ctx, e.alice.owner.ID, func(tx *store.Tx) error {
		n, err := tx.Tasks.ListNotifications(ctx, 10)
		if len(n) == 1 {
			msg = ls.Expand(n[0].Message) // as the deliverer sends it
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Approve: https://steward.example/a/(\S+)`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("notification %q has no approve link", msg)
	}
	held, err := ls.Decide(ctx, m[1])
	if err != nil || held.Status != steward.StatusSuspended || !strings.Contains(held.Awaiting, "bob") {
		t.Fatalf("alice's link = %+v, %v; want suspended, awaiting bob", held, err)
	}
	if _, err := ls.Decide(ctx, m[1]); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("second use of the link = %v; want already used", err)
	}
	items, _ := e.inbox(t, e.bob)
	if status, body := e.decide(t, e.bob, items[0].ID, true); status != 200 {
		t.Fatalf("bob approves = %d %s", status, body)
	}
	if n, st := e.state(t, v.TurnID); n != 1 || st != steward.StatusCompleted {
		t.Fatalf("after bob approved: %d tasks, turn %s; want 1 and completed", n, st)
	}
}

// TestExpiredRequestIsMarked: when alice's suspension expires, bob's inbox shows her request
// as expired (before and after the sweep marks it) and his approval is refused clearly.
func TestExpiredRequestIsMarked(t *testing.T) {
	e := setup(t, "bob")
	e.clock.Set(time.Now())
	v := e.suspend(t)
	items, body := e.inbox(t, e.bob)
	if len(items) != 1 || items[0].Status != "pending" {
		t.Fatalf("bob's inbox = %s; want alice's request pending", body)
	}
	e.clock.Set(e.clock.Now().Add(2 * time.Hour)) // past SuspendTTL

	// Before the sweep: shown expired, and bob's approval refused.
	if items, body = e.inbox(t, e.bob); len(items) != 1 || items[0].Status != "expired" {
		t.Errorf("bob's inbox after the expiry = %s; want expired", body)
	}
	if status, body := e.decide(t, e.bob, items[0].ID, true); status != 409 || !strings.Contains(body, "has expired") {
		t.Errorf("bob approves an expired request = %d %s; want 409 has expired", status, body)
	}

	sw := &sweep.Sweeper{Store: e.o.Store, Owners: e.o.Door, Now: e.clock.Now}
	swept, err := sw.Sweep(context.Background())
	if err != nil || swept.Expired != 1 || swept.HouseholdExpired != 2 {
		t.Fatalf("sweep = %+v, %v; want alice's turn and its 2 votes (hers, bob's) expired", swept, err)
	}
	// The rows themselves are expired now, whatever the reader's clock.
	var stored []steward.HouseholdApproval
	err = e.o.Store.WithOwner(context.Background(), e.bob.owner.ID, func(tx *store.Tx) error {
		var err error
		stored, err = tx.Household.Inbox(context.Background(), 10)
		return err
	})
	if err != nil || len(stored) != 1 || stored[0].Status != steward.VoteExpired {
		t.Fatalf("bob's stored inbox = %+v, %v; want the request expired", stored, err)
	}
	if status, body := e.decide(t, e.bob, items[0].ID, true); status != 409 || !strings.Contains(body, "has expired") {
		t.Errorf("bob approves after the sweep = %d %s; want 409 has expired", status, body)
	}
	if n, st := e.state(t, v.TurnID); n != 0 || st != steward.StatusExpired {
		t.Errorf("alice's turn: %d tasks, %s; want 0 tasks and expired", n, st)
	}
}

// clock is the wall clock until a test sets it.
type clock struct {
	mu  sync.Mutex
	set *time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set != nil {
		return *c.set
	}
	return time.Now()
}

// Set stops the clock at t.
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set = &t
}

// TestPolicyBeatsOwnRuleAndAutoMode: a household policy is decided before the member's own
// standing rules and gate mode, like the money caps: with alice's rule allowing create_task,
// or alice in auto mode, her call still waits, bob gets the vote, nothing runs, and the call
// offers no "always" (her confirm would refuse one).
func TestPolicyBeatsOwnRuleAndAutoMode(t *testing.T) {
	for _, how := range []string{"rule", "auto"} {
		t.Run(how, func(t *testing.T) {
			e := setup(t, "bob")
			ctx := context.Background()
			err := e.o.Store.WithOwner(ctx, e.alice.owner.ID, func(tx *store.Tx) error {
				if how == "auto" {
					return tx.Safety.SetMode(ctx, "auto")
				}
				_, err := tx.Rules.Create(ctx, steward.Rule{Tool: "create_task", Match: steward.MatchPattern, Effect: "allow", Source: "api"})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			v, err := e.run.Start(ctx, agent.Input{OwnerID: e.alice.owner.ID, Message: "remind me to buy milk"}, nil)
			if err != nil || v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
				t.Fatalf("start = %+v, %v; want the call waiting for the household", v, err)
			}
			if v.Pending[0].AlwaysOffered {
				t.Errorf("pending %+v offers always; the household's call is asked every time", v.Pending[0])
			}
			if n, _ := e.state(t, v.TurnID); n != 0 {
				t.Errorf("%d tasks; want none before the household decided", n)
			}
			if items, body := e.inbox(t, e.bob); len(items) != 1 || items[0].Status != "pending" {
				t.Fatalf("bob's inbox = %s; want alice's call pending", body)
			}
		})
	}
}

// TestNoAlwaysUnderPolicy: a call under a household policy says always_offered false, and a
// confirm asking for always is refused in words, nothing decided.
func TestNoAlwaysUnderPolicy(t *testing.T) {
	e := setup(t, "bob")
	v := e.suspend(t)
	if v.Pending[0].AlwaysOffered {
		t.Errorf("pending %+v: always_offered true, but a confirm with always is refused", v.Pending[0])
	}
	p := v.Pending[0]
	_, err := e.run.Confirm(context.Background(), e.alice.owner.ID, v.TurnID,
		[]steward.Decision{{CallID: p.CallID, ArgsHash: p.ArgsHash, Approve: true, Always: steward.AlwaysTool}}, nil)
	if steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), "always") {
		t.Fatalf("confirm with always = %v; want it refused in words", err)
	}
	if n, st := e.state(t, v.TurnID); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("after the refused confirm: %d tasks, turn %s; want 0 and suspended", n, st)
	}
}
