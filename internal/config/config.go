// Package config reads Steward's one configuration struct from the environment, once, at
// start, and validates it. Nothing else in Steward reads environment variables.
package config

import (
	"bytes"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/steward"
)

// Config is every setting Steward has. docs/CONFIGURATION.md lists them.
type Config struct {
	// DatabaseURL connects as steward_owner, the owner of every table: migrations and the
	// admin CLI (DATABASE_URL). The runtime never uses it.
	DatabaseURL string
	// AppDatabaseURL connects as steward_app, under row-level security (APP_DATABASE_URL).
	AppDatabaseURL string
	// DoorDatabaseURL connects as steward_door, the runtime's read-only door across owners
	// (DOOR_DATABASE_URL).
	DoorDatabaseURL string
	// SuperuserDatabaseURL is used only by `steward migrate bootstrap` and tests.
	SuperuserDatabaseURL string
	// DBMaxConns caps the application pool (STEWARD_DB_MAX_CONNS).
	DBMaxConns int32
	// DBExecMode is how the runtime's pools send statements (STEWARD_DB_EXEC_MODE): one of
	// DBExecModes, or "" for pgx's default (cache_statement, or the URL's
	// default_query_exec_mode).
	DBExecMode string

	// Addr is where `steward serve` listens (STEWARD_ADDR).
	Addr string
	// DebugAddr, when set, is where `steward serve` also serves the process's runtime
	// counters (expvar: memstats with allocations, GC, heap) on GET /debug/vars, for the
	// cycle benchmark, and Go's profiles on /debug/pprof/ (STEWARD_DEBUG_ADDR); unset,
	// nothing listens.
	DebugAddr string
	// ServerURL and APIKey are what `steward chat` talks to (STEWARD_URL, STEWARD_API_KEY);
	// the URL defaults to the local server.
	ServerURL string
	APIKey    string
	// LogLevel is zerolog's level name (STEWARD_LOG_LEVEL); LogFormat is json or console.
	LogLevel  string
	LogFormat string

	// GeminiAPIKey enables Gemini; without it the offline demo model answers.
	GeminiAPIKey string
	// GeminiBaseURL overrides the Gemini endpoint (gateways, test fakes).
	GeminiBaseURL string
	// Model is the Gemini model name (STEWARD_MODEL).
	Model string
	// FastModel is the Gemini model for background work: memory fact extraction and
	// conversation summaries (STEWARD_FAST_MODEL).
	FastModel string
	// Models is the fallback chain of turns (STEWARD_MODELS), first preferred; nil keeps the
	// single Gemini model (Model). When set, Model is not used for turns.
	Models []ModelRef
	// OpenAIAPIKey and OpenAIBaseURL reach an OpenAI-compatible chat completions API
	// (OPENAI_API_KEY, OPENAI_BASE_URL: OpenAI when unset, or OpenRouter, Ollama, vLLM).
	OpenAIAPIKey  string
	OpenAIBaseURL string
	// ModelPrices are the operator's prices (STEWARD_MODEL_PRICES), by model name: they
	// extend and override Steward's list prices (internal/trace). With Gemini, a model with
	// no price refuses to start.
	ModelPrices map[string]ModelPrice
	// ModelFixtures is a fixture file of model API calls (STEWARD_MODEL_FIXTURES): with
	// ModelFixturesMode "record" every Gemini and OpenAI-compatible call is sent and saved to
	// it; with "replay" (the default) calls are answered from it, offline, and one that was
	// not recorded fails (internal/llm/fixture). Replay needs no API key.
	ModelFixtures     string
	ModelFixturesMode string

	// Voice (docs/ARCHITECTURE.md §18, docs/VOICE.md). VoiceOpenAIBaseURL, when set, sends
	// transcription and speech to an OpenAI-compatible /audio/transcriptions and
	// /audio/speech there (STEWARD_VOICE_OPENAI_BASE_URL; key STEWARD_VOICE_OPENAI_API_KEY,
	// else OPENAI_API_KEY); else Gemini does both when GEMINI_API_KEY is set.
	// VoiceTranscribeModel (STEWARD_VOICE_TRANSCRIBE_MODEL) is by default the fast model
	// with Gemini and whisper-1 with an OpenAI-compatible server; VoiceSpeechModel
	// (STEWARD_VOICE_SPEECH_MODEL) has no default: speech is off until it names a model.
	// Every voice model must have a price, like any other model.
	VoiceOpenAIBaseURL, VoiceOpenAIAPIKey  string
	VoiceTranscribeModel, VoiceSpeechModel string
	// VoiceMaxBytes and VoiceMaxSeconds bound one recording (STEWARD_VOICE_MAX_BYTES,
	// 20 MB; STEWARD_VOICE_MAX_SECONDS, 600).
	VoiceMaxBytes, VoiceMaxSeconds int

	// Where the runtime's secrets are, read once at cold start on Lambda instead of plain
	// environment values: an SSM parameter name (SecureString) or a Secrets Manager secret's
	// ARN (APP_DATABASE_URL_SSM, DOOR_DATABASE_URL_SSM, GEMINI_API_KEY_SSM,
	// OPENAI_API_KEY_SSM). A database URL's secret may hold JSON (DatabaseSecret). The
	// functions are given none for DATABASE_URL: the runtime never holds steward_owner's
	// credentials.
	AppDatabaseURLParam, DoorDatabaseURLParam, GeminiAPIKeyParam, OpenAIAPIKeyParam string
	// The migrate function's secrets (docs/ARCHITECTURE.md §14), by the same kind of
	// reference: SUPERUSER_DATABASE_URL_SSM, the administrator's URL (a secret of JSON
	// {"username","password"} fills the user and password into SUPERUSER_DATABASE_URL), and
	// DATABASE_URL_SSM, steward_owner's secret.
	SuperuserDatabaseURLParam, DatabaseURLParam string
	// DBProxyHost is host[:port] the runtime roles connect through instead of the
	// administrator's URL's host, RDS Proxy (STEWARD_DB_PROXY_HOST): the migrate function
	// writes it into the URLs it stores for steward_app and steward_door.
	DBProxyHost string
	// PublicURLParam is an SSM parameter holding STEWARD_PUBLIC_URL (STEWARD_PUBLIC_URL_SSM),
	// read at cold start: the template stores the deployed web app's URL there, which no
	// function's environment can name without a circular reference. WithPublicURL applies it.
	PublicURLParam string
	// SecretKeyParam holds STEWARD_SECRET_KEY (STEWARD_SECRET_KEY_SSM), decoded with DecodeKey.
	SecretKeyParam string
	// VAPIDPrivateKeyParam holds STEWARD_VAPID_PRIVATE_KEY (STEWARD_VAPID_PRIVATE_KEY_SSM),
	// checked against VAPIDPublicKey with CheckVAPID.
	VAPIDPrivateKeyParam string
	// TelegramWebhookSecretParam holds STEWARD_TELEGRAM_WEBHOOK_SECRET
	// (STEWARD_TELEGRAM_WEBHOOK_SECRET_SSM), checked with CheckTelegramSecret.
	TelegramWebhookSecretParam string
	// TelegramBotTokenParam holds STEWARD_TELEGRAM_BOT_TOKEN (STEWARD_TELEGRAM_BOT_TOKEN_SSM),
	// checked with CheckTelegramToken.
	TelegramBotTokenParam string
	// AWS is the region and credentials those parameters are read with: the variables the
	// Lambda runtime sets for the function's role (AWS_REGION, AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN).
	AWS AWS

	// AllowAutoMode lets owners use gate mode "auto" (writes without asking); development only.
	AllowAutoMode bool

	// MaxIterations caps model calls per turn before one final tool-free completion.
	MaxIterations int
	// ContextTokens is the context budget: a model request's estimated input tokens, beyond
	// which the oldest turns of a conversation are summarised (internal/agent/context.go).
	ContextTokens int
	// TokenRates are the context budget's characters per token of prose and of JSON
	// (STEWARD_TOKEN_RATES=PROSE:JSON, as `steward eval --calibrate` suggests them); zero
	// keeps agent.DefaultRates.
	TokenRates TokenRates
	// SuspendTTL is how long a suspended turn waits for decisions before it expires.
	SuspendTTL time.Duration
	// MaxBodyBytes caps request bodies.
	MaxBodyBytes int64
	// MaxTurnsPerOwner caps an owner's turns running at once in one process
	// (STEWARD_MAX_TURNS_PER_OWNER); more are refused 429 rate_limited.
	MaxTurnsPerOwner int
	// DailyCostCapMicros is the deployment's daily cost cap across every owner, in millionths
	// of a dollar (STEWARD_DAILY_COST_CAP_USD), which `steward migrate up` and the migrate
	// function store in the database; nil keeps the database's (`steward control cap`).
	DailyCostCapMicros *int64

	// EgressAllow lists the private addresses (IP:port) that web_fetch and notification
	// delivery may reach although the SSRF guard refuses every other private address
	// (STEWARD_EGRESS_ALLOW, comma-separated).
	EgressAllow []netip.AddrPort
	// SecretKey seals notification channels' secrets (tokens, passwords) with AES-GCM
	// (STEWARD_SECRET_KEY: 32 bytes, standard base64; on Lambda from SSM). Without it, a
	// channel with a secret cannot be created, nor one delivered to (fail closed).
	SecretKey []byte
	// MaxDocumentBytes caps an uploaded document (POST /v1/documents), 20 MB by default.
	MaxDocumentBytes int64
	// MemoryMaxDistance is memory recall's cutoff (STEWARD_MEMORY_MAX_DISTANCE): a chunk
	// farther than this cosine distance from the message is not recalled; 0 (unset) keeps
	// memory.DefaultMaxDistance.
	MemoryMaxDistance float64
	// DocumentReaders and DocumentReadersPerOwner bound the documents read at once in this
	// process, in all and for one owner (STEWARD_DOCUMENT_READERS,
	// STEWARD_DOCUMENT_READERS_PER_OWNER); zero means doctext.DefaultReaders.
	DocumentReaders, DocumentReadersPerOwner int
	// UploadsInFlight and UploadsPerOwner bound the document and voice uploads being received
	// at once in this process, in all and for one owner (STEWARD_UPLOADS_IN_FLIGHT, 8;
	// STEWARD_UPLOADS_PER_OWNER, 2).
	UploadsInFlight, UploadsPerOwner int
	// DocumentBucket is the S3 bucket new documents' original bytes are kept in, under
	// owner_id/document_id (STEWARD_DOCUMENT_BUCKET); empty keeps them in PostgreSQL.
	DocumentBucket string
	// DocumentEndpoint is an S3-compatible server's URL for DocumentBucket, addressed
	// path-style (STEWARD_DOCUMENT_ENDPOINT); empty means AWS S3 in AWS_REGION.
	DocumentEndpoint string
	// SearchURL is a SearXNG instance web_search queries instead of Gemini with Google Search
	// grounding (STEWARD_SEARCH_URL).
	SearchURL string
	// Shell turns on run_command under bubblewrap for `steward serve` on Linux
	// (STEWARD_SHELL=on; off by default); ShellRules lets standing rules allow it
	// (STEWARD_SHELL_RULES=on); ShellRoot holds the owners' workspaces (STEWARD_SHELL_ROOT,
	// empty: <temp dir>/steward-workspaces). docs/CODE.md.
	Shell, ShellRules bool
	ShellRoot         string
	// ShellMemoryMB bounds a command's whole sandbox, /tmp and /dev/shm included, through a
	// memory cgroup (STEWARD_SHELL_MEMORY, 512); ShellTmpMB sizes its /tmp and /dev/shm, each
	// (STEWARD_SHELL_TMP, 64); ShellDiskMB is a workspace's quota (STEWARD_SHELL_DISK, 1024);
	// ShellCgroup is where the memory cgroups are made (STEWARD_SHELL_CGROUP: auto, off or a
	// cgroup directory).
	ShellMemoryMB, ShellTmpMB, ShellDiskMB int
	ShellCgroup                            string
	// Trading is the owner's brokerage, off by default (docs/TRADING.md).
	Trading Trading
	// MCPTimeout bounds listing a remote MCP server's tools and each call of one
	// (STEWARD_MCP_TIMEOUT, 20s by default).
	MCPTimeout time.Duration
	// RunQueueURL is the SQS queue an accepted webhook's run is sent to, for the worker
	// function to take within seconds (STEWARD_RUN_QUEUE_URL; on Lambda). Unset, `steward
	// serve` runs it right after the 202 and the scheduler's drain is the fallback
	// (docs/ARCHITECTURE.md §10).
	RunQueueURL string
	// PublicURL is the deployment's public base URL (STEWARD_PUBLIC_URL, e.g.
	// https://steward.example.com): the one-tap approval links of a suspended turn's
	// notification point there. Empty sends no links.
	PublicURL string
	// PasskeyOrigin is the web app's origin as the browser sees it, scheme://host[:port]
	// (STEWARD_PASSKEY_ORIGIN): a passkey ceremony from any other origin is refused. Unset, it is
	// STEWARD_PUBLIC_URL's origin, else http://localhost:PORT for the port of STEWARD_ADDR
	// (`steward serve`; a browser calls only names, never IP addresses, a relying party).
	PasskeyOrigin string
	// PasskeyRPID is the WebAuthn relying party ID passkeys are bound to
	// (STEWARD_PASSKEY_RP_ID): PasskeyOrigin's host or a parent domain of it, never an IP
	// address. Unset, it is PasskeyOrigin's host. Empty when that host is an IP address:
	// passkeys are then off (docs/ARCHITECTURE.md §13).
	PasskeyRPID string
	// TrustedProxyHeader names the header a trusted reverse proxy in front of Steward adds the
	// client's address to (STEWARD_TRUSTED_PROXY_HEADER, e.g. X-Forwarded-For): the
	// limiters (sign-in and API-key failures, approval links) count a client by the
	// right-most address in it, the one the proxy wrote (ratelimit.Client). Empty, the
	// client is the connection's peer — on Lambda, API Gateway's source IP. Set it only
	// behind such a proxy: anyone can send the header.
	TrustedProxyHeader string
	// LinkTTL caps how long an approval link lives (STEWARD_LINK_TTL, 24h by default); a link
	// never outlives its turn's suspension.
	LinkTTL time.Duration
	// TelegramWebhookSecret is the secret_token given to the Bot API's setWebhook for POST
	// /telegram/callback (STEWARD_TELEGRAM_WEBHOOK_SECRET: 1–256 of A-Z, a-z, 0-9, _ and -);
	// a callback without it in X-Telegram-Bot-Api-Secret-Token is refused. Empty: the route
	// answers 404 and Telegram notifications carry no buttons.
	TelegramWebhookSecret string
	// TelegramBotToken is the deployment's Telegram bot (STEWARD_TELEGRAM_BOT_TOKEN, from
	// @BotFather): it serves the chats owners link to their Steward (docs/TELEGRAM.md). Empty:
	// the bot answers only the approval buttons. It needs TelegramWebhookSecret.
	TelegramBotToken string
	// TelegramAPIURL is the Bot API's base URL (STEWARD_TELEGRAM_API_URL, default
	// https://api.telegram.org; a local Bot API server, or a test's fake).
	TelegramAPIURL string
	// VAPIDPublicKey and VAPIDPrivateKey are the deployment's Web Push key pair
	// (STEWARD_VAPID_PUBLIC_KEY: the uncompressed P-256 point, 65 bytes; STEWARD_VAPID_PRIVATE_KEY:
	// its 32-byte scalar, on Lambda from SSM; both unpadded base64url, as `steward vapid-keys`
	// prints them). A browser subscribes with the public key; each push is signed with the
	// private one (RFC 8292). Unset, Settings says push is not configured and no webpush
	// channel can be added.
	VAPIDPublicKey, VAPIDPrivateKey string
	// VAPIDSubject is the contact a push service may write to about this sender
	// (STEWARD_VAPID_SUBJECT: mailto:you@example.com or an https URL; STEWARD_PUBLIC_URL when
	// unset).
	VAPIDSubject string
	// UndoWindow is how long after it ran a database-local write can be undone
	// (STEWARD_UNDO_WINDOW, 10m by default).
	UndoWindow time.Duration
	// Automations are the owner's limits on reminders and automations (docs/AUTOMATIONS.md):
	// STEWARD_AUTOMATIONS_MAX active automations (100), STEWARD_REMINDERS_MAX pending
	// reminders (1000), STEWARD_AUTOMATION_MIN_INTERVAL between two runs (15m) and
	// STEWARD_AUTOMATION_MAX_FAILURES failed runs in a row before one pauses itself (3).
	Automations AutomationLimits
	// ContinueMargin is how much of an invocation's time a turn keeps in hand: with less
	// left before its deadline, the turn stops between steps as continuing and a fresh
	// invocation takes it from the run queue (STEWARD_CONTINUE_MARGIN, 30s; on Lambda only,
	// where invocations have deadlines; docs/ARCHITECTURE.md §2, §10).
	ContinueMargin time.Duration
	// ModelTimeout bounds one model call of a turn, retries and fallbacks included; in a
	// fallback chain each model but the last gets its share (STEWARD_MODEL_TIMEOUT, 2m).
	ModelTimeout time.Duration
	// Lease is how long a running or resuming turn is held by its process: renewed while the
	// turn waits on its model; one whose lease lapsed is taken for dead by the sweep, which
	// fails a running turn and recovers a resuming one (STEWARD_LEASE, 15m: a Lambda
	// function's longest timeout).
	Lease time.Duration
	// ShutdownGrace is how long `steward serve` gives requests in flight on SIGTERM: half of
	// it to finish, then running turns are saved to continue in the next process
	// (STEWARD_SHUTDOWN_GRACE, 10s).
	ShutdownGrace time.Duration
	// Retention is how long the sweep keeps the rows that only grow (docs/CONFIGURATION.md
	// "Retention", docs/ARCHITECTURE.md §21); zero keeps them forever.
	Retention Retention

	// passkeyEnv is what STEWARD_PASSKEY_ORIGIN and STEWARD_PASSKEY_RP_ID said, for
	// WithPublicURL to derive the passkey settings again.
	passkeyEnv [2]string
}

// AWS is a region and the credentials of one role (temporary ones carry a session token),
// and the endpoints that replace a service's regional one: AWS's own variables
// AWS_ENDPOINT_URL_SSM, AWS_ENDPOINT_URL_SECRETS_MANAGER and AWS_ENDPOINT_URL_LAMBDA, keyed
// by the service's signing name (ssm, secretsmanager, lambda) — a LocalStack, or a test's
// fake.
type AWS struct {
	Region, AccessKeyID, SecretAccessKey, SessionToken string
	Endpoints                                          map[string]string
}

// Default Gemini models, when STEWARD_MODEL and STEWARD_FAST_MODEL are unset: the newest GA
// Flash and Flash-Lite models on https://ai.google.dev/gemini-api/docs/models, neither with a
// shutdown date on https://ai.google.dev/gemini-api/docs/deprecations (both read 2026-11-30;
// gemini-2.5-flash, the former default, is at its end of life there).
const (
	DefaultModel     = "gemini-3.8-flash"
	DefaultFastModel = "gemini-3.5-flash-lite"
)

// DBExecModes are the values of STEWARD_DB_EXEC_MODE: pgx's query exec modes that learn the
// parameters' types from the server. Behind RDS Proxy, cache_describe and describe_exec prepare only unnamed
// statements (a named prepared statement pins the connection). pgx's exec and
// simple_protocol modes are not offered: they guess types from Go values and would send
// Steward's JSON ([]byte) as bytea.
var DBExecModes = []string{"cache_statement", "cache_describe", "describe_exec"}

// Providers of STEWARD_MODELS entries.
const (
	ProviderGemini = "gemini"
	ProviderOpenAI = "openai"
)

// ModelRef is one entry of STEWARD_MODELS: provider:model.
type ModelRef struct {
	Provider, Name string
}

// ModelPrice is an operator's price for a model, in US dollars per million tokens.
type ModelPrice struct {
	Input, Output, CachedInput float64
	// AudioInput prices audio input tokens (the fourth field; zero: at Input), §18.
	AudioInput float64
}

// pricesFormat is how STEWARD_MODEL_PRICES is written, for error messages.
const pricesFormat = "must be model=input:output[:cached[:audio_input]], USD per 1M tokens, comma-separated (e.g. gemini-3.8-flash=0.75:3.75:0.075)"

// Load reads the configuration through getenv (os.Getenv in mains, a map in tests). The
// error names every variable that is malformed.
func Load(getenv func(string) string) (Config, error) {
	r := reader{getenv: getenv}
	c := Config{
		DatabaseURL:               r.dbURL("DATABASE_URL"),
		AppDatabaseURL:            r.dbURL("APP_DATABASE_URL"),
		DoorDatabaseURL:           r.dbURL("DOOR_DATABASE_URL"),
		SuperuserDatabaseURL:      r.dbURL("SUPERUSER_DATABASE_URL"),
		DBMaxConns:                int32(r.intIn("STEWARD_DB_MAX_CONNS", 10, 1, 1000)),
		DBExecMode:                r.oneOf("STEWARD_DB_EXEC_MODE", "", append([]string{""}, DBExecModes...)...),
		Addr:                      r.addr("STEWARD_ADDR", "127.0.0.1:8080"),
		DebugAddr:                 r.addrOrEmpty("STEWARD_DEBUG_ADDR"),
		ServerURL:                 r.str("STEWARD_URL", ""),
		APIKey:                    r.str("STEWARD_API_KEY", ""),
		LogLevel:                  r.oneOf("STEWARD_LOG_LEVEL", "info", "trace", "debug", "info", "warn", "error"),
		LogFormat:                 r.oneOf("STEWARD_LOG_FORMAT", "json", "json", "console"),
		GeminiAPIKey:              r.str("GEMINI_API_KEY", ""),
		GeminiBaseURL:             r.str("GEMINI_BASE_URL", ""),
		Model:                     r.str("STEWARD_MODEL", DefaultModel),
		FastModel:                 r.str("STEWARD_FAST_MODEL", DefaultFastModel),
		Models:                    r.models("STEWARD_MODELS"),
		OpenAIAPIKey:              r.str("OPENAI_API_KEY", ""),
		OpenAIBaseURL:             r.str("OPENAI_BASE_URL", ""),
		ModelPrices:               r.prices("STEWARD_MODEL_PRICES"),
		ModelFixtures:             r.str("STEWARD_MODEL_FIXTURES", ""),
		ModelFixturesMode:         r.oneOf("STEWARD_MODEL_FIXTURES_MODE", "replay", "replay", "record"),
		VoiceOpenAIBaseURL:        r.str("STEWARD_VOICE_OPENAI_BASE_URL", ""),
		VoiceOpenAIAPIKey:         r.str("STEWARD_VOICE_OPENAI_API_KEY", ""),
		VoiceTranscribeModel:      r.str("STEWARD_VOICE_TRANSCRIBE_MODEL", ""),
		VoiceSpeechModel:          r.str("STEWARD_VOICE_SPEECH_MODEL", ""),
		VoiceMaxBytes:             r.intIn("STEWARD_VOICE_MAX_BYTES", 20<<20, 1024, 100<<20),
		VoiceMaxSeconds:           r.intIn("STEWARD_VOICE_MAX_SECONDS", 600, 5, 4*3600),
		AppDatabaseURLParam:       r.str("APP_DATABASE_URL_SSM", ""),
		DoorDatabaseURLParam:      r.str("DOOR_DATABASE_URL_SSM", ""),
		GeminiAPIKeyParam:         r.str("GEMINI_API_KEY_SSM", ""),
		OpenAIAPIKeyParam:         r.str("OPENAI_API_KEY_SSM", ""),
		SuperuserDatabaseURLParam: r.str("SUPERUSER_DATABASE_URL_SSM", ""),
		DatabaseURLParam:          r.str("DATABASE_URL_SSM", ""),
		DBProxyHost:               r.str("STEWARD_DB_PROXY_HOST", ""),
		SecretKeyParam:            r.str("STEWARD_SECRET_KEY_SSM", ""),
		AWS:                       r.aws(),
		AllowAutoMode:             r.boolean("STEWARD_ALLOW_AUTO_MODE"),
		MaxIterations:             r.intIn("STEWARD_MAX_ITERATIONS", 8, 1, 50),
		ContextTokens:             r.intIn("STEWARD_CONTEXT_TOKENS", 60000, 4000, 2000000),
		TokenRates:                r.tokenRates("STEWARD_TOKEN_RATES"),
		SuspendTTL:                r.duration("STEWARD_SUSPEND_TTL", 7*24*time.Hour),
		MaxBodyBytes:              int64(r.intIn("STEWARD_MAX_BODY_BYTES", 1<<20, 1024, 64<<20)),
		MaxTurnsPerOwner:          r.intIn("STEWARD_MAX_TURNS_PER_OWNER", 4, 1, 100),
		DailyCostCapMicros:        r.dollars("STEWARD_DAILY_COST_CAP_USD"),
		EgressAllow:               r.addrPorts("STEWARD_EGRESS_ALLOW"),
		SecretKey:                 r.key32("STEWARD_SECRET_KEY"),
		SearchURL:                 r.str("STEWARD_SEARCH_URL", ""),
		Shell:                     r.boolean("STEWARD_SHELL"),
		ShellRules:                r.boolean("STEWARD_SHELL_RULES"),
		ShellRoot:                 r.str("STEWARD_SHELL_ROOT", ""),
		ShellMemoryMB:             r.intIn("STEWARD_SHELL_MEMORY", 512, 64, 1<<20),
		ShellTmpMB:                r.intIn("STEWARD_SHELL_TMP", 64, 1, 1<<20),
		ShellDiskMB:               r.intIn("STEWARD_SHELL_DISK", 1024, 1, 1<<30),
		ShellCgroup:               r.str("STEWARD_SHELL_CGROUP", "auto"),
		MCPTimeout:                r.duration("STEWARD_MCP_TIMEOUT", 20*time.Second),
		RunQueueURL:               r.str("STEWARD_RUN_QUEUE_URL", ""),
		PublicURL:                 strings.TrimRight(r.str("STEWARD_PUBLIC_URL", ""), "/"),
		PublicURLParam:            r.str("STEWARD_PUBLIC_URL_SSM", ""),
		LinkTTL:                   r.duration("STEWARD_LINK_TTL", 24*time.Hour),
		TrustedProxyHeader:        r.headerName("STEWARD_TRUSTED_PROXY_HEADER"),
		UndoWindow:                r.duration("STEWARD_UNDO_WINDOW", 10*time.Minute),
		Automations: AutomationLimits{
			MaxAutomations: r.intIn("STEWARD_AUTOMATIONS_MAX", 100, 1, 10000),
			MaxReminders:   r.intIn("STEWARD_REMINDERS_MAX", 1000, 1, 100000),
			MinInterval:    r.duration("STEWARD_AUTOMATION_MIN_INTERVAL", 15*time.Minute),
			MaxFailures:    r.intIn("STEWARD_AUTOMATION_MAX_FAILURES", 3, 1, 100),
		},
		TelegramWebhookSecret:      r.str("STEWARD_TELEGRAM_WEBHOOK_SECRET", ""),
		TelegramWebhookSecretParam: r.str("STEWARD_TELEGRAM_WEBHOOK_SECRET_SSM", ""),
		TelegramBotToken:           r.str("STEWARD_TELEGRAM_BOT_TOKEN", ""),
		TelegramBotTokenParam:      r.str("STEWARD_TELEGRAM_BOT_TOKEN_SSM", ""),
		TelegramAPIURL:             strings.TrimRight(r.str("STEWARD_TELEGRAM_API_URL", "https://api.telegram.org"), "/"),
		VAPIDPublicKey:             r.str("STEWARD_VAPID_PUBLIC_KEY", ""),
		VAPIDPrivateKey:            r.str("STEWARD_VAPID_PRIVATE_KEY", ""),
		VAPIDPrivateKeyParam:       r.str("STEWARD_VAPID_PRIVATE_KEY_SSM", ""),
		VAPIDSubject:               r.str("STEWARD_VAPID_SUBJECT", ""),
		ContinueMargin:             r.duration("STEWARD_CONTINUE_MARGIN", 30*time.Second),
		Retention: Retention{
			Audit:             r.retention("STEWARD_RETAIN_AUDIT", 365*day, 30*day),
			WebhookDeliveries: r.retention("STEWARD_RETAIN_WEBHOOKS", 30*day, day),
			MemoryOutbox:      r.retention("STEWARD_RETAIN_OUTBOX", 7*day, time.Hour),
			JobRuns:           r.retention("STEWARD_RETAIN_JOB_RUNS", 90*day, day),
		},
		ModelTimeout:            r.duration("STEWARD_MODEL_TIMEOUT", 2*time.Minute),
		ShutdownGrace:           r.duration("STEWARD_SHUTDOWN_GRACE", 10*time.Second),
		Lease:                   r.duration("STEWARD_LEASE", 15*time.Minute),
		MaxDocumentBytes:        int64(r.intIn("STEWARD_MAX_DOCUMENT_BYTES", 20<<20, 1024, 100<<20)),
		MemoryMaxDistance:       r.floatIn("STEWARD_MEMORY_MAX_DISTANCE", 0.05, 2),
		DocumentReaders:         r.intIn("STEWARD_DOCUMENT_READERS", 0, 0, 256),
		DocumentReadersPerOwner: r.intIn("STEWARD_DOCUMENT_READERS_PER_OWNER", 0, 0, 256),
		UploadsInFlight:         r.intIn("STEWARD_UPLOADS_IN_FLIGHT", 8, 1, 1024),
		UploadsPerOwner:         r.intIn("STEWARD_UPLOADS_PER_OWNER", 2, 1, 1024),
		DocumentBucket:          r.str("STEWARD_DOCUMENT_BUCKET", ""),
		DocumentEndpoint:        r.str("STEWARD_DOCUMENT_ENDPOINT", ""),
	}
	if c.ServerURL == "" {
		c.ServerURL = "http://" + c.Addr
	}
	r.httpURL("GEMINI_BASE_URL", c.GeminiBaseURL)
	r.httpURL("STEWARD_SEARCH_URL", c.SearchURL)
	r.httpURL("OPENAI_BASE_URL", c.OpenAIBaseURL)
	r.httpURL("STEWARD_RUN_QUEUE_URL", c.RunQueueURL)
	r.httpURL("STEWARD_PUBLIC_URL", c.PublicURL)
	r.httpURL("STEWARD_DOCUMENT_ENDPOINT", c.DocumentEndpoint)
	c.passkeyEnv = [2]string{r.str("STEWARD_PASSKEY_ORIGIN", ""), r.str("STEWARD_PASSKEY_RP_ID", "")}
	c.PasskeyOrigin, c.PasskeyRPID = r.passkey(c.PublicURL, c.Addr)
	r.telegram(&c)
	r.vapid(&c)
	c.Trading = r.trading()
	if c.DocumentEndpoint != "" && c.DocumentBucket == "" {
		r.fail("STEWARD_DOCUMENT_ENDPOINT", c.DocumentEndpoint, "needs STEWARD_DOCUMENT_BUCKET, the bucket on that server")
	}
	if c.ModelFixturesMode == "record" && c.ModelFixtures == "" {
		r.fail("STEWARD_MODEL_FIXTURES_MODE", c.ModelFixturesMode, "needs STEWARD_MODEL_FIXTURES, the file to record to")
	}
	r.modelKeys(&c)
	return c, errors.Join(r.errs...)
}

// telegram checks the Telegram settings: the secret's and the bot token's shapes, the API's
// URL, and that a bot has the webhook secret its updates arrive with.
func (r *reader) telegram(c *Config) {
	if c.TelegramWebhookSecret != "" {
		if err := CheckTelegramSecret(c.TelegramWebhookSecret); err != nil {
			r.fail("STEWARD_TELEGRAM_WEBHOOK_SECRET", "(hidden)", err.Error())
		}
	}
	r.httpURL("STEWARD_TELEGRAM_API_URL", c.TelegramAPIURL)
	if c.TelegramBotToken != "" {
		if err := CheckTelegramToken(c.TelegramBotToken); err != nil {
			r.fail("STEWARD_TELEGRAM_BOT_TOKEN", "(hidden)", err.Error())
		}
	}
	if (c.TelegramBotToken != "" || c.TelegramBotTokenParam != "") && c.TelegramWebhookSecret == "" && c.TelegramWebhookSecretParam == "" {
		r.fail("STEWARD_TELEGRAM_BOT_TOKEN", "(hidden)", "needs STEWARD_TELEGRAM_WEBHOOK_SECRET too: the bot's updates reach Steward only through its webhook")
	}
}

// modelKeys checks that every model named has its provider's key (or, for OpenAI, a local
// server); replaying needs none.
func (r *reader) modelKeys(c *Config) {
	for _, m := range c.Models {
		switch {
		case c.Replaying():
		case m.Provider == ProviderGemini && c.GeminiAPIKey == "" && c.GeminiAPIKeyParam == "":
			r.fail("STEWARD_MODELS", m.Provider+":"+m.Name, "names a Gemini model but GEMINI_API_KEY is not set")
		case m.Provider == ProviderOpenAI && c.OpenAIAPIKey == "" && c.OpenAIAPIKeyParam == "" && c.OpenAIBaseURL == "":
			r.fail("STEWARD_MODELS", m.Provider+":"+m.Name, "names an OpenAI model but OPENAI_API_KEY is not set (a local server without a key needs OPENAI_BASE_URL)")
		}
	}
}

// Replaying reports whether model calls are answered from a fixture file, offline.
func (c Config) Replaying() bool {
	return c.ModelFixtures != "" && c.ModelFixturesMode == "replay"
}

// httpURL fails when a set URL is not http:// or https://.
func (r *reader) httpURL(name, v string) {
	if v != "" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
		r.fail(name, v, "must start with http:// or https://")
	}
}

// Require fails, naming the variable and how to set it, when one of the named settings is
// empty. Commands call it for what they need.
func (c Config) Require(names ...string) error {
	values := map[string]string{
		"DATABASE_URL": c.DatabaseURL, "APP_DATABASE_URL": c.AppDatabaseURL, "DOOR_DATABASE_URL": c.DoorDatabaseURL,
		"SUPERUSER_DATABASE_URL": c.SuperuserDatabaseURL, "GEMINI_API_KEY": c.GeminiAPIKey,
	}
	var errs []error
	for _, n := range names {
		if values[n] == "" {
			errs = append(errs, fmt.Errorf("%s is not set (for a local database: eval \"$(scripts/devdb env | sed 's/^/export /')\")", n))
		}
	}
	return errors.Join(errs...)
}

// reader collects every problem instead of stopping at the first.
type reader struct {
	getenv func(string) string
	errs   []error
}

func (r *reader) fail(name, value, why string) {
	if len(value) > 40 {
		value = value[:40] + "…"
	}
	r.errs = append(r.errs, fmt.Errorf("%s=%q %s", name, value, why))
}

// key32 reads a 32-byte key in standard base64; empty is no key.
func (r *reader) key32(name string) []byte {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return nil
	}
	k, err := DecodeKey(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s %w", name, err))
		return nil
	}
	return k
}

// CheckTelegramSecret checks STEWARD_TELEGRAM_WEBHOOK_SECRET, from the environment or SSM.
// The error never quotes the value.
func CheckTelegramSecret(v string) error {
	// A loop, not the regexp ^[A-Za-z0-9_-]{1,256}$: compiling that repetition at package
	// init cost every cold start 3,358 allocations and several milliseconds.
	bad := len(v) == 0 || len(v) > 256
	for i := 0; i < len(v) && !bad; i++ {
		c := v[i]
		bad = !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-')
	}
	if bad {
		return errors.New("is 1–256 characters of A-Z, a-z, 0-9, _ and - (Telegram's secret_token)")
	}
	return nil
}

// CheckTelegramToken checks STEWARD_TELEGRAM_BOT_TOKEN, from the environment or SSM: the
// shape @BotFather gives (<digits>:<at least 30 of A-Z, a-z, 0-9, _ and ->). The error never
// quotes the value.
func CheckTelegramToken(v string) error {
	id, rest, ok := strings.Cut(v, ":")
	bad := !ok || id == "" || len(rest) < 30 || len(v) > 256
	for i := 0; i < len(id) && !bad; i++ {
		bad = id[i] < '0' || id[i] > '9'
	}
	if !bad && CheckTelegramSecret(rest) != nil {
		bad = true
	}
	if bad {
		return errors.New("does not have the shape <digits>:<at least 30 letters, digits, - or _> (a bot token from @BotFather)")
	}
	return nil
}

// vapid checks the Web Push settings: a private key (its public key may be left out: it is
// derived), a public key only with its private one (which may come from SSM or Secrets
// Manager, checked there), a pair that belongs together, and a subject to sign with.
func (r *reader) vapid(c *Config) {
	private := c.VAPIDPrivateKey != "" || c.VAPIDPrivateKeyParam != ""
	switch {
	case c.VAPIDPublicKey == "" && !private:
		return
	case !private:
		r.fail("STEWARD_VAPID_PUBLIC_KEY", c.VAPIDPublicKey, "needs STEWARD_VAPID_PRIVATE_KEY, its private key (steward vapid-keys prints a pair)")
		return
	case c.VAPIDPrivateKey != "":
		pub, priv, err := VAPIDKeys(c.VAPIDPublicKey, c.VAPIDPrivateKey)
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("STEWARD_VAPID_PUBLIC_KEY, STEWARD_VAPID_PRIVATE_KEY: %w", err))
		}
		c.VAPIDPublicKey, c.VAPIDPrivateKey = pub, priv
	}
	if c.VAPIDSubject == "" {
		c.VAPIDSubject = c.PublicURL
	}
	if c.VAPIDSubject == "" && c.PublicURLParam != "" {
		return // WithPublicURL checks the subject once the public URL is read
	}
	if err := checkSubject(c.VAPIDSubject, c.PublicURL); err != nil {
		r.errs = append(r.errs, err)
	}
}

// checkSubject checks the VAPID subject, which defaults to the public URL.
func checkSubject(subject, publicURL string) error {
	switch {
	case subject == "":
		return errors.New(`STEWARD_VAPID_SUBJECT="" is needed with the VAPID keys (or STEWARD_PUBLIC_URL): mailto:you@example.com or an https URL, where a push service can reach the sender`)
	case !strings.HasPrefix(subject, "mailto:") && !strings.HasPrefix(subject, "https://"):
		if subject == publicURL {
			return errors.New(`STEWARD_VAPID_SUBJECT="" is needed with the VAPID keys when STEWARD_PUBLIC_URL is not https: mailto:you@example.com or an https URL`)
		}
		return fmt.Errorf("STEWARD_VAPID_SUBJECT=%q must be mailto:you@example.com or an https URL", subject)
	}
	return nil
}

// CheckVAPID checks a Web Push key pair: the public key an uncompressed P-256 point (65
// bytes), the private key its 32-byte scalar, both base64url (padded or not), and the public
// key the private key's. The error never quotes the private key.
func CheckVAPID(public, private string) error {
	if public == "" {
		return errors.New("the public key is missing (steward vapid-keys prints a pair)")
	}
	_, _, err := VAPIDKeys(public, private)
	return err
}

// VAPIDKeys checks a Web Push private key — its 32-byte P-256 scalar in base64url (padded or
// not, as steward vapid-keys prints it) or in hex (64 digits, as a deploy generates it) — and
// returns it in unpadded base64url with its public key: public, which must then belong to
// it, or when public is empty the one derived from it. The error never quotes the private key.
func VAPIDKeys(public, private string) (pub, priv string, err error) {
	private = strings.TrimSpace(private)
	raw, err := hex.DecodeString(private)
	if err != nil || len(private) != 64 {
		raw, err = decodeB64URL(private)
	}
	if err != nil || len(raw) != 32 {
		return "", "", errors.New("the private key is not a P-256 private key in base64url or hex (32 bytes; steward vapid-keys prints a pair)")
	}
	k, err := ecdh.P256().NewPrivateKey(raw)
	if err != nil {
		return "", "", errors.New("the private key is not a P-256 scalar (zero, or not below the group order): generate another")
	}
	derived := k.PublicKey().Bytes()
	if public != "" {
		p, err := decodeB64URL(public)
		if err != nil || len(p) != 65 || p[0] != 4 {
			return "", "", errors.New("the public key is not an uncompressed P-256 point in base64url (65 bytes; steward vapid-keys prints a pair)")
		}
		if !bytes.Equal(p, derived) {
			return "", "", errors.New("the private key does not belong to the public key")
		}
	}
	return base64.RawURLEncoding.EncodeToString(derived), base64.RawURLEncoding.EncodeToString(raw), nil
}

// WithPublicURL is c with the public URL u read after Load (STEWARD_PUBLIC_URL_SSM): the
// passkey origin and relying party and the VAPID subject that follow the public URL follow
// u, and are checked as Load checks them. A public URL set in the environment wins.
func (c Config) WithPublicURL(u string) (Config, error) {
	if c.PublicURL != "" {
		return c, nil
	}
	c.PublicURL = strings.TrimRight(strings.TrimSpace(u), "/")
	r := reader{getenv: func(name string) string {
		switch name {
		case "STEWARD_PASSKEY_ORIGIN":
			return c.passkeyEnv[0]
		case "STEWARD_PASSKEY_RP_ID":
			return c.passkeyEnv[1]
		}
		return ""
	}}
	r.httpURL("STEWARD_PUBLIC_URL", c.PublicURL)
	c.PasskeyOrigin, c.PasskeyRPID = r.passkey(c.PublicURL, c.Addr)
	if c.VAPIDPublicKey != "" || c.VAPIDPrivateKey != "" || c.VAPIDPrivateKeyParam != "" {
		if c.VAPIDSubject == "" {
			c.VAPIDSubject = c.PublicURL
		}
		if err := checkSubject(c.VAPIDSubject, c.PublicURL); err != nil {
			r.errs = append(r.errs, err)
		}
	}
	return c, errors.Join(r.errs...)
}

// DatabaseSecret is the database URL a secret's value gives: the value itself when it is a
// URL; a JSON object's "url"; or, for a JSON object of "username" and "password" only (the
// shape of an RDS master secret, and of a role's secret before a deploy stored its URL),
// plain with that user and password. The error names variable, never a value.
func DatabaseSecret(variable, plain, value string) (string, error) {
	value = strings.TrimSpace(value)
	if !strings.HasPrefix(value, "{") {
		return value, nil
	}
	var s struct{ URL, Username, Password string }
	if err := json.Unmarshal([]byte(value), &s); err != nil {
		return "", fmt.Errorf("the secret of %s is JSON that does not parse: %w", variable, err)
	}
	if s.URL != "" {
		return s.URL, nil
	}
	if s.Username == "" || s.Password == "" {
		return "", fmt.Errorf(`the secret of %s holds neither "url" nor "username" and "password"`, variable)
	}
	if plain == "" {
		return "", fmt.Errorf(`the secret of %s holds a user and password but no "url", and %s (its host and database) is not set: deploy again, and the migrate function stores the URL`, variable, variable)
	}
	u, err := url.Parse(plain)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", fmt.Errorf("%s is not a postgres:// URL to put the secret's user and password in", variable)
	}
	u.User = url.UserPassword(s.Username, s.Password)
	return u.String(), nil
}

// decodeB64URL decodes base64url with or without padding.
func decodeB64URL(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(strings.TrimSpace(s), "="))
}

// DecodeKey decodes STEWARD_SECRET_KEY: 32 bytes in standard base64, or in hex (64
// digits, as a deploy generates it). The error never quotes the value.
func DecodeKey(v string) ([]byte, error) {
	v = strings.TrimSpace(v)
	if k, err := hex.DecodeString(v); err == nil && len(k) == 32 {
		return k, nil
	}
	k, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(k) != 32 {
		return nil, errors.New("must be 32 bytes in standard base64 or hex (e.g. openssl rand -base64 32)")
	}
	return k, nil
}

func (r *reader) str(name, def string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return def
}

// aws reads the region and credentials the Lambda runtime sets for the function's role.
func (r *reader) aws() AWS {
	a := AWS{Region: r.str("AWS_REGION", ""), AccessKeyID: r.str("AWS_ACCESS_KEY_ID", ""),
		SecretAccessKey: r.str("AWS_SECRET_ACCESS_KEY", ""), SessionToken: r.str("AWS_SESSION_TOKEN", "")}
	for service, name := range map[string]string{"ssm": "AWS_ENDPOINT_URL_SSM", "secretsmanager": "AWS_ENDPOINT_URL_SECRETS_MANAGER", "lambda": "AWS_ENDPOINT_URL_LAMBDA"} {
		if v := r.str(name, ""); v != "" {
			r.httpURL(name, v)
			if a.Endpoints == nil {
				a.Endpoints = map[string]string{}
			}
			a.Endpoints[service] = strings.TrimRight(v, "/") + "/"
		}
	}
	return a
}

func (r *reader) dbURL(name string) string {
	v := r.str(name, "")
	if v == "" {
		return ""
	}
	if _, err := pgx.ParseConfig(v); err != nil {
		// Never echo a database URL: it may hold a password.
		r.errs = append(r.errs, fmt.Errorf("%s is malformed: want postgres://user:password@host:port/database", name))
	}
	return v
}

// addrPorts parses comma-separated IP:port entries ([::1]:8443 for IPv6). Host names are
// refused: an allowance is one fixed address, which DNS cannot move.
func (r *reader) addrPorts(name string) []netip.AddrPort {
	var out []netip.AddrPort
	for _, entry := range strings.Split(r.str(name, ""), ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		ap, err := netip.ParseAddrPort(entry)
		if err != nil || ap.Port() == 0 {
			r.fail(name, entry, "must be IP:port entries, comma-separated (e.g. 10.0.0.5:8080,[fd00::1]:443)")
			continue
		}
		out = append(out, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	}
	return out
}

// dollars reads an optional dollar amount (steward.ParseDollars) as millionths of a dollar;
// nil when unset.
func (r *reader) dollars(name string) *int64 {
	v := r.str(name, "")
	if v == "" {
		return nil
	}
	micros, err := steward.ParseDollars(v)
	if err != nil {
		r.fail(name, v, err.Error())
		return nil
	}
	return &micros
}

func (r *reader) intIn(name string, def, lo, hi int) int {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		r.fail(name, v, fmt.Sprintf("must be a whole number from %d to %d", lo, hi))
		return def
	}
	return n
}

// floatIn is a number from lo to hi, or 0 when unset.
func (r *reader) floatIn(name string, lo, hi float64) float64 {
	v := r.str(name, "")
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= lo && f <= hi) {
		r.fail(name, v, fmt.Sprintf("must be a number from %g to %g", lo, hi))
		return 0
	}
	return f
}

// prices parses model=input:output[:cached] entries, comma-separated. Without a cached price,
// cached input costs the full input price: no discount is assumed that was not stated.
func (r *reader) prices(name string) map[string]ModelPrice {
	v := r.str(name, "")
	if v == "" {
		return nil
	}
	out := map[string]ModelPrice{}
	for _, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		model, nums, ok := strings.Cut(entry, "=")
		model = strings.TrimSpace(model)
		f := strings.Split(nums, ":")
		if !ok || model == "" || len(f) < 2 || len(f) > 4 {
			r.fail(name, entry, pricesFormat)
			continue
		}
		var p [4]float64
		bad := false
		for i, s := range f {
			x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
				bad = true
			}
			p[i] = x
		}
		if len(f) == 2 {
			p[2] = p[0]
		}
		if _, dup := out[model]; dup {
			r.fail(name, entry, "prices "+model+" twice")
			continue
		}
		if bad {
			r.fail(name, entry, "has a price that is not a non-negative number; "+pricesFormat)
			continue
		}
		out[model] = ModelPrice{Input: p[0], Output: p[1], CachedInput: p[2], AudioInput: p[3]}
	}
	return out
}

// TokenRates are characters per token of prose and of JSON.
type TokenRates struct {
	Prose, JSON float64
}

// tokenRates reads PROSE:JSON, two characters-per-token rates from 1 to 10; empty is none.
func (r *reader) tokenRates(name string) TokenRates {
	v := r.str(name, "")
	if v == "" {
		return TokenRates{}
	}
	p, j, ok := strings.Cut(v, ":")
	prose, err1 := strconv.ParseFloat(strings.TrimSpace(p), 64)
	json, err2 := strconv.ParseFloat(strings.TrimSpace(j), 64)
	if !ok || err1 != nil || err2 != nil || !(prose >= 1 && prose <= 10) || !(json >= 1 && json <= 10) {
		r.fail(name, v, "is not PROSE:JSON, two characters-per-token rates from 1 to 10 (e.g. 4:2.5)")
		return TokenRates{}
	}
	return TokenRates{Prose: prose, JSON: json}
}

// models parses provider:model entries, comma-separated, e.g.
// gemini:gemini-3.8-flash,openai:gpt-5-mini. A model name may itself hold colons and slashes
// (an Ollama tag, an OpenRouter route): only the first colon separates the provider.
func (r *reader) models(name string) []ModelRef {
	v := r.str(name, "")
	if v == "" {
		return nil
	}
	var out []ModelRef
	seen := map[ModelRef]bool{}
	for _, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		provider, model, ok := strings.Cut(entry, ":")
		ref := ModelRef{Provider: strings.ToLower(strings.TrimSpace(provider)), Name: strings.TrimSpace(model)}
		switch {
		case !ok || ref.Name == "" || (ref.Provider != ProviderGemini && ref.Provider != ProviderOpenAI):
			r.fail(name, entry, "must be provider:model entries, comma-separated, with provider gemini or openai (e.g. gemini:gemini-3.8-flash,openai:gpt-5-mini)")
			continue
		case seen[ref]:
			r.fail(name, entry, "lists the same model twice")
			continue
		}
		seen[ref] = true
		out = append(out, ref)
	}
	return out
}

func (r *reader) boolean(name string) bool {
	switch v := strings.ToLower(r.str(name, "false")); v {
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	default:
		r.fail(name, v, "must be on or off (true or false)")
		return false
	}
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.fail(name, v, "must be a positive duration such as 168h")
		return def
	}
	return d
}

// Retention is how long the sweep keeps each kind of row that only grows; zero: forever.
type Retention struct {
	Audit             time.Duration // STEWARD_RETAIN_AUDIT: audit events (365d; at least 30d)
	WebhookDeliveries time.Duration // STEWARD_RETAIN_WEBHOOKS: webhook deliveries and their bodies (30d)
	MemoryOutbox      time.Duration // STEWARD_RETAIN_OUTBOX: memory outbox items done or failed (7d)
	JobRuns           time.Duration // STEWARD_RETAIN_JOB_RUNS: finished job runs (90d)
}

const day = 24 * time.Hour

// retention reads a retention: a number of days (400d), a Go duration (720h), or off (or 0)
// to keep forever; less than least is refused.
func (r *reader) retention(name string, def, least time.Duration) time.Duration {
	v := strings.ToLower(r.str(name, ""))
	switch v {
	case "":
		return def
	case "off", "0":
		return 0
	}
	d, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * day
		if n > 36500 {
			err = strconv.ErrRange
		}
	}
	if err != nil || d < least {
		r.fail(name, v, fmt.Sprintf("must be a number of days such as 90d (at least %s) or off", formatDays(least)))
		return def
	}
	return d
}

// formatDays prints d in days when it is whole days, else as a duration.
func formatDays(d time.Duration) string {
	if d%day == 0 {
		return strconv.Itoa(int(d/day)) + "d"
	}
	return d.String()
}

func (r *reader) oneOf(name, def string, allowed ...string) string {
	v := strings.ToLower(r.str(name, def))
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	r.fail(name, v, "must be one of "+strings.Join(allowed, ", "))
	return def
}

// headerName reads an optional HTTP header name (letters, digits and -), canonicalized.
func (r *reader) headerName(name string) string {
	v := r.str(name, "")
	for _, c := range []byte(v) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			r.fail(name, v, "must be an HTTP header name such as X-Forwarded-For")
			return ""
		}
	}
	return textproto.CanonicalMIMEHeaderKey(v)
}

// defaultOrigin is the passkey origin when none is set: the public URL, else the address
// served on (an IP address or no host is localhost); "" when addr is not host:port.
func defaultOrigin(publicURL, addr string) string {
	if publicURL != "" {
		return publicURL
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if host == "" || net.ParseIP(host) != nil {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// parseOrigin parses an http(s) origin: a scheme and a host, no path, query or user.
func parseOrigin(origin string) (*url.URL, bool) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, false
	}
	return u, true
}

// passkey reads STEWARD_PASSKEY_ORIGIN and STEWARD_PASSKEY_RP_ID, deriving what is unset
// from the public URL or, without one, from the listening address (Config.PasskeyOrigin).
func (r *reader) passkey(publicURL, addr string) (origin, rpID string) {
	origin = strings.TrimRight(r.str("STEWARD_PASSKEY_ORIGIN", ""), "/")
	explicit := origin != ""
	if !explicit {
		origin = defaultOrigin(publicURL, addr)
	}
	u, ok := parseOrigin(origin)
	if !ok {
		if explicit {
			r.fail("STEWARD_PASSKEY_ORIGIN", origin, "must be an origin such as https://steward.example.com (scheme, host, optional port; no path)")
		}
		return "", ""
	}
	origin = u.Scheme + "://" + u.Host
	host := strings.ToLower(u.Hostname())
	rpID = strings.ToLower(r.str("STEWARD_PASSKEY_RP_ID", ""))
	switch {
	case rpID == "" && net.ParseIP(host) != nil:
		if explicit {
			r.fail("STEWARD_PASSKEY_ORIGIN", origin, "has an IP address for its host; passkeys need a name (set STEWARD_PASSKEY_RP_ID, or use a name such as localhost)")
		}
		return origin, ""
	case rpID == "":
		rpID = host
	case net.ParseIP(rpID) != nil:
		r.fail("STEWARD_PASSKEY_RP_ID", rpID, "must be a domain name, not an IP address")
		return origin, ""
	case host != rpID && !strings.HasSuffix(host, "."+rpID):
		r.fail("STEWARD_PASSKEY_RP_ID", rpID, "must be the passkey origin's host ("+host+") or a parent domain of it")
		return origin, ""
	}
	return origin, rpID
}

// addrOrEmpty is an optional host:port: empty when unset.
func (r *reader) addrOrEmpty(name string) string {
	if r.str(name, "") == "" {
		return ""
	}
	return r.addr(name, "")
}

func (r *reader) addr(name, def string) string {
	v := r.str(name, def)
	if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
		r.fail(name, v, "must be host:port, e.g. 127.0.0.1:8080")
		return def
	}
	return v
}

// Trading is the brokerage's settings (docs/TRADING.md, docs/ARCHITECTURE.md §20).
type Trading struct {
	// Mode is off (the default: no trading tool is registered), paper or alpaca
	// (STEWARD_TRADING).
	Mode string
	// OrderCap and DailyCap are the notional caps in whole dollars (STEWARD_TRADING_ORDER_CAP,
	// 1000; STEWARD_TRADING_DAILY_CAP, 5000); an owner's own may only be lower.
	OrderCap, DailyCap int
	// StartingCash is a new paper account's cash in dollars (STEWARD_TRADING_PAPER_CASH, 100000).
	StartingCash int
	// AlpacaURL is the Trading API's base URL (STEWARD_ALPACA_URL, Alpaca's paper API by
	// default; https://api.alpaca.markets is live). AlpacaDataURL is the market data API
	// quotes come from (STEWARD_ALPACA_DATA_URL; unset: the owner's price table).
	AlpacaURL, AlpacaDataURL string
	// Timeout bounds each call to Alpaca (STEWARD_ALPACA_TIMEOUT, 10s).
	Timeout time.Duration
}

func (r *reader) trading() Trading {
	t := Trading{
		Mode:          r.oneOf("STEWARD_TRADING", "off", "off", "paper", "alpaca"),
		OrderCap:      r.intIn("STEWARD_TRADING_ORDER_CAP", 1000, 0, 10_000_000),
		DailyCap:      r.intIn("STEWARD_TRADING_DAILY_CAP", 5000, 0, 10_000_000),
		StartingCash:  r.intIn("STEWARD_TRADING_PAPER_CASH", 100_000, 0, 10_000_000),
		AlpacaURL:     strings.TrimRight(r.str("STEWARD_ALPACA_URL", "https://paper-api.alpaca.markets"), "/"),
		AlpacaDataURL: strings.TrimRight(r.str("STEWARD_ALPACA_DATA_URL", ""), "/"),
		Timeout:       r.duration("STEWARD_ALPACA_TIMEOUT", 10*time.Second),
	}
	r.httpURL("STEWARD_ALPACA_URL", t.AlpacaURL)
	r.httpURL("STEWARD_ALPACA_DATA_URL", t.AlpacaDataURL)
	return t
}

// AutomationLimits are the owner's limits on reminders and automations (Config.Automations).
type AutomationLimits struct {
	MaxAutomations, MaxReminders int
	MinInterval                  time.Duration
	MaxFailures                  int
}
