package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	. "github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// ownerTables is every owner-scoped table; TestCatalogLint checks the list is complete.
var ownerTables = []string{"api_keys", "audit_log", "conversations", "documents", "job_runs", "ledger_accounts", "ledger_budgets",
	"ledger_postings", "ledger_transactions", "mcp_servers", "mcp_tools", "memory_chunks", "memory_facts",
	"memory_outbox", "messages", "notification_channels", "notifications", "schedules", "spend_ledger", "spending_caps",
	"standing_rules", "tasks", "tool_calls", "trading_accounts", "trading_orders", "trading_positions", "trading_prices", "turns", "approval_links", "connected_accounts", "web_sessions", "webhook_deliveries", "webhooks",
	"household_members", "household_approvals", "owner_usage", "passkeys", "device_links", "skills", "skill_settings", "voice_calls", "model_calls",
	"telegram_link_codes", "telegram_chats", "telegram_updates", "work", "oauth_states", "oauth_grants", "reminders", "automations"}

// seeded is what seed creates for one owner.
type seeded struct {
	owner Owner
	keyID uuid.UUID
	conv  uuid.UUID
	turn  uuid.UUID
	task  uuid.UUID
	fact  uuid.UUID
	chunk uuid.UUID
	rule  uuid.UUID
	// session is the owner's web session, secret its cookie value.
	session uuid.UUID
	secret  string
	ingest  int64 // the memory outbox item of turn
	vector  []float32
	auto    autonomySeed
	ledger  ledgerSeed
	doc     uuid.UUID
	// linkHash is the hash of the owner's approval link of turn.
	linkHash []byte
	// passkey is the owner's passkey, passkeyCred its credential id; deviceHash the hash of
	// the owner's device link.
	passkey     uuid.UUID
	passkeyCred []byte
	deviceHash  []byte
	// skill is the owner's skill (blocked, overridden), staged for the call "skill-call" of turn.
	skill uuid.UUID
	// order is the owner's paper order (client id "order-call").
	order string
}

// seed gives an owner one row in every owner-scoped table, through the store's own methods.
func seed(t *testing.T, ctx context.Context, s *Store, door *Door, name string) seeded {
	t.Helper()
	owner, _, err := door.CreateOwner(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	sd := seeded{owner: owner, vector: unitVector(3)}
	err = s.WithOwner(ctx, owner.ID, func(tx *Tx) error {
		keys, err := tx.Account.APIKeys(ctx)
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys = %v, %v", keys, err)
		}
		sd.keyID = keys[0].ID
		conv, err := tx.Conversations.Create(ctx, "plans")
		if err != nil {
			return err
		}
		sd.conv = conv.ID
		turn, err := tx.Turns.Create(ctx, conv.ID, steward.TriggerChat, "scripted", time.Now(), time.Hour)
		if err != nil {
			return err
		}
		sd.turn = turn.ID
		if err := tx.Conversations.AppendMessages(ctx, conv.ID, turn.ID, steward.Message{Role: steward.RoleUser, Parts: []steward.Part{{Text: "hello from " + name}}}); err != nil {
			return err
		}
		if err := tx.Journal.RecordCall(ctx, steward.CallRecord{TurnID: turn.ID, CallID: "c1", Tool: "create_task", Kind: steward.KindWrite,
			Args: json.RawMessage(`{"title":"x"}`), ArgsHash: "h", Status: steward.CallPending}); err != nil {
			return err
		}
		exp := time.Now().Add(time.Hour)
		turn.Status, turn.State, turn.ExpiresAt = steward.StatusSuspended, &steward.State{SchemaVersion: steward.StateSchemaVersion}, &exp
		if _, err := tx.Turns.Save(ctx, turn); err != nil {
			return err
		}
		if err := tx.Conversations.EnqueueIngest(ctx, turn.ID, conv.ID); err != nil {
			return err
		}
		rule, err := tx.Rules.Create(ctx, steward.Rule{Tool: "notify", Match: steward.MatchPattern, Effect: "allow", Source: "api"})
		if err != nil {
			return err
		}
		sd.rule = rule.ID
		if err := tx.Journal.AppendEvents(ctx, &turn.ID, []steward.NewEvent{{Seq: 1, Kind: "skill_used", Data: []byte(`{"name":"weekly-review"}`)}}); err != nil {
			return err
		}
		task, err := tx.Tasks.CreateTask(ctx, steward.NewTask{Title: "secret task of " + name})
		if err != nil {
			return err
		}
		sd.task = task.ID
		fact, _, err := tx.Tasks.UpsertFact(ctx, steward.NewFact{Kind: "fact", Content: "shared words", Key: "fact::shared words"})
		if err != nil {
			return err
		}
		sd.fact = fact.ID
		if sd.chunk, err = tx.Memory.AddChunk(ctx, "conversation", conv.ID.String(), OriginOwner, "chunk of "+name, sd.vector); err != nil {
			return err
		}
		if _, err := tx.Safety.SetCap(ctx, steward.Cap{Currency: "EUR", PerActionMinor: 100, WindowMinor: 1000, Window: time.Hour}); err != nil {
			return err
		}
		if err := tx.Safety.RecordSpend(ctx, turn.ID, "c1", "pay", steward.Money{Minor: 40, Currency: "EUR"}); err != nil {
			return err
		}
		if _, err = tx.Tasks.CreateNotification(ctx, "", "", "note for "+name); err != nil {
			return err
		}
		doc, err := tx.Documents.Create(ctx, NewDocument{Name: "secret.txt", ContentType: "text/plain", SHA256: "x",
			Content: []byte("secret document of " + name), Text: "secret document of " + name, Source: DocumentSourceUpload})
		if err != nil {
			return err
		}
		sd.doc = doc.ID
		if err := tx.MCPServers.Approve(ctx, MCPServer{Name: "srv" + name, URL: "https://mcp.example/" + name, Headers: map[string]string{"Authorization": "Bearer " + name}, ApprovedAt: time.Now()},
			[]MCPTool{{Name: "lookup", Hash: "h", Description: "d", InputSchema: []byte(`{"type":"object"}`), ReadOnly: true, Enabled: true}}); err != nil {
			return err
		}
		sess, secret, err := tx.Sessions.Create(ctx, "browser of "+name, time.Now().Add(time.Hour))
		if err != nil {
			return err
		}
		sd.session, sd.secret = sess.ID, secret
		h := sha256.Sum256([]byte("link of " + name))
		sd.linkHash = h[:]
		if err := tx.Links.Create(ctx, steward.NewLink{TurnID: turn.ID, Hash: sd.linkHash, Approve: true,
			Calls: []steward.LinkCall{{CallID: "c1", ArgsHash: "h"}}, SuspendedUntil: exp, ExpiresAt: exp}); err != nil {
			return err
		}
		sd.passkeyCred = []byte("credential of " + name)
		pk, err := tx.Passkeys.Create(ctx, Passkey{CredentialID: sd.passkeyCred, PublicKey: []byte("key of " + name), SignCount: 5, Name: "phone of " + name})
		if err != nil {
			return err
		}
		sd.passkey = pk.ID
		dh := sha256.Sum256([]byte("device link of " + name))
		sd.deviceHash = dh[:]
		if _, err := tx.DeviceLinks.Create(ctx, sd.deviceHash, time.Now().Add(10*time.Minute)); err != nil {
			return err
		}
		if _, err := tx.Accounts.Create(ctx, StoredAccount{Kind: "mail", Settings: []byte(`{"username":"` + name + `"}`), Secret: []byte("sealed password of " + name)}); err != nil {
			return err
		}
		if err := tx.Voice.Record(ctx, VoiceCall{Kind: "transcribe", Model: "whisper-1", DurationMS: 1000, CostMicros: 100}); err != nil {
			return err
		}
		if err := tx.ModelCalls.Record(ctx, "consolidate", "gemini-fast", steward.Usage{InputTokens: 100}, 5); err != nil {
			return err
		}
		if err := seedAutomations(ctx, tx, name); err != nil {
			return err
		}
		if err := seedTelegram(ctx, tx, name, conv.ID); err != nil {
			return err
		}
		if err := seedWork(ctx, tx, name); err != nil {
			return err
		}
		if sd.auto, err = seedAutonomy(ctx, tx, name); err != nil {
			return err
		}
		if sd.skill, err = seedSkill(ctx, tx, name, sd.turn, sd.vector); err != nil {
			return err
		}
		if sd.order, err = seedTrading(ctx, tx, name); err != nil {
			return err
		}
		if err := seedOAuth(ctx, tx, name); err != nil {
			return err
		}
		sd.ledger, err = seedLedger(ctx, tx, name)
		return err
	})
	if err != nil {
		t.Fatalf("seed %s: %v", name, err)
	}
	return sd
}

func unitVector(i int) []float32 {
	v := make([]float32, 768)
	v[i] = 1
	return v
}

// TestIsolation runs the isolation suite twice: as steward_app, where row-level security
// enforces isolation, and as the superuser, which bypasses RLS, so only each query's own
// owner_id filter stands between owners. A query that forgets its filter fails pass two.
func TestIsolation(t *testing.T) {
	t.Parallel()
	t.Cleanup(func() { checkEveryMethodProbed(t) }) // after both passes
	passes := []struct {
		name string
		url  func(testdb.DB) string
		rls  bool
	}{
		{"app role, RLS enforcing", func(d testdb.DB) string { return d.AppURL }, true},
		{"superuser, RLS bypassed", func(d testdb.DB) string { return d.SuperURL }, false},
	}
	for _, pass := range passes {
		t.Run(pass.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := testdb.OpenAs(t, 1, pass.url) // one connection: every transaction reuses it
			s, door := db.Store, db.Door
			a := seed(t, ctx, s, door, "alice")
			b := seed(t, ctx, s, door, "bob")
			seedHousehold(t, ctx, s, door, a, b)
			t.Run("household queries", func(t *testing.T) { probeHousehold(t, ctx, s, a, b) })
			due, err := door.DueIngests(ctx, time.Now(), 10)
			if err != nil || len(due) != 2 {
				t.Fatalf("due ingests = %+v, %v; want one per owner", due, err)
			}
			for _, d := range due {
				if d.OwnerID == a.owner.ID {
					a.ingest = d.ID
				} else {
					b.ingest = d.ID
				}
			}
			t.Run("store queries", func(t *testing.T) { probeStore(t, ctx, s, a, b) })
			t.Run("memory queries", func(t *testing.T) { probeMemory(t, ctx, s, a, b) })
			t.Run("autonomy queries", func(t *testing.T) { probeAutonomy(t, ctx, s, a, b) })
			t.Run("ledger queries", func(t *testing.T) { probeLedger(t, ctx, s, a, b) })
			t.Run("erasure and export queries", func(t *testing.T) { probeErasure(t, ctx, s, a, b) }) // erasure_isolation_test.go
			t.Run("writes naming alice's rows", func(t *testing.T) { probeWrites(t, ctx, s, a, b) })
			t.Run("telegram queries", func(t *testing.T) { probeTelegram(t, ctx, s, a, b) })
			t.Run("work queries", func(t *testing.T) { probeWork(t, ctx, s, a, b) })
			if pass.rls {
				t.Run("row-level security", func(t *testing.T) { probeRLS(t, ctx, s, a, b) })
			}
		})
	}
}

// probeStore: through every store method, bob sees, changes and deletes none of alice's rows.
func probeStore(t *testing.T, ctx context.Context, s *Store, a, b seeded) {
	covers("Account.APIKeys", "Journal.Calls", "Safety.Caps", "Turns.Claim", "Tasks.CompleteTask", "Turns.InConversation", "Conversations.Delete", "Rules.Delete", "Tasks.DeleteTask", "Tasks.ForgetFact", "Conversations.Get", "Tasks.GetTask", "Turns.Get", "Conversations.List", "Tasks.ListFacts", "Tasks.ListNotifications", "Tasks.ListTasks", "Turns.List", "Journal.MarkUnknownCalls", "Conversations.Messages", "Account.Get", "Journal.PendingCalls", "Journal.RecentEvents", "Account.RevokeAPIKey", "Rules.List", "Rules.For", "Turns.Save", "Turns.Finish", "Tasks.SearchFacts", "Safety.SpentInWindow", "Conversations.Touch", "Journal.TurnEvents", "Journal.UpdateCall",
		"Sessions.Create", "Sessions.List", "Sessions.Revoke", "Turns.ClaimContinuing",
		"Links.Notifiable", "Links.Create", "Links.Get", "Links.Use",
		"Documents.Create", "Documents.List", "Documents.Get", "Documents.Content", "Documents.Delete",
		"MCPServers.Approve", "MCPServers.List", "MCPServers.Get", "MCPServers.Tools", "MCPServers.Delete", "MCPServers.MarkChanged", "MCPServers.SetTool",
		"Skills.Create", "Skills.List", "Skills.Get", "Skills.ByName", "Skills.ForCall", "Skills.Activate", "Skills.SetEnabled",
		"Skills.Override", "Skills.Delete", "Skills.DropStaged", "Skills.Nearest", "SkillSettings.List", "SkillSettings.Set", "Skills.Uses")
	none := func(what string, n int, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		} else if n != 1 {
			t.Errorf("%s: bob sees %d rows, want only his own 1", what, n)
		}
	}
	zero := func(what string, n int, err error) {
		t.Helper()
		if err != nil || n != 0 {
			t.Errorf("%s: bob sees %d of alice's rows (err %v), want 0", what, n, err)
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrConflict) && !errors.Is(err, steward.ErrNotFound) {
			t.Errorf("%s on alice's row: err = %v, want not found or conflict", what, err)
		}
	}
	err := s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		keys, err := tx.Account.APIKeys(ctx)
		none("api_keys list", len(keys), err)
		refused("api_keys revoke", tx.Account.RevokeAPIKey(ctx, a.keyID))

		convs, err := tx.Conversations.List(ctx, 100)
		none("conversations list", len(convs), err)
		_, err = tx.Conversations.Get(ctx, a.conv)
		refused("conversations get", err)
		refused("conversations touch", tx.Conversations.Touch(ctx, a.conv, "x"))
		refused("conversations delete", tx.Conversations.Delete(ctx, a.conv))

		msgs, err := tx.Conversations.Messages(ctx, a.conv)
		zero("messages list", len(msgs), err)

		turns, err := tx.Turns.List(ctx, "", 100)
		none("turns list", len(turns), err)
		susp, err := tx.Turns.List(ctx, steward.StatusSuspended, 100)
		none("turns list suspended", len(susp), err)
		_, err = tx.Turns.Get(ctx, a.turn)
		refused("turns get", err)
		convTurns, err := tx.Turns.InConversation(ctx, a.conv, 100)
		zero("turns of alice's conversation", len(convTurns), err)
		_, err = tx.Turns.Claim(ctx, a.turn, time.Now(), time.Minute)
		refused("turns claim", err)
		_, err = tx.Turns.ClaimContinuing(ctx, a.turn, time.Now(), time.Minute)
		refused("turns claim continuing", err)
		_, err = tx.Turns.Save(ctx, steward.Turn{ID: a.turn, Version: 2, Status: steward.StatusCompleted})
		refused("turns save", err)
		_, err = tx.Turns.Finish(ctx, steward.Turn{ID: a.turn, Version: 2, Status: steward.StatusCompleted})
		refused("turns finish", err)
		covers("Turns.Cancel", "Turns.CancelRequested", "Turns.PendingWrites")
		_, err = tx.Turns.Cancel(ctx, a.turn, time.Now())
		refused("turns cancel", err)
		_, err = tx.Turns.CancelRequested(ctx, a.turn)
		refused("turns cancel requested", err)
		_, waiting, err := tx.Turns.PendingWrites(ctx, time.Now())
		none("turns with pending writes", waiting, err)

		calls, err := tx.Journal.Calls(ctx, a.turn)
		zero("tool_calls list", len(calls), err)
		pending, err := tx.Journal.PendingCalls(ctx)
		none("tool_calls pending", len(pending), err)
		refused("tool_calls update", tx.Journal.UpdateCall(ctx, steward.CallUpdate{TurnID: a.turn, CallID: "c1", From: steward.CallPending, To: steward.CallApproved}))
		unknown, err := tx.Journal.MarkUnknownCalls(ctx, a.turn)
		zero("tool_calls mark unknown", len(unknown), err)

		rules, err := tx.Rules.List(ctx)
		none("standing_rules list", len(rules), err)
		rules, err = tx.Rules.For(ctx, "notify")
		none("standing_rules for tool", len(rules), err)
		refused("standing_rules delete", tx.Rules.Delete(ctx, a.rule))

		events, err := tx.Journal.TurnEvents(ctx, a.turn)
		zero("audit_log turn events", len(events), err)
		events, err = tx.Journal.RecentEvents(ctx, 100)
		none("audit_log recent", len(events), err)

		tasks, err := tx.Tasks.ListTasks(ctx, "")
		none("tasks list", len(tasks), err)
		_, err = tx.Tasks.GetTask(ctx, a.task)
		refused("tasks get", err)
		_, err = tx.Tasks.CompleteTask(ctx, a.task)
		refused("tasks complete", err)
		refused("tasks delete", tx.Tasks.DeleteTask(ctx, a.task))
		// The undo window's reverts and journal reads (internal/undo) never reach alice's rows.
		covers("Tasks.ReopenTask", "Tasks.RestoreFact", "Ledger.DeleteTransaction", "Journal.Call", "Journal.MarkUndone", "Journal.NextSeq")
		refused("tasks reopen", tx.Tasks.ReopenTask(ctx, a.task))
		refused("memory_facts restore", tx.Tasks.RestoreFact(ctx, a.fact))
		refused("ledger transaction delete", tx.Ledger.DeleteTransaction(ctx, a.ledger.txn))
		_, err = tx.Journal.Call(ctx, a.turn, "c1")
		refused("tool_calls get", err)
		_, err = tx.Journal.MarkUndone(ctx, a.turn, "c1", time.Time{}, time.Now(), "bob")
		refused("tool_calls undo", err)
		if n, err := tx.Journal.NextSeq(ctx, a.turn); err != nil || (n != 1 && n != 100) {
			t.Errorf("next seq of alice's turn: %d, %v; want 1 (or after bob's own planted event)", n, err)
		}

		facts, err := tx.Tasks.ListFacts(ctx, 100)
		none("memory_facts list", len(facts), err)
		facts, err = tx.Tasks.SearchFacts(ctx, "shared", 100)
		none("memory_facts search", len(facts), err)
		_, err = tx.Tasks.ForgetFact(ctx, a.fact)
		refused("memory_facts forget", err)

		chunks, err := tx.Memory.NearestChunks(ctx, a.vector, 10)
		none("memory_chunks search", len(chunks), err)
		if len(chunks) == 1 && chunks[0].ID == a.chunk {
			t.Errorf("memory_chunks search returned alice's chunk")
		}
		refused("memory_chunks supersede", tx.Memory.SupersedeChunks(ctx, []uuid.UUID{a.chunk}))

		notes, err := tx.Tasks.ListNotifications(ctx, 100)
		none("notifications list", len(notes), err)

		docs, err := tx.Documents.List(ctx, 100)
		none("documents list", len(docs), err)
		_, text, err := tx.Documents.Get(ctx, a.doc, 0, 1000)
		if text != "" {
			t.Errorf("documents get: bob read alice's text %q", text)
		}
		refused("documents get", err)
		_, _, content, _, err := tx.Documents.Content(ctx, a.doc)
		if len(content) != 0 {
			t.Errorf("documents content: bob read alice's bytes %q", content)
		}
		refused("documents content", err)
		refused("documents delete", tx.Documents.Delete(ctx, a.doc))

		srvs, err := tx.MCPServers.List(ctx)
		none("mcp servers list", len(srvs), err)
		mtools, err := tx.MCPServers.Tools(ctx)
		none("mcp tools list", len(mtools), err)
		if _, err := tx.MCPServers.Get(ctx, "srv"+a.owner.Name); !errors.Is(err, ErrNotFound) {
			t.Errorf("mcp server get: bob got alice's server (err %v)", err)
		}
		refused("mcp server delete", tx.MCPServers.Delete(ctx, "srv"+a.owner.Name))
		yes, no := true, false
		_, err = tx.MCPServers.SetTool(ctx, "srv"+a.owner.Name, "lookup", &yes, &no)
		refused("mcp set tool", err)
		if err := tx.MCPServers.MarkChanged(ctx, "srv"+a.owner.Name, "lookup", time.Now()); err != nil {
			t.Errorf("mcp mark changed: %v", err)
		}
		// Approving a server of alice's name stores bob's own; alice's stays hers.
		if err := tx.MCPServers.Approve(ctx, MCPServer{Name: "srv" + a.owner.Name, URL: "https://bob.example/"}, nil); err != nil {
			t.Errorf("mcp approve under alice's name: %v", err)
		}

		probeSkills(t, ctx, tx, a, none, refused)
		probeTrading(t, ctx, tx, a, none, refused)
		probeOAuth(t, ctx, tx, refused)

		caps, err := tx.Safety.Caps(ctx)
		none("spending_caps list", len(caps), err)
		spent, err := tx.Safety.SpentInWindow(ctx, "EUR", time.Hour)
		if err != nil || spent != 40 {
			t.Errorf("spend_ledger window: bob's sum is %d (err %v), want only his own 40", spent, err)
		}

		sessions, err := tx.Sessions.List(ctx)
		none("web_sessions list", len(sessions), err)
		refused("web_sessions revoke", tx.Sessions.Revoke(ctx, a.session))
		// A session bob creates is bob's: alice's list does not grow (checked below).
		if _, _, err := tx.Sessions.Create(ctx, "bob's second browser", time.Now().Add(time.Hour)); err != nil {
			t.Errorf("web_sessions create: %v", err)
		}

		// Alice's passkey and device link: bob can neither see, use nor remove them, nor
		// register her credential as his.
		covers("Passkeys.Create", "Passkeys.List", "Passkeys.Delete", "Passkeys.Use", "DeviceLinks.Create", "DeviceLinks.Get", "DeviceLinks.Use")
		pks, err := tx.Passkeys.List(ctx)
		none("passkeys list", len(pks), err)
		refused("passkeys delete", tx.Passkeys.Delete(ctx, a.passkey))
		refused("passkeys use", tx.Passkeys.Use(ctx, a.passkeyCred, 99, 0, time.Now()))
		_, err = tx.DeviceLinks.Get(ctx, a.deviceHash)
		refused("device_links get", err)
		refused("device_links use", tx.DeviceLinks.Use(ctx, a.deviceHash, time.Now()))
		if _, err := tx.DeviceLinks.Create(ctx, make([]byte, 32), time.Now().Add(time.Minute)); err != nil {
			t.Errorf("device_links create: %v", err)
		}

		// Alice's mail account: bob sees none and cannot remove it; his own is his.
		covers("Accounts.Create", "Accounts.List", "Accounts.Get", "Accounts.Delete")
		accts, err := tx.Accounts.List(ctx)
		if err != nil || len(accts) != 1 || string(accts[0].Settings) != `{"username": "bob"}` {
			t.Errorf("accounts list: %+v (err %v), want only bob's own", accts, err)
		}
		if own, err := tx.Accounts.Get(ctx, "mail"); err != nil || string(own.Secret) != "sealed password of bob" {
			t.Errorf("accounts get: %+v (err %v), want bob's own", own, err)
		}
		if err := tx.Accounts.Delete(ctx, "mail"); err != nil {
			t.Errorf("accounts delete of bob's own: %v", err)
		}
		if accts, err := tx.Accounts.List(ctx); err != nil || len(accts) != 0 {
			t.Errorf("after deleting his own, bob lists %+v (err %v): alice's is not his", accts, err)
		}

		// Alice's voice calls: bob's day counts only his own; his call is recorded as his.
		covers("Voice.Record", "Voice.Today")
		if calls, cost, err := tx.Voice.Today(ctx); err != nil || calls != 1 || cost != 100 {
			t.Errorf("voice calls today: %d calls, %d µ$ (err %v), want bob's one", calls, cost, err)
		}
		if err := tx.Voice.Record(ctx, VoiceCall{Kind: "speak", Model: "tts-1", DurationMS: 500, CostMicros: 7}); err != nil {
			t.Errorf("voice record: %v", err)
		}
		// A model call outside a turn is recorded as bob's (the row's owner is the transaction's).
		covers("ModelCalls.Record")
		if err := tx.ModelCalls.Record(ctx, "extract_facts", "gemini-fast", steward.Usage{InputTokens: 10}, 3); err != nil {
			t.Errorf("model call record: %v", err)
		}

		// Alice's approval link: bob can neither read nor use it, nor make one for her turn.
		_, err = tx.Links.Get(ctx, a.linkHash)
		refused("approval_links get", err)
		refused("approval_links use", tx.Links.Use(ctx, a.linkHash, time.Now()))
		if _, err := tx.Links.Notifiable(ctx); err != nil {
			t.Errorf("approval_links notifiable: %v", err)
		}

		owner, err := tx.Account.Get(ctx)
		if err != nil || owner.ID != b.owner.ID {
			t.Errorf("owner = %v, %v", owner, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A link naming alice's turn is refused (the foreign key binds a link to its owner's turns).
	err = s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		return tx.Links.Create(ctx, steward.NewLink{TurnID: a.turn, Hash: make([]byte, 32), Approve: true,
			Calls: []steward.LinkCall{}, SuspendedUntil: time.Now().Add(time.Hour), ExpiresAt: time.Now().Add(time.Hour)})
	})
	if err == nil {
		t.Errorf("approval_links create for alice's turn: bob made one")
	}
	// Alice's credential id cannot become bob's passkey (credential ids are unique).
	err = s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		_, err := tx.Passkeys.Create(ctx, Passkey{CredentialID: a.passkeyCred, PublicKey: []byte("k"), Name: "stolen"})
		return err
	})
	if !errors.Is(err, ErrConflict) {
		t.Errorf("passkeys create with alice's credential id: err = %v, want a conflict", err)
	}
	// Alice's rows are all still there and unchanged.
	err = s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		task, err := tx.Tasks.GetTask(ctx, a.task)
		if err != nil || task.Status != steward.TaskOpen {
			t.Errorf("alice's task after bob: %+v, %v", task, err)
		}
		turn, err := tx.Turns.Get(ctx, a.turn)
		if err != nil || turn.Status != steward.StatusSuspended {
			t.Errorf("alice's turn after bob: %+v, %v", turn, err)
		}
		keys, err := tx.Account.APIKeys(ctx)
		if err != nil || len(keys) != 1 || keys[0].RevokedAt != nil {
			t.Errorf("alice's key after bob: %+v, %v", keys, err)
		}
		sessions, err := tx.Sessions.List(ctx)
		if err != nil || len(sessions) != 1 || sessions[0].ID != a.session {
			t.Errorf("alice's sessions after bob: %+v, %v", sessions, err)
		}
		if l, err := tx.Links.Get(ctx, a.linkHash); err != nil || l.UsedAt != nil {
			t.Errorf("alice's link after bob: %+v, %v", l, err)
		}
		checkTrading(t, ctx, tx, a)
		checkOAuth(t, ctx, tx)
		if accts, err := tx.Accounts.List(ctx); err != nil || len(accts) != 1 || string(accts[0].Secret) != "sealed password of alice" {
			t.Errorf("alice's accounts after bob: %+v, %v", accts, err)
		}
		if pks, err := tx.Passkeys.List(ctx); err != nil || len(pks) != 1 || pks[0].SignCount != 5 || pks[0].LastUsedAt != nil {
			t.Errorf("alice's passkeys after bob: %+v, %v", pks, err)
		}
		if l, err := tx.DeviceLinks.Get(ctx, a.deviceHash); err != nil || l.UsedAt != nil {
			t.Errorf("alice's device link after bob: %+v, %v", l, err)
		}
		if _, text, err := tx.Documents.Get(ctx, a.doc, 0, 1000); err != nil || text != "secret document of alice" {
			t.Errorf("alice's document after bob: %q, %v", text, err)
		}
		if srv, err := tx.MCPServers.Get(ctx, "srvalice"); err != nil || srv.URL != "https://mcp.example/alice" || srv.Headers["Authorization"] != "Bearer alice" {
			t.Errorf("alice's mcp server after bob: %+v, %v", srv, err)
		}
		if mt, err := tx.MCPServers.Tools(ctx); err != nil || len(mt) != 1 || mt[0].ChangedAt != nil || mt[0].WriteOverride || !mt[0].Enabled {
			t.Errorf("alice's mcp tools after bob: %+v, %v", mt, err)
		}
		if sk, err := tx.Skills.Get(ctx, a.skill); err != nil || !sk.Enabled || sk.OverriddenAt == nil || len(sk.Texts) != 1 {
			t.Errorf("alice's skill after bob: %+v, %v", sk, err)
		}
		if set, err := tx.SkillSettings.List(ctx); err != nil || len(set) != 1 || set["weekly-review"] {
			t.Errorf("alice's skill settings after bob: %v, %v", set, err)
		}
		if calls, cost, err := tx.Voice.Today(ctx); err != nil || calls != 1 || cost != 100 {
			t.Errorf("alice's voice calls after bob: %d, %d µ$, %v", calls, cost, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// probeRLS: with raw SQL and no owner filter, the database itself confines each owner.
func probeRLS(t *testing.T, ctx context.Context, s *Store, a, b seeded) {
	covers("RawExec", "RawRow")
	for _, table := range append([]string{"owners"}, ownerTables...) {
		// As bob: a filterless count sees only bob's own rows.
		err := s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
			var n int
			col := "owner_id"
			if table == "owners" {
				col = "id"
			}
			if err := tx.RawRow(ctx, "SELECT count(*) FROM "+table+" WHERE "+col+" <> $1", b.owner.ID).Scan(&n); err != nil {
				return err
			}
			if n != 0 {
				t.Errorf("%s: bob's filterless query sees %d rows of others", table, n)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		// No owner set, on the pooled connection alice's transactions just used: nothing.
		var n int
		if err := s.RawRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatalf("%s without owner: %v", table, err)
		}
		if n != 0 {
			t.Errorf("%s: a connection with no owner set sees %d rows", table, n)
		}
		if table == "owners" || table == "audit_log" {
			continue
		}
		// WITH CHECK: bob cannot hand his rows to alice.
		err = s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
			return tx.RawExec(ctx, "UPDATE "+table+" SET owner_id = $1", a.owner.ID)
		})
		wantRLSViolation(t, table+" update to alice's owner_id", err)
	}
	// WITH CHECK on insert: bob cannot write rows carrying alice's owner_id.
	inserts := map[string]string{
		"tasks":         "INSERT INTO tasks (owner_id, title) VALUES ($1, 'planted')",
		"audit_log":     "INSERT INTO audit_log (owner_id, kind) VALUES ($1, 'planted')",
		"memory_facts":  "INSERT INTO memory_facts (owner_id, content, key) VALUES ($1, 'planted', 'k')",
		"notifications": "INSERT INTO notifications (owner_id, message) VALUES ($1, 'planted')",
	}
	for table, sql := range inserts {
		err := s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
			return tx.RawExec(ctx, sql, a.owner.ID)
		})
		wantRLSViolation(t, table+" insert with alice's owner_id", err)
	}
	var setting *string
	if err := s.RawRow(ctx, "SELECT current_setting('app.owner_id', true)").Scan(&setting); err != nil {
		t.Fatal(err)
	}
	if setting != nil && *setting != "" {
		t.Errorf("app.owner_id leaked past its transaction: %q", *setting)
	}
}

func wantRLSViolation(t *testing.T, what string, err error) {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Errorf("%s: err = %v, want a row-level security violation (42501)", what, err)
	}
}

// TestIsolationCoversEveryOwnerTable: the isolation suite covers every table with an owner_id
// column, so a new owner-scoped table cannot escape it.
func TestIsolationCoversEveryOwnerTable(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	// The isolation suite covers every table with an owner_id column: a new owner-scoped
	// table cannot escape it.
	rows, err := testdb.Connect(t, d.OwnerURL).Query(context.Background(), `
		SELECT c.relname FROM pg_attribute a
		JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE a.attname = 'owner_id' AND NOT a.attisdropped AND c.relkind IN ('r', 'p') AND n.nspname = 'public'
			AND NOT c.relispartition
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	withOwnerID, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	suite := slices.Sorted(slices.Values(ownerTables))
	if !slices.Equal(suite, withOwnerID) {
		t.Fatalf("isolation_test.go's ownerTables = %v\ntables with owner_id   = %v\nadd the new table to ownerTables and to seed()", suite, withOwnerID)
	}
	// A partition (memory_chunks', migration 00024) is reached through its table, whose policy
	// applies; read directly it would escape that policy, so the app role has no privilege on
	// it, and its own row-level security is forced (the catalog lint checks its policy).
	rows, err = testdb.Connect(t, d.OwnerURL).Query(context.Background(), `
		SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relispartition AND c.relkind = 'r' AND n.nspname = 'public' AND (NOT c.relrowsecurity OR NOT c.relforcerowsecurity
			OR has_table_privilege($1, c.oid, 'SELECT, INSERT, UPDATE, DELETE'))
		ORDER BY 1`, AppRole)
	if err != nil {
		t.Fatal(err)
	}
	open, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(open) > 0 {
		t.Fatalf("partitions readable around their table's policy: %v", open)
	}
	var partitions int
	if err := testdb.Connect(t, d.OwnerURL).QueryRow(context.Background(), `SELECT count(*) FROM pg_inherits
		WHERE inhparent = 'memory_chunks'::regclass`).Scan(&partitions); err != nil || partitions != 16 {
		t.Fatalf("memory_chunks has %d partitions (%v), want 16", partitions, err)
	}
}
