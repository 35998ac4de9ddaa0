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
	"OwnerID":   "returns the transaction's own owner id; no query",
	"LockOwner": "locks the owners row of the transaction's own owner; takes no id",
}

// checkEveryMethodProbed fails the suite when an exported *Tx method (from reflection, so a
// new method counts the day it is written) has no probe and no reason in notProbed.
func checkEveryMethodProbed(t *testing.T) {
	tx := reflect.TypeOf(&Tx{})
	var missing []string
	for i := range tx.NumMethod() {
		name := tx.Method(i).Name
		if _, ok := probed.Load(name); !ok && notProbed[name] == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d store methods are never probed for isolation across owners: %v", len(missing), missing)
	}
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
			msgs, err := tx.Messages(ctx, a.conv)
			v.msgs = n(len(msgs), err)
			turns, err := tx.ConversationTurns(ctx, a.conv, 100)
			v.turns = n(len(turns), err)
			events, err := tx.TurnEvents(ctx, a.turn)
			v.events = n(len(events), err)
			calls, err := tx.Calls(ctx, a.turn)
			v.calls = n(len(calls), err)
			convs, err := tx.ListConversations(ctx, 100)
			v.convs = n(len(convs), err)
			tasks, err := tx.ListTasks(ctx, "all")
			v.tasks = n(len(tasks), err)
			notes, err := tx.ListNotifications(ctx, 100)
			v.notes = n(len(notes), err)
			rules, err := tx.Rules(ctx)
			v.rules = n(len(rules), err)
			schedules, err := tx.Schedules(ctx)
			v.schedules = n(len(schedules), err)
			hooks, err := tx.Webhooks(ctx)
			v.hooks = n(len(hooks), err)
			facts, err := tx.ListFacts(ctx, 100)
			v.facts = n(len(facts), err)
			caps, err := tx.Caps(ctx)
			v.caps = n(len(caps), err)
			chunks, err := tx.ConversationChunks(ctx, a.conv, 100)
			v.chunks = n(len(chunks), err)
			backlog, err := tx.IngestBacklog(ctx)
			v.backlog = int64(n(int(backlog.Pending), err))
			if v.spent, err = tx.SpentInWindow(ctx, "EUR", time.Hour); err != nil {
				t.Fatal(err)
			}
			if v.controls, err = tx.Controls(ctx); err != nil {
				t.Fatal(err)
			}
			if v.mode, err = tx.Mode(ctx); err != nil {
				t.Fatal(err)
			}
			ch, err := tx.Channel(ctx)
			if err != nil {
				t.Fatal(err)
			}
			v.channel = ch.URL
			run, err := tx.Run(ctx, aa.run.ID)
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
		covers("AppendMessages", "CreateTurn", "AppendEvents", "RecordCall", "RecordSpend", "EnqueueIngest", "StateSize",
			"AddChunk", "CreateWebhook", "CreateConversation", "CreateTask", "CreateNotification", "CreateRule",
			"CreateSchedule", "UpsertFact", "RememberFact", "SetCap", "SetChannel", "SetKill", "SetMode",
			"ExpireTurns", "FailStaleTurns", "FailStaleRuns", "FailedIngests", "DeleteChannel", "DeleteSchedule",
			"Cap", "Controls", "Mode", "AdmitState")
		msg := steward.Message{Role: steward.RoleUser, Parts: []steward.Part{{Text: "planted by bob"}}}
		// Writes naming alice's rows: each savepoint keeps a refused write from aborting the rest.
		named := map[string]func(tx *Tx) error{
			"messages append to alice's conversation": func(tx *Tx) error { return tx.AppendMessages(ctx, a.conv, a.turn, msg) },
			"turn in alice's conversation": func(tx *Tx) error {
				_, err := tx.CreateTurn(ctx, a.conv, steward.TriggerChat, "scripted")
				return err
			},
			"call in alice's turn": func(tx *Tx) error {
				return tx.RecordCall(ctx, steward.CallRecord{TurnID: a.turn, CallID: "planted", Tool: "notify", Kind: steward.KindWrite,
					Args: json.RawMessage(`{}`), ArgsHash: "h", Status: steward.CallPending})
			},
			"webhook with alice's hook id": func(tx *Tx) error {
				_, err := tx.CreateWebhook(ctx, aa.webhook.HookID, "github", randomSecret())
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
		mine, err := tx.IngestBacklog(ctx)
		if err != nil {
			return err
		}
		if err := tx.EnqueueIngest(ctx, a.turn, a.conv); err != nil && !errors.Is(err, ErrNotFound) {
			t.Errorf("ingest of alice's turn: %v", err)
		}
		if after, err := tx.IngestBacklog(ctx); err != nil || after != mine {
			t.Errorf("ingest of alice's turn: bob's backlog %+v -> %+v (err %v)", mine, after, err)
		}
		// Writes that reach alice's rows only by id inside bob's data: they stay bob's.
		if err := tx.AppendEvents(ctx, &a.turn, []steward.NewEvent{{Seq: 99, Kind: "planted", Data: []byte(`{}`)}}); err != nil {
			t.Errorf("audit event naming alice's turn: %v", err)
		}
		if err := tx.RecordSpend(ctx, a.turn, "planted", "pay", steward.Money{Minor: 7, Currency: "EUR"}); err != nil {
			t.Errorf("spend naming alice's turn: %v", err)
		}
		if _, err := tx.AddChunk(ctx, "conversation", a.conv.String(), OriginOwner, "planted by bob", b.vector); err != nil {
			t.Errorf("chunk naming alice's conversation: %v", err)
		}
		if n, err := tx.StateSize(ctx, a.turn); err == nil || n != 0 {
			t.Errorf("state size of alice's turn: %d, %v; want not found", n, err)
		}
		// Bob's own rows and settings.
		for what, err := range map[string]error{
			"conversation": second(tx.CreateConversation(ctx, "bob's")),
			"task":         second(tx.CreateTask(ctx, steward.NewTask{Title: "bob's"})),
			"notification": second(tx.CreateNotification(ctx, "", "bob's")),
			"rule":         second(tx.CreateRule(ctx, steward.Rule{Tool: "create_task", Effect: "deny", Source: "api"})),
			"schedule":     second(tx.CreateSchedule(ctx, NewSchedule{Job: "evening", Cron: "0 19 * * *", Timezone: "UTC"})),
			"fact":         third(tx.UpsertFact(ctx, steward.NewFact{Kind: "fact", Content: "bob's words", Key: "fact::bob's words"})),
			"memory fact":  third(tx.RememberFact(ctx, NewMemoryFact{Kind: "fact", Content: "bob remembers", Source: FactSourceAPI})),
			"cap":          second(tx.SetCap(ctx, steward.Cap{Currency: "USD", PerActionMinor: 1, WindowMinor: 2, Window: time.Hour})),
			"kill":         tx.SetKill(ctx, true, "bob stops"),
			"mode":         tx.SetMode(ctx, "deny"),
		} {
			if err != nil {
				t.Errorf("bob's own %s: %v", what, err)
			}
		}
		if c, ok, err := tx.Cap(ctx, "USD"); err != nil || !ok || c.PerActionMinor != 1 {
			t.Errorf("bob's cap: %+v, %v, %v", c, ok, err)
		}
		if c, _, err := tx.AdmitState(ctx); err != nil || !c.OwnerKilled {
			t.Errorf("bob's admit state: %+v, %v", c, err)
		}
		// Sweeps and deletes scoped to bob.
		for what, err := range map[string]error{
			"expire turns":     second(tx.ExpireTurns(ctx)),
			"fail stale turns": second(tx.FailStaleTurns(ctx, 0)),
			"fail stale runs":  second(tx.FailStaleRuns(ctx, 0)),
			"delete channel":   tx.DeleteChannel(ctx),
			"delete schedule":  tx.DeleteSchedule(ctx, "morning-briefing"),
		} {
			if err != nil {
				t.Errorf("bob's %s: %v", what, err)
			}
		}
		// Bob's channel again, for the row-level security probe that follows.
		if ch, err := tx.SetChannel(ctx, "https://example.com/bob-again", ""); err != nil || ch.URL != "https://example.com/bob-again" {
			t.Errorf("bob's channel: %+v, %v", ch, err)
		}
		failed, err := tx.FailedIngests(ctx, 100)
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
