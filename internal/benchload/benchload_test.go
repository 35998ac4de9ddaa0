package benchload

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/benchcycle"
	"github.com/stewardhq/steward/internal/llm/gemini/geminifake"
)

// TestLoadHoldsAndInvariantsCatchViolations drives a few seconds of the load — three owners,
// two conversations each, races, denials, webhook deliveries and replays, facts, documents —
// against the app production builds (its background work running), and expects every
// invariant to hold and no 5xx. Then it breaks each invariant in turn inside a transaction
// it rolls back — a turn left running, a task nobody approved, a webhook turn's write run, an
// event journaled twice, a lost user message, a lost fact, a webhook run left queued — and
// expects the check of that invariant to fail.
func TestLoadHoldsAndInvariantsCatchViolations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := httptest.NewServer(geminifake.New())
	t.Cleanup(fake.Close)
	env := apptest.New(t, apptest.Options{Env: map[string]string{"GEMINI_API_KEY": "fake", "GEMINI_BASE_URL": fake.URL}})
	bg, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- env.RunBackground(bg) }()
	t.Cleanup(func() { stop(); <-done }) // before the app closes (cleanups run last first)
	var owners []Owner
	for _, name := range []string{"ann", "bob", "cyd"} {
		o, key := env.DB.Owner(t, name)
		hook, err := env.Webhooks.Create(ctx, o.ID, "load")
		if err != nil {
			t.Fatal(err)
		}
		owners = append(owners, Owner{ID: o.ID.String(), APIKey: key, HookID: hook.HookID, HookSecret: hook.Secret})
	}
	w := Workload{Conversations: 2, Turns: 3, Duration: 3 * time.Second, Think: 100 * time.Millisecond,
		RaceEvery: 3, RaceWidth: 3, DenyEvery: 4, Grace: 20 * time.Second, Log: io.Discard}
	r, err := Drive(ctx, env.Server.URL, env.DB.SuperURL, env.DB.Name, owners, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.check(ctx); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r.Write(&out)
	l := r.ledger
	if !r.OK() || len(l.chats) == 0 || countDenied(l) == 0 || l.races == 0 ||
		len(l.deliveries) == 0 || l.replays == 0 || sum(l.facts) == 0 || sum(l.documents) == 0 {
		t.Fatalf("want a passing run with chats, denials, races, deliveries, replays, facts and documents:\n%s", out.String())
	}
	for _, line := range []string{"| POST /v1/chat |", "| POST /v1/turns/{id}/confirm (concurrent) |", "| POST /webhooks/{hook_id} |", "bench-load: PASS"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("the report has no %q:\n%s", line, out.String())
		}
	}

	conn, err := benchcycle.Connect(ctx, env.DB.SuperURL, env.DB.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	first := l.chats[0]
	for _, v := range []struct{ name, sql string }{
		{"no turn running or resuming", `UPDATE turns SET status = 'running' WHERE id = '` + first.turn + `'`},
		{"every approved write ran exactly once", `INSERT INTO tasks (owner_id, title) VALUES ('` + first.owner + `', 'nobody approved this')`},
		{"no unapproved write ran", `UPDATE tool_calls SET status = 'succeeded' WHERE id = (SELECT id FROM tool_calls WHERE status = 'pending' LIMIT 1)`},
		{"no duplicate journal row", `INSERT INTO audit_log (owner_id, turn_id, seq, kind, data)
			SELECT owner_id, turn_id, seq, kind, data FROM audit_log WHERE turn_id = '` + first.turn + `' AND seq > 0 LIMIT 1`},
		{"no lost message", `DELETE FROM messages WHERE turn_id = '` + first.turn + `' AND role = 'user'`},
		{"memory ingestion", `DELETE FROM memory_facts WHERE id = (SELECT id FROM memory_facts WHERE source = 'api' LIMIT 1)`},
		{"every accepted webhook delivery ran once", `UPDATE job_runs SET status = 'queued' WHERE id = '` + l.deliveries[0].run + `'`},
	} {
		if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, v.sql); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		checks, err := checkInvariants(ctx, conn, l)
		if _, rerr := conn.Exec(ctx, "ROLLBACK"); err == nil {
			err = rerr
		}
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		caught := false
		for _, c := range checks {
			if strings.HasPrefix(c.Name, v.name) {
				caught = !c.OK
			}
		}
		if !caught {
			t.Errorf("broken %q, but its check held: %+v", v.name, checks)
		}
	}
}

func countDenied(l *ledger) int {
	n := 0
	for _, ok := range l.decisions {
		if !ok {
			n++
		}
	}
	return n
}

// TestRSSFlat: the RSS check reads the trend over the window robustly, so one sample caught
// before a garbage collection passes and a steady growth or shrinkage of 12 % fails.
func TestRSSFlat(t *testing.T) {
	t.Parallel()
	series := func(f func(i int) float64) []RSSSample {
		var s []RSSSample
		for i := 0; i <= 60; i++ { // every 5 s over 5 minutes
			s = append(s, RSSSample{At: time.Duration(i) * 5 * time.Second, MB: f(i)})
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		samples []RSSSample
		ok      bool
	}{
		{"flat with a spike", series(func(i int) float64 {
			if i == 58 {
				return 70
			}
			return 50 + float64(i%3)
		}), true},
		{"growing 12 % over the window", series(func(i int) float64 { return 50 + 7.5*float64(i)/60 }), false},
		{"shrinking 16 % over the window", series(func(i int) float64 { return 60 - 12*float64(i)/60 }), false},
		{"too short", series(func(int) float64 { return 50 })[:14], false},
		{"growing 6 % over the window", series(func(i int) float64 { return 50 + 3.75*float64(i)/60 + float64(i%2) }), true},
	} {
		if c := rssFlat(tc.samples, 5*time.Minute, 4*time.Minute); c.OK != tc.ok {
			t.Errorf("%s: %t (%s), want %t", tc.name, c.OK, c.Detail, tc.ok)
		}
	}
}
