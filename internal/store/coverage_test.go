package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	. "github.com/stewardhq/steward/internal/store"
)

// probed records the *Tx methods the isolation suite ran against another owner's rows; each
// probe names the methods it exercises as it runs.
var probed sync.Map

func covers(methods ...string) {
	for _, m := range methods {
		probed.Store(m, true)
	}
}

// notProbed are the *Tx methods that cannot reach another owner's rows, and why.
var notProbed = map[string]string{
	"OwnerID":          "returns the transaction's own owner id; no query",
	"Agent":            "the same transaction as the agent's ports; no query of its own",
	"Together":         "runs the caller's statements, in this transaction; no query of its own",
	"Safety.LockOwner": "locks the owners row of the transaction's own owner; takes no id",
	// The reminders' and automations' repositories and the owner's zone: every method is
	// run against another owner's rows by TestAutomationsIsolation.
	"Reminders":           "TestAutomationsIsolation (automations_isolation_test.go)",
	"Automations":         "TestAutomationsIsolation (automations_isolation_test.go)",
	"Account.Timezone":    "reads the transaction's own owner row; takes no id",
	"Account.SetTimezone": "writes the transaction's own owner row; takes no id",
}

// checkEveryMethodProbed fails the suite when an exported method of a *Tx repository (from
// reflection, so a new repository or method counts the day it is written), named
// "Area.Method", has no probe and no reason in notProbed.
func checkEveryMethodProbed(t *testing.T) {
	var missing []string
	for _, name := range txMethods() {
		if _, ok := probed.Load(name); !ok && notProbed[name] == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d store methods are never probed for isolation across owners: %v", len(missing), missing)
	}
}

// txMethods lists the exported methods of *Tx and of each of its repository fields.
func txMethods() []string {
	tx := reflect.TypeOf(&Tx{})
	var names []string
	for i := range tx.NumMethod() {
		names = append(names, tx.Method(i).Name)
	}
	for i := range tx.Elem().NumField() {
		f := tx.Elem().Field(i)
		if !f.IsExported() || f.Anonymous {
			continue
		}
		for j := range f.Type.NumMethod() {
			names = append(names, f.Name+"."+f.Type.Method(j).Name)
		}
	}
	return names
}

// probeWrites: bob's writes that name alice's ids fail or land in bob's own rows, and his
// own-scoped writes (settings, sweeps, deletes) leave every row of alice as it was.
func probeWrites(t *testing.T, ctx context.Context, s *Store, a, b seeded) {
	aa := a.auto
	type aliceView struct {
		msgs, turns, events, calls, convs, tasks, notes, rules, schedules, hooks, facts, caps int
		backlog                                                                               int64
		spent                                                                                 int64
		controls                                                                              steward.Controls
		mode, channel                                                                         string
		run                                                                                   RunStatus
		chunks                                                                                int
	}
	look := func() aliceView {
		t.Helper()
		var v aliceView
		err := s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
			n := func(k int, err error) int {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				return k
			}
			msgs, err := tx.Conversations.Messages(ctx, a.conv)
			v.msgs = n(len(msgs), err)
			turns, err := tx.Turns.InConversation(ctx, a.conv, 100)
			v.turns = n(len(turns), err)
			events, err := tx.Journal.TurnEvents(ctx, a.turn)
			v.events = n(len(events), err)
			calls, err := tx.Journal.Calls(ctx, a.turn)
			v.calls = n(len(calls), err)
			convs, err := tx.Conversations.List(ctx, 100)
			v.convs = n(len(convs), err)
			tasks, err := tx.Tasks.ListTasks(ctx, "all")
			v.tasks = n(len(tasks), err)
			notes, err := tx.Tasks.ListNotifications(ctx, 100)
			v.notes = n(len(notes), err)
			rules, err := tx.Rules.List(ctx)
			v.rules = n(len(rules), err)
			schedules, err := tx.Schedules.List(ctx)
			v.schedules = n(len(schedules), err)
			hooks, err := tx.Webhooks.List(ctx)
			v.hooks = n(len(hooks), err)
			facts, err := tx.Tasks.ListFacts(ctx, 100)
			v.facts = n(len(facts), err)
			caps, err := tx.Safety.Caps(ctx)
			v.caps = n(len(caps), err)
			chunks, err := tx.Memory.ConversationChunks(ctx, a.conv, 100)
			v.chunks = n(len(chunks), err)
			backlog, err := tx.Outbox.IngestBacklog(ctx)
			v.backlog = int64(n(int(backlog.Pending), err))
			if v.spent, err = tx.Safety.SpentInWindow(ctx, "EUR", time.Hour); err != nil {
				t.Fatal(err)
			}
			if v.controls, err = tx.Safety.Controls(ctx); err != nil {
				t.Fatal(err)
			}
			if v.mode, err = tx.Safety.Mode(ctx); err != nil {
				t.Fatal(err)
			}
			ch, err := tx.Channels.Default(ctx)
			if err != nil {
				t.Fatal(err)
			}
			v.channel = ch.URL
			if ch.GoneAt != nil || !ch.Enabled {
				v.channel += " (gone)"
			}
			run, err := tx.Runs.Get(ctx, aa.run.ID)
			if err != nil {
				t.Fatal(err)
			}
			v.run = run.Status
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := look()
	err := s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		covers("Conversations.AppendMessages", "Conversations.PinSummary", "Turns.Create", "Journal.AppendEvents", "Journal.RecordCall", "Safety.RecordSpend", "Conversations.EnqueueIngest", "Turns.StateSize",
			"Memory.AddChunk", "Webhooks.Create", "Conversations.Create", "Tasks.CreateTask", "Tasks.CreateNotification", "Rules.Create",
			"Schedules.Create", "Tasks.UpsertFact", "Memory.RememberFact", "Safety.SetCap", "Channels.SetWebhook", "Safety.SetKill", "Safety.SetMode",
			"Sweep.Expire", "Sweep.FailStale", "Sweep.LapsedResuming", "Sweep.ReleaseHolder", "Turns.RenewLease", "Runs.FailStale", "Outbox.FailedIngests", "Channels.DeleteDefault", "Schedules.Delete",
			"Safety.Cap", "Safety.Controls", "Safety.Mode", "Safety.AdmitState")
		msg := steward.Message{Role: steward.RoleUser, Parts: []steward.Part{{Text: "planted by bob"}}}
		// Writes naming alice's rows: each savepoint keeps a refused write from aborting the rest.
		named := map[string]func(tx *Tx) error{
			"messages append to alice's conversation": func(tx *Tx) error { return tx.Conversations.AppendMessages(ctx, a.conv, a.turn, msg) },
			"summary pinned on alice's conversation": func(tx *Tx) error {
				return tx.Conversations.PinSummary(ctx, a.conv, steward.Summary{Text: "planted by bob", ThroughSeq: 1})
			},
			"turn in alice's conversation": func(tx *Tx) error {
				_, err := tx.Turns.Create(ctx, a.conv, steward.TriggerChat, "scripted", time.Now(), time.Hour)
				return err
			},
			"call in alice's turn": func(tx *Tx) error {
				return tx.Journal.RecordCall(ctx, steward.CallRecord{TurnID: a.turn, CallID: "planted", Tool: "notify", Kind: steward.KindWrite,
					Args: json.RawMessage(`{}`), ArgsHash: "h", Status: steward.CallPending})
			},
			"webhook with alice's hook id": func(tx *Tx) error {
				_, err := tx.Webhooks.Create(ctx, aa.webhook.HookID, "github", randomSecret())
				return err
			},
		}
		for what, write := range named {
			if err := tx.RawExec(ctx, "SAVEPOINT probe"); err != nil {
				return err
			}
			if err := write(tx); err == nil {
				t.Errorf("%s: bob's write succeeded, want refused", what)
			}
			if err := tx.RawExec(ctx, "ROLLBACK TO SAVEPOINT probe"); err != nil {
				return err
			}
		}
		// Alice's turn already has its outbox item: bob's enqueue adds no row to either owner.
		mine, err := tx.Outbox.IngestBacklog(ctx)
		if err != nil {
			return err
		}
		if err := tx.Conversations.EnqueueIngest(ctx, a.turn, a.conv); err != nil && !errors.Is(err, ErrNotFound) {
			t.Errorf("ingest of alice's turn: %v", err)
		}
		if after, err := tx.Outbox.IngestBacklog(ctx); err != nil || after != mine {
			t.Errorf("ingest of alice's turn: bob's backlog %+v -> %+v (err %v)", mine, after, err)
		}
		// Writes that reach alice's rows only by id inside bob's data: they stay bob's.
		if err := tx.Journal.AppendEvents(ctx, &a.turn, []steward.NewEvent{{Seq: 99, Kind: "planted", Data: []byte(`{}`)}}); err != nil {
			t.Errorf("audit event naming alice's turn: %v", err)
		}
		if err := tx.Safety.RecordSpend(ctx, a.turn, "planted", "pay", steward.Money{Minor: 7, Currency: "EUR"}); err != nil {
			t.Errorf("spend naming alice's turn: %v", err)
		}
		if _, err := tx.Memory.AddChunk(ctx, "conversation", a.conv.String(), OriginOwner, "planted by bob", b.vector); err != nil {
			t.Errorf("chunk naming alice's conversation: %v", err)
		}
		if n, err := tx.Turns.StateSize(ctx, a.turn); err == nil || n != 0 {
			t.Errorf("state size of alice's turn: %d, %v; want not found", n, err)
		}
		if _, err := tx.Turns.RenewLease(ctx, a.turn, time.Now(), time.Hour); !errors.Is(err, ErrNotFound) {
			t.Errorf("lease of alice's turn renewed by bob: %v; want not found", err)
		}
		if ids, err := tx.Sweep.LapsedResuming(ctx, time.Now().Add(48*time.Hour)); err != nil || len(ids) != 0 {
			t.Errorf("bob's lapsed resuming turns: %v, %v; want none of alice's", ids, err)
		}
		// Bob's own rows and settings.
		for what, err := range map[string]error{
			"conversation": second(tx.Conversations.Create(ctx, "bob's")),
			"task":         second(tx.Tasks.CreateTask(ctx, steward.NewTask{Title: "bob's"})),
			"notification": second(tx.Tasks.CreateNotification(ctx, "", "", "bob's")),
			"rule":         second(tx.Rules.Create(ctx, steward.Rule{Tool: "create_task", Match: steward.MatchPattern, Effect: "deny", Source: "api"})),
			"schedule":     second(tx.Schedules.Create(ctx, NewSchedule{Job: "evening", Cron: "0 19 * * *", Timezone: "UTC"})),
			"fact":         third(tx.Tasks.UpsertFact(ctx, steward.NewFact{Kind: "fact", Content: "bob's words", Key: "fact::bob's words"})),
			"memory fact":  third(tx.Memory.RememberFact(ctx, NewMemoryFact{Kind: "fact", Content: "bob remembers", Source: FactSourceAPI})),
			"cap":          second(tx.Safety.SetCap(ctx, steward.Cap{Currency: "USD", PerActionMinor: 1, WindowMinor: 2, Window: time.Hour})),
			"kill":         tx.Safety.SetKill(ctx, true, "bob stops"),
			"mode":         tx.Safety.SetMode(ctx, "deny"),
		} {
			if err != nil {
				t.Errorf("bob's own %s: %v", what, err)
			}
		}
		if c, ok, err := tx.Safety.Cap(ctx, "USD"); err != nil || !ok || c.PerActionMinor != 1 {
			t.Errorf("bob's cap: %+v, %v, %v", c, ok, err)
		}
		if c, _, err := tx.Safety.AdmitState(ctx); err != nil || !c.OwnerKilled {
			t.Errorf("bob's admit state: %+v, %v", c, err)
		}
		// Sweeps and deletes scoped to bob.
		for what, err := range map[string]error{
			"expire turns":     second(tx.Sweep.Expire(ctx, time.Now())),
			"fail stale turns": second(tx.Sweep.FailStale(ctx, time.Now(), time.Now())),
			"release held":     second(tx.Sweep.ReleaseHolder(ctx, "", time.Now())),
			"fail stale runs":  second(tx.Runs.FailStale(ctx, time.Now())),
			"delete channel":   tx.Channels.DeleteDefault(ctx),
			"delete schedule":  tx.Schedules.Delete(ctx, "morning-briefing"),
		} {
			if err != nil {
				t.Errorf("bob's %s: %v", what, err)
			}
		}
		// Bob's channel again, for the row-level security probe that follows.
		if ch, err := tx.Channels.SetWebhook(ctx, "https://example.com/bob-again", ""); err != nil || ch.URL != "https://example.com/bob-again" {
			t.Errorf("bob's channel: %+v, %v", ch, err)
		}
		// Named channels: bob's own, never alice's (her default "webhook" is checked by look).
		covers("Channels.Create", "Channels.List", "Channels.Named", "Channels.Delete")
		if _, err := tx.Channels.Create(ctx, NewChannel{Name: "alerts", Kind: "ntfy", URL: "https://ntfy.example", Topic: "t"}); err != nil {
			t.Errorf("bob's named channel: %v", err)
		}
		if chs, err := tx.Channels.List(ctx); err != nil || len(chs) != 2 || chs[0].Name != "alerts" || chs[1].URL != "https://example.com/bob-again" {
			t.Errorf("bob's channels: %+v, %v", chs, err)
		}
		if ch, err := tx.Channels.Named(ctx, "webhook"); err != nil || ch.URL != "https://example.com/bob-again" {
			t.Errorf("bob's channel named webhook: %+v, %v", ch, err)
		}
		covers("Channels.MakeDefault")
		if ch, err := tx.Channels.MakeDefault(ctx, "alerts"); err != nil || !ch.Default || ch.Name != "alerts" {
			t.Errorf("bob's default: %+v, %v", ch, err)
		}
		if chs, err := tx.Channels.List(ctx); err != nil || len(chs) != 2 || !chs[0].Default || chs[1].Default {
			t.Errorf("bob's channels after a new default: %+v, %v", chs, err)
		}
		if err := tx.Channels.Delete(ctx, "alerts"); err != nil {
			t.Errorf("bob's delete of his named channel: %v", err)
		}
		covers("Channels.MarkGone")
		if err := tx.Channels.MarkGone(ctx, "webhook", time.Now()); err != nil {
			t.Errorf("bob marks his channel gone: %v", err)
		}
		if ch, err := tx.Channels.Named(ctx, "webhook"); err != nil || ch.GoneAt == nil || ch.Enabled {
			t.Errorf("bob's channel after gone: %+v, %v", ch, err)
		}
		failed, err := tx.Outbox.FailedIngests(ctx, 100)
		if err != nil || slices.ContainsFunc(failed, func(f FailedIngest) bool { return f.ID == a.ingest }) {
			t.Errorf("failed ingests: bob sees %+v (err %v)", failed, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if after := look(); after != before {
		t.Errorf("alice's rows changed by bob's writes:\nbefore %+v\nafter  %+v", before, after)
	}
}

func second[T any](_ T, err error) error { return err }

func third[T, U any](_ T, _ U, err error) error { return err }
