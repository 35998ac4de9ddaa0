package automationtools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/automation"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/automationtools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// clock is the one clock a test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// start is Monday 2 March 2026, 10:00 UTC: 11:00 in Berlin (CET, UTC+1).
var start = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// port is the toolset's port over the real service, as internal/app adapts it.
type port struct{ s *automation.Service }

func (p port) WhenReminder(ctx context.Context, ownerID uuid.UUID, at string) (string, error) {
	_, when, err := p.s.Resolve(ctx, ownerID, at)
	return when, err
}

func (p port) CreateReminder(ctx context.Context, ownerID uuid.UUID, text, at string, turnID uuid.UUID) (any, error) {
	return p.s.CreateReminder(ctx, ownerID, text, at, &turnID)
}

func (p port) ListReminders(ctx context.Context, ownerID uuid.UUID) (any, error) {
	return p.s.ListReminders(ctx, ownerID, false)
}

func (p port) CancelReminder(ctx context.Context, ownerID, id uuid.UUID) (any, error) {
	return p.s.CancelReminder(ctx, ownerID, id)
}

func input(a automationtools.Automation) automation.Input {
	return automation.Input{Instruction: a.Instruction, Schedule: a.Schedule, MailFrom: a.MailFrom, MailSubject: a.MailSubject}
}

func (p port) PlanAutomation(ctx context.Context, ownerID uuid.UUID, a automationtools.Automation) (string, error) {
	_, words, err := p.s.Plan(ctx, ownerID, input(a))
	return words, err
}

func (p port) CreateAutomation(ctx context.Context, ownerID uuid.UUID, a automationtools.Automation) (any, error) {
	return p.s.CreateAutomation(ctx, ownerID, input(a))
}

func (p port) ListAutomations(ctx context.Context, ownerID uuid.UUID) (any, error) {
	return p.s.ListAutomations(ctx, ownerID)
}

func (p port) EditAutomation(ctx context.Context, ownerID, id uuid.UUID, a automationtools.Automation) (any, error) {
	return p.s.Edit(ctx, ownerID, id, input(a))
}

func (p port) SetAutomation(ctx context.Context, ownerID, id uuid.UUID, op string) (any, error) {
	switch op {
	case automationtools.OpPause:
		return p.s.Pause(ctx, ownerID, id)
	case automationtools.OpResume:
		return p.s.Resume(ctx, ownerID, id)
	}
	return map[string]any{"id": id, "deleted": true}, p.s.Delete(ctx, ownerID, id)
}

// noWrites is the owner's real service with its writes refused: a tool declared a read must
// run over it, and one declared a write must be stopped by it.
type noWrites struct{ automationtools.Automations }

var errWrote = errors.New("a write reached the service")

func (noWrites) CreateReminder(context.Context, uuid.UUID, string, string, uuid.UUID) (any, error) {
	return nil, errWrote
}

func (noWrites) CancelReminder(context.Context, uuid.UUID, uuid.UUID) (any, error) {
	return nil, errWrote
}

func (noWrites) CreateAutomation(context.Context, uuid.UUID, automationtools.Automation) (any, error) {
	return nil, errWrote
}

func (noWrites) EditAutomation(context.Context, uuid.UUID, uuid.UUID, automationtools.Automation) (any, error) {
	return nil, errWrote
}

func (noWrites) SetAutomation(context.Context, uuid.UUID, uuid.UUID, string) (any, error) {
	return nil, errWrote
}

// book is one owner in Europe/Berlin with the tools over the real service and clock.
type book struct {
	svc   *automation.Service
	owner uuid.UUID
	reg   *tools.Registry
}

func registry(t *testing.T, a automationtools.Automations) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(automationtools.Tools(a)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func newBook(t *testing.T, d testdb.Opened, name string) book {
	t.Helper()
	o, _ := d.Owner(t, name)
	c := &clock{t: start}
	svc := &automation.Service{Store: d.Store, Now: c.Now}
	if _, err := svc.SetZone(context.Background(), o.ID, "Europe/Berlin"); err != nil {
		t.Fatal(err)
	}
	return book{svc: svc, owner: o.ID, reg: registry(t, port{svc})}
}

func (b book) env() tools.Env {
	return tools.Env{OwnerID: b.owner, TurnID: uuid.New(), CallID: "c1", Now: func() time.Time { return start }}
}

// run calls a tool of reg and decodes its output into v.
func (b book) run(t *testing.T, reg *tools.Registry, name, args string, v any) error {
	t.Helper()
	out, err := reg.Run(context.Background(), b.env(), name, json.RawMessage(args))
	if err == nil && v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("%s output %s: %v", name, out, err)
		}
	}
	return err
}

func (b book) ok(t *testing.T, name, args string, v any) {
	t.Helper()
	if err := b.run(t, b.reg, name, args, v); err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
}

// preview is the tool's card for args.
func (b book) preview(t *testing.T, name, args string) (string, error) {
	t.Helper()
	tool, ok := b.reg.Get(name)
	if !ok || tool.Preview == nil {
		t.Fatalf("%s has no card", name)
	}
	return tool.Preview(context.Background(), b.env(), json.RawMessage(args))
}

type reminder struct {
	ID     string    `json:"id"`
	Text   string    `json:"text"`
	DueAt  time.Time `json:"due_at"`
	Status string    `json:"status"`
	When   string    `json:"when"`
}

type automationView struct {
	ID, Instruction, Kind, Cron, Words, Timezone, Status string
	NextText                                             []string `json:"next_text"`
}

// stored is how many reminders (any status) and automations the owner has.
func (b book) stored(t *testing.T) (int, int) {
	t.Helper()
	rs, err := b.svc.ListReminders(context.Background(), b.owner, true)
	if err != nil {
		t.Fatal(err)
	}
	as, err := b.svc.ListAutomations(context.Background(), b.owner)
	if err != nil {
		t.Fatal(err)
	}
	return len(rs), len(as)
}

// TestAutomationTools runs the reminders and automations tools' tests over one real
// database, an owner each.
func TestAutomationTools(t *testing.T) {
	d := testdb.Open(t, 4)
	for name, test := range map[string]func(*testing.T, book){
		"AreWhatTheyDeclare":    areWhatTheyDeclare,
		"RemindInTheOwnersZone": remindInTheOwnersZone,
		"KeepAutomations":       keepAutomations,
		"RefuseBadArguments":    refuseBadArguments,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newBook(t, d, name))
		})
	}
}

// areWhatTheyDeclare: the two lists are reads; the seven writes are External — what they
// set acts later, outside the turn, so a tainted turn asks and no "always" rule runs them —
// and the two that create show a card. The declaration is true of what each does: every read
// runs over a service whose writes are refused, every write is stopped by that refusal.
func areWhatTheyDeclare(t *testing.T, b book) {
	want := map[string]string{
		"list_reminders":    "read",
		"list_automations":  "read",
		"create_reminder":   "write external preview",
		"cancel_reminder":   "write external",
		"create_automation": "write external preview",
		"edit_automation":   "write external",
		"pause_automation":  "write external",
		"resume_automation": "write external",
		"delete_automation": "write external",
	}
	id := `{"id":"` + uuid.NewString() + `"}`
	args := map[string]string{
		"list_reminders": `{}`, "list_automations": `{}`,
		"create_reminder":   `{"text":"call mum","at":"17:00"}`,
		"cancel_reminder":   id,
		"create_automation": `{"instruction":"tell me the weather","schedule":"every weekday at 7:30"}`,
		"edit_automation":   `{"id":"` + uuid.NewString() + `","schedule":"0 8 * * *"}`,
		"pause_automation":  id, "resume_automation": id, "delete_automation": id,
	}
	if names := b.reg.Names(); len(names) != len(want) {
		t.Fatalf("the automation tools are %q; want the %d of this table", names, len(want))
	}
	guarded := registry(t, noWrites{port{b.svc}})
	for name, policy := range want {
		tool, ok := b.reg.Get(name)
		if !ok {
			t.Errorf("no tool %s", name)
			continue
		}
		if got := toolstest.Policy(tool); got != policy {
			t.Errorf("%s declares %q; want %q", name, got, policy)
		}
		if tool.Kind == steward.KindWrite && tool.AlwaysOffered() {
			t.Errorf("%s offers an \"always\" rule: what it sets acts later, outside the turn", name)
		}
		err := b.run(t, guarded, name, args[name], nil)
		switch {
		case tool.Kind == steward.KindRead && err != nil:
			t.Errorf("%s, a read, failed with the service's writes refused: %v", name, err)
		case tool.Kind == steward.KindWrite && !errors.Is(err, errWrote):
			t.Errorf("%s, a write, = %v with the service's writes refused; want it stopped by the refusal", name, err)
		}
	}
	if r, a := b.stored(t); r != 0 || a != 0 {
		t.Errorf("the guarded calls stored %d reminders and %d automations; want none", r, a)
	}
	// Without the service, every tool refuses in words, no panic.
	bare := registry(t, nil)
	for name := range want {
		if _, err := bare.Run(context.Background(), b.env(), name, json.RawMessage(args[name])); err == nil ||
			!strings.Contains(err.Error(), "not available") {
			t.Errorf("%s without the service = %v; want \"not available\"", name, err)
		}
	}
}

// remindInTheOwnersZone: "in 20 minutes", "17:00" and an RFC 3339 time are read in the
// owner's zone (Berlin, UTC+1) at the service's clock; the card shows local time and UTC;
// the list shows what is pending and a cancelled reminder leaves it.
func remindInTheOwnersZone(t *testing.T, b book) {
	cases := []struct{ at, card string }{
		{"in 20 minutes", "Remind you Mon 2 Mar 2026 11:20 CET (10:20 UTC): “stretch”"},
		{"17:00", "Remind you Mon 2 Mar 2026 17:00 CET (16:00 UTC): “stretch”"},
		{"2026-03-03T08:00:00Z", "Remind you Tue 3 Mar 2026 09:00 CET (08:00 UTC): “stretch”"},
	}
	wantDue := []time.Time{start.Add(20 * time.Minute), time.Date(2026, 3, 2, 16, 0, 0, 0, time.UTC), time.Date(2026, 3, 3, 8, 0, 0, 0, time.UTC)}
	var ids []string
	for i, c := range cases {
		args := `{"text":"stretch","at":"` + c.at + `"}`
		card, err := b.preview(t, "create_reminder", args)
		if err != nil || card != c.card {
			t.Errorf("card for %q = %q, %v; want %q", c.at, card, err, c.card)
		}
		var out struct {
			Reminder reminder `json:"reminder"`
		}
		b.ok(t, "create_reminder", args, &out)
		if r := out.Reminder; !r.DueAt.Equal(wantDue[i]) || r.Status != "pending" || r.Text != "stretch" ||
			!strings.Contains(c.card, r.When) {
			t.Errorf("create_reminder at %q = %+v; want pending, due %s, worded as on its card", c.at, r, wantDue[i])
		}
		ids = append(ids, out.Reminder.ID)
	}
	var list struct {
		Reminders []reminder `json:"reminders"`
	}
	b.ok(t, "list_reminders", `{}`, &list)
	if len(list.Reminders) != 3 {
		t.Fatalf("list_reminders = %+v; want the three", list.Reminders)
	}
	var cancelled struct {
		Reminder reminder `json:"reminder"`
	}
	b.ok(t, "cancel_reminder", `{"id":"`+ids[1]+`"}`, &cancelled)
	if cancelled.Reminder.Status != "cancelled" || cancelled.Reminder.ID != ids[1] {
		t.Errorf("cancel_reminder = %+v; want reminder %s cancelled", cancelled.Reminder, ids[1])
	}
	b.ok(t, "list_reminders", `{}`, &list)
	if len(list.Reminders) != 2 || list.Reminders[0].ID == ids[1] || list.Reminders[1].ID == ids[1] {
		t.Errorf("after the cancel, list_reminders = %+v; want the other two", list.Reminders)
	}
	// Cancelling it again is a clear error, not a panic, and changes nothing.
	if err := b.run(t, b.reg, "cancel_reminder", `{"id":"`+ids[1]+`"}`, nil); err == nil || !strings.Contains(err.Error(), "not pending") {
		t.Errorf("a second cancel = %v; want it refused as not pending", err)
	}
}

// keepAutomations: an automation from words and one from cron, their cards with next runs in
// the owner's zone, the list, edit, pause, resume and delete; a schedule more frequent than
// the minimum is refused in words naming its knob, and stored nowhere.
func keepAutomations(t *testing.T, b book) {
	words := `{"instruction":"tell me my first meeting","schedule":"every weekday at 7:30"}`
	card, err := b.preview(t, "create_automation", words)
	if err != nil || !strings.Contains(card, "[30 7 * * 1-5]") || !strings.Contains(card, "(Europe/Berlin)") ||
		!strings.Contains(card, "next: Tue 3 Mar 2026 07:30 CET (06:30 UTC)") {
		t.Errorf("card = %q, %v; want the cron, the zone and the next run Tue 3 Mar 07:30 CET (06:30 UTC)", card, err)
	}
	var w struct {
		Automation automationView `json:"automation"`
	}
	b.ok(t, "create_automation", words, &w)
	if a := w.Automation; a.Cron != "30 7 * * 1-5" || a.Timezone != "Europe/Berlin" || a.Status != "active" ||
		len(a.NextText) != 3 || a.NextText[0] != "Tue 3 Mar 2026 07:30 CET (06:30 UTC)" {
		t.Errorf("from words = %+v; want 30 7 * * 1-5 in Berlin, active, next Tue 3 Mar 07:30", a)
	}
	var c struct {
		Automation automationView `json:"automation"`
	}
	b.ok(t, "create_automation", `{"instruction":"summarise my week","schedule":"0 18 * * 5"}`, &c)
	if a := c.Automation; a.Cron != "0 18 * * 5" || len(a.NextText) == 0 || a.NextText[0] != "Fri 6 Mar 2026 18:00 CET (17:00 UTC)" {
		t.Errorf("from cron = %+v; want next Fri 6 Mar 18:00 CET", a)
	}

	for _, often := range []string{"*/5 * * * *", "every 10 minutes"} {
		args := `{"instruction":"check the news","schedule":"` + often + `"}`
		_, perr := b.preview(t, "create_automation", args)
		err := b.run(t, b.reg, "create_automation", args, nil)
		for _, e := range []error{perr, err} {
			var ae *tools.ArgError
			if !errors.As(e, &ae) || !strings.Contains(e.Error(), "STEWARD_AUTOMATION_MIN_INTERVAL") ||
				!strings.Contains(e.Error(), "15m") {
				t.Errorf("schedule %q = %v; want an ArgError naming the 15m minimum and STEWARD_AUTOMATION_MIN_INTERVAL", often, e)
			}
		}
	}

	var list struct {
		Automations []automationView `json:"automations"`
	}
	b.ok(t, "list_automations", `{}`, &list)
	if len(list.Automations) != 2 {
		t.Fatalf("list_automations = %+v; want the two, none of the refused", list.Automations)
	}

	id := w.Automation.ID
	var e struct {
		Automation automationView `json:"automation"`
	}
	b.ok(t, "edit_automation", `{"id":"`+id+`","schedule":"0 9 * * *"}`, &e)
	if e.Automation.Cron != "0 9 * * *" || e.Automation.Instruction != "tell me my first meeting" {
		t.Errorf("edit_automation = %+v; want 0 9 * * * with the instruction kept", e.Automation)
	}
	for _, step := range []struct{ tool, status string }{{"pause_automation", "paused"}, {"resume_automation", "active"}} {
		var s struct {
			Automation automationView `json:"automation"`
		}
		b.ok(t, step.tool, `{"id":"`+id+`"}`, &s)
		if s.Automation.Status != step.status {
			t.Errorf("%s = %+v; want %s", step.tool, s.Automation, step.status)
		}
	}
	b.ok(t, "delete_automation", `{"id":"`+id+`"}`, nil)
	b.ok(t, "list_automations", `{}`, &list)
	if len(list.Automations) != 1 || list.Automations[0].ID != c.Automation.ID {
		t.Errorf("after the delete, list_automations = %+v; want only the weekly summary", list.Automations)
	}
}

// refuseBadArguments: each bad call is an *tools.ArgError naming its tool and field, with no
// panic, and nothing is stored.
func refuseBadArguments(t *testing.T, b book) {
	cases := []struct{ tool, args, field string }{
		{"create_reminder", `{"text":"","at":"17:00"}`, "text"},
		{"create_reminder", `{"text":"x","at":""}`, "at"},
		{"create_reminder", `{"text":"` + strings.Repeat("a", 501) + `","at":"17:00"}`, "text"},
		{"create_reminder", `{"text":"x","at":"when the cows come home"}`, "at"},
		{"create_reminder", `{"text":"x","at":"2026-03-01T08:00:00Z"}`, "at"},
		{"cancel_reminder", `{"id":"not-an-id"}`, "id"},
		{"create_automation", `{"instruction":"","schedule":"0 8 * * *"}`, "instruction"},
		{"create_automation", `{"instruction":"x"}`, "schedule"},
		{"create_automation", `{"instruction":"x","schedule":"every blue moon"}`, "schedule"},
		{"edit_automation", `{"id":"` + uuid.NewString() + `"}`, "schedule"},
		{"edit_automation", `{"id":"nope","schedule":"0 8 * * *"}`, "id"},
		{"pause_automation", `{"id":""}`, "id"},
	}
	for _, c := range cases {
		err := b.run(t, b.reg, c.tool, c.args, nil)
		var ae *tools.ArgError
		if !errors.As(err, &ae) {
			t.Errorf("%s(%.60s) = %v; want an *tools.ArgError", c.tool, c.args, err)
			continue
		}
		if ae.Tool != c.tool || ae.Field != c.field {
			t.Errorf("%s(%.60s): ArgError on %s.%s (%v); want %s.%s", c.tool, c.args, ae.Tool, ae.Field, err, c.tool, c.field)
		}
	}
	for _, raw := range []string{`{"text":`, `{"text":5,"at":"17:00"}`, `[]`} {
		var ae *tools.ArgError
		if err := b.run(t, b.reg, "create_reminder", raw, nil); !errors.As(err, &ae) {
			t.Errorf("create_reminder(%s) = %v; want an *tools.ArgError", raw, err)
		}
	}
	if r, a := b.stored(t); r != 0 || a != 0 {
		t.Errorf("the bad calls stored %d reminders and %d automations; want none", r, a)
	}
}
