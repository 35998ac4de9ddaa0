// Package app is Steward's composition root: from one config.Config it builds, once per
// process (once per Lambda cold start), everything a request needs — secrets, database
// pools, the model, the tools, the gate, the agent runner — and hands functions/* and
// cmd/steward a single http.Handler from internal/httpapi. Nothing here runs per request.
package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/stewardhq/steward/internal/secret"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/automation"
	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/delivery"
	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/erasure"
	"github.com/stewardhq/steward/internal/export"
	"github.com/stewardhq/steward/internal/household"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/links"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/chain"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/llm/fixture"
	"github.com/stewardhq/steward/internal/llm/gemini"
	"github.com/stewardhq/steward/internal/llm/openai"
	"github.com/stewardhq/steward/internal/mcpclient"
	"github.com/stewardhq/steward/internal/mcpserver"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/openaiapi"
	"github.com/stewardhq/steward/internal/passkeys"
	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/sessions"
	"github.com/stewardhq/steward/internal/skills"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/sweep"
	"github.com/stewardhq/steward/internal/telegram"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/automationtools"
	"github.com/stewardhq/steward/internal/tools/builtin"
	"github.com/stewardhq/steward/internal/tools/codetools"
	"github.com/stewardhq/steward/internal/tools/doctools"
	"github.com/stewardhq/steward/internal/tools/ledgertools"
	"github.com/stewardhq/steward/internal/tools/mailtools"
	"github.com/stewardhq/steward/internal/tools/skilltools"
	"github.com/stewardhq/steward/internal/tools/webtools"
	"github.com/stewardhq/steward/internal/trace"
	"github.com/stewardhq/steward/internal/trading"
	"github.com/stewardhq/steward/internal/undo"
	"github.com/stewardhq/steward/internal/upload"
	"github.com/stewardhq/steward/internal/voice"
	"github.com/stewardhq/steward/internal/web"
	"github.com/stewardhq/steward/internal/webapp"
	"github.com/stewardhq/steward/internal/work"
)

// App is one process's wiring. Build it with New, serve Handler, Close it at the end.
type App struct {
	// Logger is the process logger (STEWARD_LOG_LEVEL, STEWARD_LOG_FORMAT), writing to stderr.
	Logger zerolog.Logger
	// Store is the application pool (APP_DATABASE_URL, the steward_app role, under RLS).
	Store *store.Store
	// Door is the read-only pool for cross-owner reads: API-key lookup, the scheduler's scans,
	// webhook routing, the memory queue, the deployment's daily cost (DOOR_DATABASE_URL, the
	// steward_door role).
	Door *store.Door
	// Runner runs and resumes turns.
	Runner *agent.Runner
	// Memory recalls and ingests (internal/memory); MemoryWorker drains its outbox.
	Memory       *memory.Service
	Ledger       *ledger.Service
	Documents    *document.Service
	MemoryWorker *memory.Worker
	// Channels is the owner's notification channels (internal/channel).
	Channels *channel.Service
	// Deliverer sends the owners' stored notifications to their channels (internal/delivery).
	Deliverer *delivery.Deliverer
	// Accounts is the owner's mail and calendar accounts (internal/accounts, docs/MAIL.md).
	Accounts *accounts.Service
	// Skills is the owner's skills and the built-ins (internal/skills).
	Skills *skills.Service
	// Trading is the owner's brokerage (internal/trading, docs/TRADING.md); nil when off.
	Trading *trading.Service
	// MCPServers is the owner's remote MCP servers and their tools (internal/mcpclient).
	MCPServers *mcpclient.Service
	// Rules is the owner's standing rules (internal/rules).
	Rules *rules.Service
	// Control is the kill switch, gate mode and budget; Activity the history reads; Undo the
	// undo window; Household the household approvals (internal/control, activity, undo,
	// household).
	Control   *control.Service
	Activity  *activity.Service
	Undo      *undo.Service
	Household *household.Service
	// Erasure deletes, renames and searches conversations and forgets; Export writes the
	// owner's data as one zip (internal/erasure, internal/export, docs/DATA.md).
	Erasure *erasure.Service
	Export  *export.Service
	// Sessions is the web app's sessions and device links; Passkeys its passkeys.
	Sessions *sessions.Service
	Passkeys *passkeys.Service
	// Voice transcribes and speaks (internal/voice, docs/ARCHITECTURE.md §18).
	Voice *voice.Service
	// Links is the one-tap approval links (internal/links).
	Links *links.Service
	// Telegram is the deployment's bot serving linked chats (internal/telegram,
	// STEWARD_TELEGRAM_BOT_TOKEN); nil without a token.
	Telegram *telegram.Service
	// Scheduler runs due jobs and the drains (functions/scheduler, and the ticker of
	// `steward serve`); Webhooks receives signed deliveries.
	Scheduler *autonomy.Scheduler
	Webhooks  *autonomy.Webhooks
	// Automations are the owner's reminders and automations; Due fires them (§10).
	Automations *automation.Service
	Due         *automation.Due
	// Work is the work spine (internal/work): every kind of asynchronous work — webhook
	// runs, continued turns, Telegram updates, suspended turns' notifications — handed in
	// this process under `steward serve`, to the run queue (STEWARD_RUN_QUEUE_URL) on
	// Lambda, and drained on every tick; functions/worker is Work.HandleMessages.
	Work *work.Spine

	// Now is the one clock every expiry and lease is decided by (docs/ARCHITECTURE.md §9):
	// the runner, every service, the deliverer, the autonomy runner and the sweep share it.
	Now steward.Clock

	handler http.Handler
	// holder names this process on its turns' leases (sweep.Process); "" on Lambda.
	holder string
	// ready is the background database check of a Lambda cold start; nil when New checked.
	ready *readiness
}

// New builds the App for cfg: it reads the secrets named by cfg's *_SSM parameters from AWS
// Systems Manager (when set), checks that every model it will call has a price (an error
// matching ErrUnpriced otherwise), connects both database pools — as steward_app and
// steward_door, never as steward_owner, and refusing a role that owns the tables — and
// picks the model: Gemini when a key is set, otherwise the offline demo model, announced by
// a warning in the log.
func New(ctx context.Context, cfg config.Config) (*App, error) {
	return build(ctx, cfg, settings{logOut: os.Stderr})
}

// NewServer is New for a long-lived server (steward serve): its application pool opens its
// connections in the background and prepares the turn loop's statements on each as it opens
// (store.WithWarmPool, docs/ARCHITECTURE.md §6), so no request pays for a new connection.
func NewServer(ctx context.Context, cfg config.Config) (*App, error) {
	return build(ctx, cfg, settings{logOut: os.Stderr, warm: true})
}

// NewLoggingTo is New with the log written to w: a CLI command's stderr.
func NewLoggingTo(ctx context.Context, cfg config.Config, w io.Writer) (*App, error) {
	return build(ctx, cfg, settings{logOut: w})
}

// Seams are what a test may replace in the graph Build makes; the zero value is New's.
type Seams struct {
	// LogOut receives the log; nil means stderr.
	LogOut io.Writer
	// Model answers the turns; nil means the model cfg names (the demo model without a key).
	Model llm.Model
	// Now is the one clock (§9); nil means the system clock.
	Now steward.Clock
	// Lookup resolves host names for the notification channels, their delivery and the MCP
	// servers (§8); nil means the system resolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Build is New with seams: the same graph production runs, with a test's model, clock and
// resolver (internal/apptest builds it on a fresh test database, docs/ARCHITECTURE.md §7).
func Build(ctx context.Context, cfg config.Config, s Seams) (*App, error) {
	if s.LogOut == nil {
		s.LogOut = os.Stderr
	}
	return build(ctx, cfg, settings{logOut: s.LogOut, now: s.Now, model: s.Model, lookup: s.Lookup})
}

// settings are the seams tests use; New uses the real ones.
type settings struct {
	logOut io.Writer
	ssm    ssmSettings
	now    steward.Clock // nil means the system clock
	model  llm.Model     // nil means the model cfg names
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// lazy leaves App.check to the background and the first invocation (Lambda).
	lazy bool
	// warm is a long-lived server (NewServer): the application pool's connections kept open
	// and warm, and the leases of its turns named by this process (sweep.Process), so that
	// the next process on its host fails or recovers them at once if it dies.
	warm bool
}

// openTimeout bounds reading secrets and connecting at start, so a cold start facing an
// unreachable database or SSM endpoint fails with a reason instead of hanging to the timeout.
const openTimeout = 20 * time.Second

// runtimeConfig resolves the configuration's secrets and checks what the runtime needs: both
// pools' URLs and the models' prices.
func runtimeConfig(ctx context.Context, cfg config.Config, s settings) (config.Config, error) {
	cfg, err := resolveSecrets(ctx, cfg, s.ssm)
	if err != nil {
		return cfg, err
	}
	if err := cfg.Require("APP_DATABASE_URL", "DOOR_DATABASE_URL"); err != nil {
		return cfg, err
	}
	return cfg, CheckPrices(cfg)
}

// openPools builds the application's and the door's pools without connecting (a.check
// connects them): the execution mode, generic plans for a long-lived process, a warm pool.
func (a *App) openPools(cfg config.Config, s settings) error {
	appURL, err := store.WithExecMode(cfg.AppDatabaseURL, cfg.DBExecMode)
	if err != nil {
		return fmt.Errorf("APP_DATABASE_URL: %w", err)
	}
	if !s.lazy { // a long-lived process: its connections run enough turns to keep one plan
		if appURL, err = store.WithGenericPlans(appURL); err != nil {
			return fmt.Errorf("APP_DATABASE_URL: %w", err)
		}
	}
	if s.warm {
		if appURL, err = store.WithWarmPool(appURL, cfg.DBMaxConns); err != nil {
			return fmt.Errorf("APP_DATABASE_URL: %w", err)
		}
	}
	doorURL, err := store.WithExecMode(cfg.DoorDatabaseURL, cfg.DBExecMode)
	if err != nil {
		return fmt.Errorf("DOOR_DATABASE_URL: %w", err)
	}
	// The pools are built without connecting; a.check connects them and checks their roles.
	if a.Store, err = store.OpenLazy(appURL, cfg.DBMaxConns); err != nil {
		return fmt.Errorf("open APP_DATABASE_URL: %w", err)
	}
	if a.Door, err = store.OpenDoorLazy(doorURL); err != nil {
		return fmt.Errorf("open DOOR_DATABASE_URL: %w", err)
	}
	if s.warm {
		a.holder = sweep.Process()
		a.Store.HoldAs(a.holder)
	}
	return nil
}

// openDocuments builds the documents service: transcripts of recordings, the bucket.
func (a *App) openDocuments(cfg config.Config, log zerolog.Logger) error {
	a.Documents = &document.Service{Store: a.Store, MaxBytes: cfg.MaxDocumentBytes, Embedder: a.Memory.Embedder, Logger: log}
	// Every reading of this process — uploads, fetched pages, mail — shares these slots (§3).
	doctext.ProcessReaders.Resize(cfg.DocumentReaders, cfg.DocumentReadersPerOwner)
	if a.Voice.CanTranscribe() { // a recording uploaded is a document of its transcript (§18)
		a.Documents.Transcribe = a.Voice.TranscribeText
	}
	if cfg.DocumentBucket != "" {
		bucket, err := awsapi.NewBucket(cfg.AWS, cfg.DocumentBucket, cfg.DocumentEndpoint)
		if err != nil {
			return err
		}
		a.Documents.Objects = bucket
	}
	return nil
}

// newSender builds the sender of every channel, guarded like every address an owner names.
func newSender(cfg config.Config, owners egress.Options) *channel.Sender {
	sender := &channel.Sender{Options: owners, Timeout: 10 * time.Second}
	if cfg.VAPIDPublicKey != "" && cfg.VAPIDPrivateKey != "" {
		// Web Push channels (docs/ARCHITECTURE.md §7): a push carries the links as actions.
		sender.VAPID = &channel.VAPID{PublicKey: cfg.VAPIDPublicKey, PrivateKey: cfg.VAPIDPrivateKey, Subject: cfg.VAPIDSubject}
	}
	return sender
}

// newDeliverer builds the notifier of suspended turns and job outcomes, on every channel.
func newDeliverer(cfg config.Config, a *App, sender *channel.Sender, sealer *secret.Sealer, issuer links.Issuer) *delivery.Deliverer {
	d := &delivery.Deliverer{Store: a.Store, Guard: egress.NewGuard(sender.Options),
		Sealer: sealer, Sender: sender, Channels: a.Door, Expand: issuer.Expand, Actions: issuer.Actions, Now: a.Now}
	if cfg.TelegramWebhookSecret != "" {
		// Telegram notifications carry Approve/Deny buttons when the callback route can
		// receive them (STEWARD_TELEGRAM_WEBHOOK_SECRET set).
		d.Buttons = telegram.Buttons(&issuer)
	}
	return d
}

func build(ctx context.Context, cfg config.Config, s settings) (_ *App, err error) {
	log := NewLogger(cfg, s.logOut)
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	// The runtime never holds the credentials of steward_owner, which owns every table and
	// could switch off row-level security: they stay with migrations and the admin CLI.
	cfg.DatabaseURL = ""
	if cfg, err = runtimeConfig(octx, cfg, s); err != nil {
		return nil, err
	}
	a := &App{Logger: log, Now: s.now}
	if a.Now == nil {
		a.Now = time.Now // the composition root picks the system clock (§9)
	}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if err := a.openPools(cfg, s); err != nil {
		return nil, err
	}
	if a.Work, err = newSpine(cfg, a, log); err != nil {
		return nil, err
	}
	hc, err := modelHTTP(cfg, log)
	if err != nil {
		return nil, err
	}
	if cfg.Replaying() {
		// Replayed calls never reach an API: the key only makes the same clients (Gemini
		// embeddings, web search, the models) as the recording had.
		cfg.GeminiAPIKey, cfg.OpenAIAPIKey = "replay", "replay"
	}
	model := s.model
	if model == nil {
		if model, err = newModel(ctx, cfg, hc, log); err != nil {
			return nil, err
		}
	}
	if a.Memory, err = newMemory(ctx, cfg, hc, a.Store, log); err != nil {
		return nil, err
	}
	if s.lazy {
		// A Lambda cold start connects while it builds the rest and while the runtime
		// fetches the first event; every invocation waits for the check (Ready).
		a.ready = &readiness{check: a.check}
		a.ready.start()
	} else if err := a.check(octx); err != nil {
		return nil, err
	}
	a.Memory.Now = a.Now
	a.Ledger = &ledger.Service{Store: a.Store}
	// One admission for turns and voice calls: kill switches, budgets, the deployment's cap.
	admit := &safety.Control{GlobalCost: a.Door.GlobalCostToday, GlobalCostTTL: 10 * time.Second, Now: a.Now}
	if a.Voice, err = newVoice(ctx, cfg, hc, a.Store, admit, log); err != nil {
		return nil, err
	}
	if err := a.openDocuments(cfg, log); err != nil {
		return nil, err
	}
	a.MemoryWorker = &memory.Worker{Memory: a.Memory, Queue: a.Door}
	// The owner's skills (§16): fetched through the egress guard, ranked with memory's embedder.
	a.Skills = &skills.Service{Store: a.Store, Embedder: a.Memory.Embedder, Documents: a.Documents, Logger: log, Now: a.Now,
		Client: egress.NewClient(egress.Options{Allow: cfg.EgressAllow, Lookup: s.lookup, Timeout: skills.FetchTimeout})}
	sealer, err := secret.NewSealer(cfg.SecretKey)
	if err != nil {
		return nil, err
	}
	a.Accounts = newAccounts(cfg, a.Store, sealer, s.lookup, a.Now)
	a.Trading = newTrading(cfg, a.Store, sealer, s.lookup, a.Now)
	a.Automations = &automation.Service{Store: a.Store, Now: a.Now, Limits: automation.Limits(cfg.Automations)}
	reg, err := newTools(ctx, cfg, hc, a.Documents, a.Accounts, a.Skills, a.Trading, automationPort{a.Automations})
	if err != nil {
		return nil, err
	}
	// The services the runner calls back into are built first and given to agent.New; those
	// that call the runner (the links' and the household's confirms, the autonomous runs)
	// hold it through a narrow port, built after it (docs/ARCHITECTURE.md §7).
	// Every connection to an address the owner named (channels, MCP servers) is guarded alike.
	owners := egress.Options{Allow: cfg.EgressAllow, Lookup: s.lookup}
	mcpOptions := owners
	mcpOptions.Timeout = cfg.MCPTimeout
	// The owner's remote MCP servers: their tools join each of the owner's turns.
	mcpServers := &mcpclient.Service{Store: a.Store, Guard: egress.NewGuard(mcpOptions),
		Timeout: cfg.MCPTimeout, Sealer: sealer, Now: a.Now}
	a.MCPServers = mcpServers
	// Household approvals: a matching call also waits for the members its policy names;
	// the turn is filed for them in the same transaction as the links.
	householdHooks := household.Hooks{Tools: reg, Now: a.Now}
	// One-tap approval links in the notification of a suspended turn.
	issuer := links.Issuer{PublicURL: cfg.PublicURL, Key: cfg.SecretKey, TTL: cfg.LinkTTL, Now: a.Now}
	sender := newSender(cfg, owners)
	a.Deliverer = newDeliverer(cfg, a, sender, sealer, issuer)
	a.noticeDisconnects()
	outcomes := autonomy.Recorder{Store: a.Store, Notifier: a.Deliverer, Now: a.Now}
	tgCallback := &telegram.Callback{Store: a.Store, Secret: cfg.TelegramWebhookSecret, Sealer: sealer, Sender: sender}
	a.Telegram = newTelegram(cfg, a, sender)
	hooks := agent.Hooks{
		OwnerTools: mcpServers.Tools,
		Suspended:  []func(context.Context, agent.Tx, steward.Turn) (bool, error){householdHooks.Suspended, issuer.Suspended},
		Hold:       householdHooks.Hold,
		// A suspended turn's notification goes out at once, whatever started the turn.
		AfterSuspend: a.Work.Handing(delivery.FlushKind),
		// Each face that starts turns hears how a continued one ended: a job run finishes
		// with it, a Telegram chat gets its answer.
		Ended: []func(context.Context, uuid.UUID, steward.View){outcomes.Continued},
	}
	if a.Telegram != nil {
		hooks.Ended = append(hooks.Ended, a.Telegram.Ended)
	}
	if a.Work.Queue != nil {
		// On Lambda a turn about to outlive its invocation continues in the worker.
		hooks.Continue = func(ctx context.Context, ownerID, turnID uuid.UUID) error {
			a.Work.Hand(ctx, agent.ContinueKind, ownerID, turnID.String())
			return nil
		}
	}
	a.Runner = agent.New(agent.Config{
		Model:         model,
		Tools:         reg,
		Store:         a.Store,
		Gate:          &safety.Gate{AllowAuto: cfg.AllowAutoMode},
		Control:       admit,
		Memory:        a.Memory,
		MaxIterations: cfg.MaxIterations,
		ContextTokens: cfg.ContextTokens,
		Rates:         TokenRates(cfg),
		// The fast model summarises what the context budget evicts; nil (no key) drops it.
		Summarizer: a.Memory.Model,
		SuspendTTL: cfg.SuspendTTL,
		Price:      priceCalls(Prices(cfg), model.Name(), log),
		Now:        a.Now,
		// On Lambda a turn about to outlive its invocation continues in the worker
		// (docs/ARCHITECTURE.md §10); the scheduler's drain takes one whose message was lost.
		ContinueMargin: cfg.ContinueMargin,
		ModelTimeout:   cfg.ModelTimeout,
		Lease:          cfg.Lease,
	}, hooks)
	a.Links = &links.Service{Issuer: issuer, Store: a.Store, Door: a.Door, Confirmer: a.Runner}
	a.Household = &household.Service{Store: a.Store, Confirmer: a.Runner, Now: a.Now}
	tgCallback.Links = a.Links
	if a.Telegram != nil {
		// The bot starts turns and makes their buttons through the runner and the links,
		// built after the hooks it listens with.
		a.Telegram.Runner, a.Telegram.Buttons = a.Runner, a.Links
		tgCallback.Messages = a.Telegram
	}
	a.Channels = &channel.Service{Store: a.Store, Sealer: sealer, Sender: sender, Now: a.Now}
	runs := &autonomy.Runner{Recorder: outcomes, Agent: a.Runner}
	a.Webhooks = &autonomy.Webhooks{Runner: runs, Directory: a.Door}
	sweeper := &sweep.Sweeper{Store: a.Store, Owners: a.Door, Now: a.Now, Recover: a.recoverTurn, Process: a.holder, Held: a.Door,
		Retirer: a.Door, Retention: sweep.Retention{Audit: cfg.Retention.Audit, WebhookDeliveries: cfg.Retention.WebhookDeliveries,
			MemoryOutbox: cfg.Retention.MemoryOutbox, JobRuns: cfg.Retention.JobRuns}}
	a.Due = &automation.Due{Service: a.Automations, Door: a.Door, Runner: runs, Notifier: a.Deliverer}
	a.registerWork()
	a.Scheduler = &autonomy.Scheduler{Runner: runs, Directory: a.Door, Webhooks: a.Webhooks, Outside: outside{a.Accounts, a.Trading},
		Due: a.dueTick, Drainers: []autonomy.Drainer{a.Work, a.Deliverer, drainer(a.drainMemory), sweeper}}
	a.Control = &control.Service{Store: a.Store, AllowAutoMode: cfg.AllowAutoMode, Now: a.Now}
	a.Rules = &rules.Service{Store: a.Store, Tools: a.Runner.Tools}
	a.Activity = &activity.Service{Store: a.Store, Now: a.Now}
	a.Undo = &undo.Service{Store: a.Store, Window: cfg.UndoWindow, Now: a.Now}
	a.ownData()
	a.Sessions = &sessions.Service{Store: a.Store, Door: a.Door, Now: a.Now}
	a.Passkeys = &passkeys.Service{Store: a.Store, Door: a.Door, RPID: cfg.PasskeyRPID, Origin: cfg.PasskeyOrigin, Now: a.Now}
	// Unknown keys at sign-in and on the API count together, per client and key prefix.
	keyFailures := &auth.Failures{}
	// One bound on the uploads received at once, for the API and the web app (§12).
	uploads := &upload.Gate{InFlight: cfg.UploadsInFlight, PerOwner: cfg.UploadsPerOwner}
	a.handler = a.gate(httpapi.New(httpapi.Deps{
		Runner: a.Runner,
		Store:  a.Store,
		// A found key is trusted for auth.CacheTTL without a lookup: a revoked key stops
		// working within it (docs/API.md, docs/ARCHITECTURE.md §6).
		Auth:             &auth.Cache[store.Principal]{Lookup: a.Door.Authenticate, Now: a.Now},
		MaxBodyBytes:     cfg.MaxBodyBytes,
		MaxTurnsPerOwner: cfg.MaxTurnsPerOwner,
		Logger:           log,
		Health:           a.Store.Ping,
		AllowAutoMode:    cfg.AllowAutoMode,
		Control:          a.Control,
		Rules:            a.Rules,
		Activity:         a.Activity,
		Memory:           a.Memory,
		Ledger:           a.Ledger,
		Documents:        a.Documents,
		Uploads:          uploads,
		Channels:         a.Channels,
		Automations:      a.Automations,
		Webhooks:         a.Webhooks,
		ProcessWebhook:   a.Work.Handing(autonomy.WebhookKind),
		OpenAI:           &openaiapi.Service{Runner: a.Runner, Conversations: a.Activity},
		MCP:              &mcpserver.Server{Runner: a.Runner},
		MCPServers:       mcpServers,
		Accounts:         a.Accounts,
		Skills:           a.Skills,
		Undo:             a.Undo,
		Household:        a.Household,
		Voice:            a.Voice,
		Erasure:          a.Erasure,
		Export:           a.Export,
		Web: webapp.Routes(webapp.Deps{Runner: a.Runner, Store: a.Store, Door: a.Door, Logger: log,
			Sessions: a.Sessions, Activity: a.Activity, Passkeys: a.Passkeys,
			PublicURL: cfg.PublicURL, Control: a.Control, Rules: a.Rules, Memory: a.Memory, Undo: a.Undo,
			Household: a.Household, Erasure: a.Erasure, Export: a.Export, Documents: a.Documents, Skills: a.Skills, Ledger: a.Ledger, Channels: a.Channels, MCPServers: mcpServers, Accounts: a.Accounts, Voice: a.Voice, Telegram: a.Telegram, Trading: a.Trading, Automations: a.Automations,
			KeyFailures: keyFailures, TrustedProxyHeader: cfg.TrustedProxyHeader, Uploads: uploads}),
		Links:    webapp.LinkPages(a.Links, cfg.TrustedProxyHeader),
		Telegram: tgCallback,

		KeyFailures:        keyFailures,
		TrustedProxyHeader: cfg.TrustedProxyHeader,
	}))
	return a, nil
}

// check connects both pools and checks their roles side by side — as steward_app and
// steward_door, refusing a role that could undo the database's protections — and that the
// embedding column has the embedder's dimension. New runs it before it returns; a Lambda
// cold start runs it in the background and every invocation waits for it (Ready).
func (a *App) check(ctx context.Context) error {
	var g errgroup.Group
	g.Go(func() error {
		if err := checkPool(ctx, "APP_DATABASE_URL", a.Store); err != nil {
			return err
		}
		return memory.CheckDimension(ctx, a.Store, a.Memory.Embedder)
	})
	g.Go(func() error { return checkPool(ctx, "DOOR_DATABASE_URL", a.Door) })
	return g.Wait()
}

// checkPool connects the pool of the variable named env and checks its role.
func checkPool(ctx context.Context, env string, p interface {
	Connect(context.Context) error
	CheckRuntime(context.Context) error
}) error {
	if err := p.Connect(ctx); err != nil {
		return fmt.Errorf("open %s: %w", env, err)
	}
	if err := p.CheckRuntime(ctx); err != nil {
		return fmt.Errorf("%s %w", env, err)
	}
	return nil
}

// newTools builds the registry, one line per toolset (docs/ARCHITECTURE.md §1, "Tools and
// toolsets"): the built-ins, the ledger's, web_fetch through the egress guard, the document
// tools over docs (save_document fetching through the same guard), and web_search on SearXNG
// when STEWARD_SEARCH_URL is set, else on Gemini with Google Search grounding when a key is
// set (without either there is no web_search).
func newTools(ctx context.Context, cfg config.Config, hc *http.Client, docs *document.Service, acc mailtools.Accounts, sk skilltools.Skills, tr *trading.Service, au automationtools.Automations) (*tools.Registry, error) {
	client := egress.NewClient(egress.Options{AllowHTTP: true, Allow: cfg.EgressAllow})
	fetcher := &web.Fetcher{Client: client}
	var search webtools.Searcher
	switch {
	case cfg.SearchURL != "":
		search = &web.SearXNG{Client: client, BaseURL: cfg.SearchURL}
	case cfg.GeminiAPIKey != "":
		g, err := gemini.NewSearcher(ctx, cfg.GeminiAPIKey, cfg.GeminiBaseURL, cfg.FastModel, hc)
		if err != nil {
			return nil, err
		}
		search = g
	}
	return tools.NewRegistry(slices.Concat(
		builtin.Tools(),
		ledgertools.Tools(),
		webtools.Tools(fetcher, search),
		doctools.Tools(docs, fetcher),
		mailtools.Tools(acc, docs),
		skilltools.Tools(sk),
		codetools.Tools(docs),
		shellTools(cfg),
		tradingTools(tr),
		automationtools.Tools(au),
	)...)
}

// newMemory builds recall and ingestion: Gemini embeddings and the fast model for fact
// extraction when a key is set, otherwise the offline embedder and no extraction. The
// embedding dimension is checked against the column by App.check.
func newMemory(ctx context.Context, cfg config.Config, hc *http.Client, st *store.Store, log zerolog.Logger) (*memory.Service, error) {
	var emb memory.Embedder = memory.Offline{}
	var fast llm.Model
	if cfg.GeminiAPIKey != "" {
		g, err := gemini.NewEmbedder(ctx, gemini.EmbedderConfig{APIKey: cfg.GeminiAPIKey, BaseURL: cfg.GeminiBaseURL, HTTPClient: hc, Dimension: memory.Dimension})
		if err != nil {
			return nil, fmt.Errorf("embedder: %w", err)
		}
		emb = g
		if fast, err = gemini.New(ctx, gemini.Config{APIKey: cfg.GeminiAPIKey, BaseURL: cfg.GeminiBaseURL, Model: cfg.FastModel, HTTPClient: hc}); err != nil {
			return nil, fmt.Errorf("fast model: %w", err)
		}
	} else {
		log.Warn().Str("embedder", emb.Name()).Msg("memory uses the offline embedder (no GEMINI_API_KEY); no fact extraction")
	}
	m := memory.New(st, emb, fast)
	m.MaxDistance = cfg.MemoryMaxDistance // 0: memory.DefaultMaxDistance
	m.Price = priceCalls(Prices(cfg), cfg.FastModel, log)
	return m, nil
}

// drainer adapts a function to autonomy.Drainer.
type drainer func(ctx context.Context) error

// Drain runs the function.
func (d drainer) Drain(ctx context.Context) error { return d(ctx) }

// drainMemory ingests what the memory outbox holds (a bounded batch per tick).
func (a *App) drainMemory(ctx context.Context) error {
	_, err := a.MemoryWorker.Drain(ctx, 200)
	return err
}

// RunBackground is the in-process side of a long-lived server (`steward serve`): the memory
// worker, a scheduler tick every minute, and the work spine's Run — webhook runs, Telegram
// updates and notifications handed in this process right after their response, and the
// turns the last process saved continuing as it shut down — all under one errgroup
// (docs/ARCHITECTURE.md §10). When ctx ends it stops taking new work and returns only once
// every one of them has returned, so the pools can be closed after it.
func (a *App) RunBackground(ctx context.Context) error {
	g, gctx := errgroup.WithContext(a.Logger.WithContext(ctx))
	g.Go(func() error { return a.MemoryWorker.Run(gctx) })
	g.Go(func() error { a.tick(gctx); return nil })
	g.Go(func() error { return a.Work.Run(gctx) })
	g.Go(func() error { a.fireDue(gctx); return nil })
	return g.Wait()
}

// tick runs the scheduler now and every minute until ctx ends.
func (a *App) tick(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		if _, err := a.Scheduler.Handle(ctx, autonomy.Event{ScheduledTime: a.Now().Truncate(time.Minute)}); err != nil && ctx.Err() == nil {
			a.Logger.Warn().Str("error", trace.Redact(err.Error())).Msg("scheduler tick failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// newModel returns the chain of STEWARD_MODELS when it is set; else Gemini when an API key is
// configured, else the demo model.
func newModel(ctx context.Context, cfg config.Config, hc *http.Client, log zerolog.Logger) (llm.Model, error) {
	if len(cfg.Models) > 0 {
		return newChain(ctx, cfg, hc, log)
	}
	if cfg.GeminiAPIKey == "" {
		log.Warn().Str("model", demo.Name).
			Msg("GEMINI_API_KEY is not set: answering with the offline demo model, not Gemini")
		return demo.New(), nil
	}
	m, err := gemini.New(ctx, gemini.Config{APIKey: cfg.GeminiAPIKey, BaseURL: cfg.GeminiBaseURL, Model: cfg.Model, HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	ev := log.Info().Str("model", m.Name())
	if cfg.GeminiBaseURL != "" {
		ev = ev.Str("base_url", cfg.GeminiBaseURL)
	}
	ev.Msg("model: gemini")
	return m, nil
}

// modelHTTP is the HTTP client of every model API client (the turn's models, the fast model,
// Gemini embeddings and web search): nil (their default) unless STEWARD_MODEL_FIXTURES
// records or replays their calls (internal/llm/fixture).
func modelHTTP(cfg config.Config, log zerolog.Logger) (*http.Client, error) {
	if cfg.ModelFixtures == "" {
		return nil, nil
	}
	t, err := fixture.Open(cfg.ModelFixtures, cfg.ModelFixturesMode, nil)
	if err != nil {
		return nil, err
	}
	log.Warn().Str("file", cfg.ModelFixtures).Str("mode", cfg.ModelFixturesMode).Msg("model calls go through a fixture file")
	return t.Client(), nil
}

// newChain builds the models of STEWARD_MODELS, first preferred, behind a fallback chain
// (internal/llm/chain); a single model stands alone.
func newChain(ctx context.Context, cfg config.Config, hc *http.Client, log zerolog.Logger) (llm.Model, error) {
	models := make([]llm.Model, 0, len(cfg.Models))
	names := make([]string, 0, len(cfg.Models))
	for _, ref := range cfg.Models {
		var m llm.Model
		var err error
		switch ref.Provider {
		case config.ProviderGemini:
			m, err = gemini.New(ctx, gemini.Config{APIKey: cfg.GeminiAPIKey, BaseURL: cfg.GeminiBaseURL, Model: ref.Name, HTTPClient: hc})
		case config.ProviderOpenAI:
			m, err = openai.New(openai.Config{APIKey: cfg.OpenAIAPIKey, BaseURL: cfg.OpenAIBaseURL, Model: ref.Name, HTTPClient: hc})
		default:
			err = fmt.Errorf("unknown provider %q", ref.Provider)
		}
		if err != nil {
			return nil, fmt.Errorf("STEWARD_MODELS %s:%s: %w", ref.Provider, ref.Name, err)
		}
		models = append(models, m)
		names = append(names, ref.Provider+":"+ref.Name)
	}
	log.Info().Strs("models", names).Msg("model: fallback chain")
	if len(models) == 1 {
		return models[0], nil
	}
	// Each model but the last gets its share of a call's time, so that a hanging one leaves
	// the next time to answer within the turn's bound (agent.Config.ModelTimeout).
	return chain.New(chain.Config{AttemptTimeout: cfg.ModelTimeout / time.Duration(len(models))}, models...)
}

// Handler is every route of the API (internal/httpapi). Lambda mains wrap it in their
// adapter; `steward serve` listens with it.
func (a *App) Handler() http.Handler { return a.handler }

// Close closes both database pools. It is safe on a partly built App.
func (a *App) Close() {
	if a.Door != nil {
		a.Door.Close()
	}
	if a.Store != nil {
		a.Store.Close()
	}
}

// TokenRates are the context budget's estimate rates: STEWARD_TOKEN_RATES over
// agent.DefaultRates (the framing tokens stay the defaults).
func TokenRates(cfg config.Config) agent.TokenRates {
	rates := agent.DefaultRates
	if cfg.TokenRates.Prose > 0 {
		rates.ProseChars, rates.JSONChars = cfg.TokenRates.Prose, cfg.TokenRates.JSON
	}
	return rates
}
