package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"sync/atomic"
	"testing"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// midTx is an env whose turns reach two points inside an open transaction: as the turn
// starts (the owner's tools are read in its first transaction) and as the write note_down
// runs with its journal row. At each, after the transaction's first round trip, every
// connection is ended once when armed — a failover mid-transaction.
type midTx struct {
	*env
	armed atomic.Bool
}

func newMidTx(t *testing.T, steps ...scripted.Step) *midTx {
	m := &midTx{}
	point := func(ctx context.Context, data tools.Data) error {
		if _, err := data.ListTasks(ctx, "all"); err != nil { // the transaction has begun
			return err
		}
		if m.armed.CompareAndSwap(true, false) {
			m.terminate()
		}
		return nil
	}
	type args struct {
		Title string `json:"title"`
	}
	note := tools.New("note_down", "Notes a task down.", steward.KindWrite, func(ctx context.Context, env tools.Env, a args) (any, error) {
		if err := point(ctx, env.Data); err != nil {
			return nil, err
		}
		return env.Data.CreateTask(ctx, steward.NewTask{Title: a.Title})
	})
	m.env = newEnvWith(t, nil, func(c *agent.Config, h *agent.Hooks) {
		reg, err := tools.NewRegistry(append(toolstest.Tools(), note)...)
		if err != nil {
			t.Fatal(err)
		}
		c.Tools = reg
		h.OwnerTools = func(ctx context.Context, tx agent.Tx) ([]tools.Tool, error) { return nil, point(ctx, tx.Data) }
	}, steps...)
	return m
}

// finished checks what the owner saw (200 and the turn's end) and that no turn is left running.
func (m *midTx) finished(what string, resp response, status steward.Status, answer string) steward.View {
	m.t.Helper()
	if resp.status != http.StatusOK {
		m.t.Errorf("%s: %d %s", what, resp.status, resp.body)
		return steward.View{}
	}
	v := viewOf(m.t, resp)
	if v.Status != status || v.Answer != answer {
		m.t.Errorf("%s: %s %q %q, want %s %q", what, v.Status, v.Answer, v.Error, status, answer)
	}
	return v
}

func (m *midTx) noneRunning() {
	m.t.Helper()
	for _, turn := range m.turns() {
		if turn.Status == steward.StatusRunning {
			m.t.Errorf("turn %s left running", turn.ID)
		}
	}
}

func noteDown(id, title string) scripted.Step {
	return scripted.Reply(scripted.Calls(scripted.Call(id, "note_down", `{"title":"`+title+`"}`)))
}

// TestFailoverMidTransaction: every connection is ended while a transaction of the chat or
// confirm path is open. Nothing of that transaction committed, so it runs once more on a
// fresh connection: the owner sees the turn end as it would have, the write runs exactly
// once, and no turn is left running.
func TestFailoverMidTransaction(t *testing.T) {
	chat := func(m *midTx, msg string) response {
		return m.do(request{method: "POST", path: "/v1/chat", key: m.key, body: jsonOf(t, map[string]string{"message": msg})})
	}
	t.Run("as the turn starts", func(t *testing.T) {
		m := newMidTx(t, text("Hello."))
		m.armed.Store(true)
		m.finished("chat", chat(m, "hello"), steward.StatusCompleted, "Hello.")
		m.noneRunning()
	})
	t.Run("as the approved write runs", func(t *testing.T) {
		m := newMidTx(t, noteDown("c1", "milk"), text("Noted milk."))
		v := m.finished("chat", chat(m, "note milk"), steward.StatusSuspended, "")
		m.armed.Store(true)
		m.finished("confirm", m.confirm(v.TurnID, approveAll(v)), steward.StatusCompleted, "Noted milk.")
		if n := len(m.tasks()); n != 1 {
			t.Errorf("%d tasks, want exactly 1", n)
		}
		m.noneRunning()
	})
	t.Run("as a write a rule allows runs", func(t *testing.T) {
		m := newMidTx(t, noteDown("c1", "bread"), text("Noted bread."))
		if r := m.do(request{method: "POST", path: "/v1/rules", key: m.key, body: `{"tool":"note_down","effect":"allow"}`}); r.status != http.StatusCreated {
			t.Fatalf("rule: %d %s", r.status, r.body)
		}
		m.armed.Store(true)
		m.finished("chat", chat(m, "note bread"), steward.StatusCompleted, "Noted bread.")
		if n := len(m.tasks()); n != 1 {
			t.Errorf("%d tasks, want exactly 1", n)
		}
		m.noneRunning()
	})
}

// TestFailoverAtTheStartsCommit: the connection is cut at the COMMIT of the chat's first
// transaction (the conversation and the running turn). Its answer lost, Steward cannot know
// from the connection whether it committed: it looks, and the turn had started, so it goes on.
// The COMMIT never arrived, nothing committed: it looks, finds no turn, and starts once more
// on a fresh connection. Either way the owner sees the answer, not a 503, and there is one
// turn, completed.
func TestFailoverAtTheStartsCommit(t *testing.T) {
	for _, c := range []struct {
		name string
		cut  func(*testdb.Outage)
	}{
		{"its answer lost", (*testdb.Outage).LoseNextCommit},
		{"it never arrived", (*testdb.Outage).DropNextCommit},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := testdb.NewOutage(t, os.Getenv("APP_DATABASE_URL"))
			e := appEnv(t, apptest.Options{Model: scripted.New(text("Hello.")), Through: out.Through})
			c.cut(out)
			resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hello"}`})
			if resp.status != http.StatusOK {
				t.Errorf("chat whose first COMMIT was cut: %d %s", resp.status, resp.body)
			} else if v := viewOf(t, resp); v.Status != steward.StatusCompleted || v.Answer != "Hello." {
				t.Errorf("chat whose first COMMIT was cut: %s %q %q", v.Status, v.Answer, v.Error)
			}
			if turns := e.turns(); len(turns) != 1 || turns[0].Status != steward.StatusCompleted {
				t.Errorf("turns %+v, want one completed (none left running)", turns)
			}
		})
	}
}

// TestFailoverLosesTheConfirmsCommit: the connection is cut as the server answers the COMMIT
// of a confirm's claim, in which the approved write ran with its journal row. Steward looks:
// its claim committed, so the turn goes on — the owner sees the answer, the write ran exactly
// once, and no turn is left resuming or running.
func TestFailoverLosesTheConfirmsCommit(t *testing.T) {
	out := testdb.NewOutage(t, os.Getenv("APP_DATABASE_URL"))
	e := appEnv(t, apptest.Options{Model: scripted.New(createTask("c1", "milk"), text("Added.")), Through: out.Through})
	v := e.chat("add milk")
	if v.Status != steward.StatusSuspended {
		t.Fatalf("chat: %s %q, want suspended", v.Status, v.Error)
	}
	out.LoseNextCommit()
	resp := e.confirm(v.TurnID, approveAll(v))
	if resp.status != http.StatusOK {
		t.Errorf("confirm whose claim's COMMIT answer was lost: %d %s", resp.status, resp.body)
	} else if done := viewOf(t, resp); done.Status != steward.StatusCompleted || done.Answer != "Added." {
		t.Errorf("confirm whose claim's COMMIT answer was lost: %s %q %q", done.Status, done.Answer, done.Error)
	}
	if n := len(e.tasks()); n != 1 {
		t.Errorf("%d tasks, want exactly 1", n)
	}
	for _, turn := range e.turns() {
		if turn.Status != steward.StatusCompleted {
			t.Errorf("turn %s left %s", turn.ID, turn.Status)
		}
	}
}
