// Package httpapi is Steward's HTTP API (docs/API.md): one chi router with every route, the
// middleware around them (request id, logging, panic recovery, body limit, API-key auth),
// the mapping of error codes to HTTP statuses, and server-sent events for running turns.
// Lambda functions and `steward serve` all serve the handler New returns.
//
// Status rules, applied everywhere:
//   - A body that is not a well-formed request (empty, not JSON, not one JSON object, an
//     unknown field, a wrong JSON type) is 400 invalid; a well-formed body with unacceptable
//     values (an empty message, a missing or unknown decision, a conversation_id that is not
//     a UUID) is 422 invalid.
//   - A POST body not declared Content-Type: application/json is 415 invalid; a body over
//     Deps.MaxBodyBytes is 413 too_large.
//   - An id in a path that is not a UUID names nothing: 404 not_found, exactly like an
//     unknown id or another owner's id (never 403).
//   - Missing, malformed, unknown or revoked API keys are 401 unauthorized with a
//     WWW-Authenticate: Bearer challenge; past 10 unknown keys a minute from a client (or
//     with one key prefix) 429 rate_limited with Retry-After (auth.Failures).
//   - Everything else follows steward.HTTPStatusOf; internal errors are 500 with a generic message and
//     are logged with their detail under the request id.
package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/automation"
	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/erasure"
	"github.com/stewardhq/steward/internal/export"
	"github.com/stewardhq/steward/internal/household"
	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/mcpclient"
	"github.com/stewardhq/steward/internal/mcpserver"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/openaiapi"
	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/skills"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/telegram"
	"github.com/stewardhq/steward/internal/undo"
	"github.com/stewardhq/steward/internal/upload"
	"github.com/stewardhq/steward/internal/voice"
)

// Authenticator finds the owner of an API key; an unknown or revoked key is an error
// matching store.ErrNotFound. *store.Door implements it.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (store.Principal, error)
}

var _ Authenticator = (*store.Door)(nil)

// DefaultMaxBodyBytes is the request body limit when Deps.MaxBodyBytes is zero.
const DefaultMaxBodyBytes = 1 << 20

// Deps is what the API is built from.
type Deps struct {
	// Runner starts, resumes and reads turns.
	Runner *agent.Runner
	// Store backs GET /healthz when Health is nil.
	Store *store.Store
	// The services below are built by internal/app, the one composition root
	// (docs/ARCHITECTURE.md §7); the API builds none. A nil one answers 404 on its routes.
	//
	// Control serves /v1/control.
	Control *control.Service
	// Rules serves /v1/rules.
	Rules *rules.Service
	// Activity serves the history reads (conversations, approvals, activity, events,
	// notifications and their deliveries).
	Activity *activity.Service
	// Auth turns API keys into owners.
	Auth Authenticator
	// MaxBodyBytes caps request bodies (413 above it); zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Logger is the base logger; each request logs through a child carrying its request id.
	Logger zerolog.Logger
	// Health checks the database for GET /healthz; nil means Store.Ping.
	Health func(ctx context.Context) error
	// AllowAutoMode lets owners choose gate mode auto (STEWARD_ALLOW_AUTO_MODE).
	AllowAutoMode bool
	// Memory serves /v1/memory; nil answers 404 there.
	Memory *memory.Service
	// Documents serves /v1/documents (its MaxBytes caps an upload's body instead of
	// MaxBodyBytes); nil answers 404 there.
	Documents *document.Service
	// Uploads bounds the document and voice uploads received at once, per owner and in all
	// (one Gate for the API and the web app); nil means a Gate of the defaults.
	Uploads *upload.Gate
	// Channels serves /v1/channels (notification channels); nil answers 404 there.
	Channels *channel.Service
	// Automations serves /v1/reminders, /v1/automations and /v1/timezone; nil answers 404
	// there.
	Automations *automation.Service
	// Ledger imports bank statements and reports (/v1/ledger/import, /v1/ledger/report); nil answers 404 there.
	Ledger *ledger.Service
	// Webhooks receives POST /webhooks/{hook_id}; nil answers 404 there.
	Webhooks *autonomy.Webhooks
	// ProcessWebhook hands an accepted delivery's run on after the 202 was written (under
	// `steward serve`, a goroutine runs it; on Lambda, it is sent to the run queue); ctx is
	// the request's, carrying its logger. nil leaves it to the scheduler tick's drain.
	ProcessWebhook func(ctx context.Context, ownerID, runID uuid.UUID)
	// StreamWriteTimeout bounds each write of an event stream: a client that does not take
	// an event within it loses its stream (the turn goes on); zero means
	// DefaultStreamWriteTimeout.
	StreamWriteTimeout time.Duration
	// MaxTurnsPerOwner caps an owner's turns running at once in this process (429
	// rate_limited beyond it); zero means DefaultMaxTurnsPerOwner.
	MaxTurnsPerOwner int
	// Web adds the web app's pages (internal/webapp) to the router; nil serves none.
	Web func(chi.Router)
	// Links serves GET and POST /a/{token}, the one-tap approval links' pages
	// (webapp.LinkPages over internal/links); nil answers 404 there.
	Links http.Handler
	// Telegram decides the approval buttons of Telegram notifications: POST
	// /telegram/callback (the Bot API's webhook, verified by its secret-token header); nil
	// answers 404 there.
	Telegram *telegram.Callback
	// OpenAI serves the OpenAI-compatible API (POST /v1/chat/completions, GET /v1/models,
	// internal/openaiapi); nil answers 404 there.
	OpenAI *openaiapi.Service
	// MCP serves POST /mcp, the MCP face (internal/mcpserver); nil answers 404 there.
	MCP *mcpserver.Server
	// MCPServers serves /v1/mcp/servers, the owner's remote MCP servers (internal/mcpclient);
	// nil answers 404 there.
	MCPServers *mcpclient.Service
	// Accounts serves /v1/accounts, the owner's mail and calendar accounts (internal/accounts).
	Accounts *accounts.Service
	// Skills serves /v1/skills, the owner's skills (internal/skills); nil answers 404 there.
	Skills *skills.Service
	// Erasure serves a conversation's rename, search and delete and POST /v1/forget; Export
	// serves GET /v1/export (docs/DATA.md); nil answers 404 there.
	Erasure *erasure.Service
	Export  *export.Service
	// Undo serves POST /v1/turns/{id}/calls/{call_id}/undo (the undo window); nil answers
	// 404 there.
	Undo *undo.Service
	// Household serves /v1/household/approvals (household approvals); nil answers 404 there.
	Household *household.Service
	// Voice serves /v1/voice/transcribe and /v1/voice/speak, and a voice message or speak
	// on POST /v1/chat (docs/ARCHITECTURE.md §18); nil answers 404 there.
	Voice *voice.Service
	// KeyFailures counts unknown API keys per client and key prefix, and slows them down
	// (shared with the web app's sign-in); nil builds one for this router.
	KeyFailures *auth.Failures
	// TrustedProxyHeader names the header the trusted proxy puts the client's address in
	// (STEWARD_TRUSTED_PROXY_HEADER, ratelimit.Client); empty means RemoteAddr is the client.
	TrustedProxyHeader string
}

// api holds the handlers' dependencies.
type api struct {
	d     Deps
	turns *turnLimit
}

// New returns the router with every route of the API.
func New(d Deps) http.Handler {
	if d.StreamWriteTimeout <= 0 {
		d.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	if d.MaxTurnsPerOwner <= 0 {
		d.MaxTurnsPerOwner = DefaultMaxTurnsPerOwner
	}
	if d.MaxBodyBytes <= 0 {
		d.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if d.Health == nil && d.Store != nil {
		d.Health = d.Store.Ping
	}
	if d.KeyFailures == nil {
		d.KeyFailures = &auth.Failures{}
	}
	if d.Uploads == nil {
		d.Uploads = &upload.Gate{}
	}
	a := &api{d: d, turns: &turnLimit{max: d.MaxTurnsPerOwner}}

	r := chi.NewRouter()
	r.Use(withRequest(d.Logger), accessLog, recoverPanics)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "no such route"))
	})
	r.MethodNotAllowed(a.methodNotAllowed(r))

	r.Get("/healthz", a.healthz)
	if d.Web != nil {
		d.Web(r)
	}
	r.Post("/webhooks/{hook_id}", a.webhook)
	// The link is the capability: no API key, no session (GET only shows a page).
	r.Get("/a/{token}", a.links)
	r.With(limitBody(d.MaxBodyBytes)).Post("/a/{token}", a.links)
	// Telegram's webhook: no API key, no session; X-Telegram-Bot-Api-Secret-Token is checked.
	r.With(limitBody(d.MaxBodyBytes)).Post("/telegram/callback", a.telegramCallback)
	a.mountOpenAI(r)
	a.mountMCP(r)
	r.Route("/v1", func(r chi.Router) {
		r.Use(a.authenticate)
		// An upload is capped by the documents' own limit, every other body by MaxBodyBytes.
		r.With(limitBody(a.documentLimit())).Post("/documents", a.uploadDocument)
		// A skill's archive has its own bound (skillpack.MaxArchiveBytes).
		r.With(configured(d.Skills != nil, "skills are"), limitBody(skillUploadLimit)).Post("/skills", a.addSkill)
		// A recording is capped by the voice service's limit (§18), as is a chat carrying one.
		voices := configured(d.Voice != nil, "voice is")
		r.With(voices, limitBody(a.voiceLimit())).Post("/voice/transcribe", a.transcribe)
		r.With(voices, limitBody(d.MaxBodyBytes), requireJSON).Post("/voice/speak", a.speak)
		r.With(a.limitChat).Post("/chat", a.chat)
		r.Group(func(r chi.Router) {
			r.Use(limitBody(d.MaxBodyBytes))
			a.routesV1(r)
		})
	})
	return r
}

// routesV1 adds the /v1 routes whose bodies MaxBodyBytes caps.
func (a *api) routesV1(r chi.Router) {
	undos := configured(a.d.Undo != nil, "undo is")
	activities := configured(a.d.Activity != nil, "the history is")
	households := configured(a.d.Household != nil, "household approvals are")
	controls := configured(a.d.Control != nil, "the control is")
	ruleset := configured(a.d.Rules != nil, "rules are")
	r.Get("/turns/{id}", a.turn)
	r.With(requireJSON).Post("/turns/{id}/confirm", a.confirm)
	r.Post("/turns/{id}/cancel", a.cancel)
	r.With(undos).Post("/turns/{id}/calls/{call_id}/undo", a.undoCall)
	r.With(activities).Get("/approvals", a.approvals)
	r.With(activities).Get("/approvals/count", a.approvalsCount)
	r.With(households).Get("/household/approvals", a.householdApprovals)
	r.With(households, requireJSON).Post("/household/approvals/{id}", a.decideHouseholdApproval)
	r.With(activities).Get("/conversations", a.conversations)
	r.With(activities).Get("/conversations/{id}", a.conversation)
	r.With(activities).Get("/turns/{id}/events", a.events)
	r.With(activities).Get("/activity", a.activity)
	r.With(controls).Get("/control", a.control)
	r.With(controls, requireJSON).Post("/control/stop", a.stop)
	r.With(controls).Post("/control/resume", a.resume)
	r.With(controls, requireJSON).Post("/control/mode", a.setMode)
	r.With(ruleset).Get("/rules", a.rules)
	r.With(ruleset, requireJSON).Post("/rules", a.createRule)
	r.With(ruleset).Delete("/rules/{id}", a.deleteRule)
	r.With(activities).Get("/notifications", a.notifications)
	r.With(activities).Get("/notifications/deliveries", a.deliveries)
	a.automationRoutes(r)
	r.Get("/channels", a.channels)
	r.With(requireJSON).Post("/channels", a.addChannel)
	r.Delete("/channels/{name}", a.removeChannel)
	r.Post("/channels/{name}/test", a.testChannel)
	r.Post("/channels/{name}/default", a.defaultChannel)
	r.Get("/memory/facts", a.facts)
	r.With(requireJSON).Post("/memory/facts", a.addFact)
	r.Delete("/memory/facts/{id}", a.forgetFact)
	r.Get("/memory/search", a.searchMemory)
	r.Post("/ledger/import", a.importStatement)
	r.Get("/ledger/report", a.ledgerReport)
	r.Get("/documents", a.documents)
	r.Get("/documents/{id}", a.document)
	r.Get("/documents/{id}/content", a.documentContent)
	r.Delete("/documents/{id}", a.deleteDocument)
	r.Get("/mcp/servers", a.listMCPServers)
	r.With(requireJSON).Post("/mcp/servers", a.addMCPServer)
	r.Post("/mcp/servers/{name}/approve", a.approveMCPServer)
	r.With(requireJSON).Patch("/mcp/servers/{name}/tools/{tool}", a.setMCPTool)
	r.Delete("/mcp/servers/{name}", a.deleteMCPServer)
	r.Get("/accounts", a.listAccounts)
	r.With(requireJSON).Post("/accounts/mail", a.addMailAccount)
	r.With(requireJSON).Post("/accounts/calendar", a.addCalendarAccount)
	r.Post("/accounts/{kind}/test", a.testAccount)
	r.Delete("/accounts/{kind}", a.removeAccount)
	r.Delete("/accounts/oauth/{provider}", a.disconnectOAuth)
	skillset := configured(a.d.Skills != nil, "skills are")
	r.With(skillset).Get("/skills", a.listSkills)
	r.With(skillset).Get("/skills/{id}", a.getSkill)
	r.With(skillset).Delete("/skills/{id}", a.deleteSkill)
	r.With(skillset).Post("/skills/{id}/enable", a.setSkill(true))
	r.With(skillset).Post("/skills/{id}/disable", a.setSkill(false))
	r.With(skillset).Post("/skills/{id}/override", a.overrideSkill)
	a.routesOwnData(r)
}

// links hands an approval link's request to its pages, or answers 404 without them.
func (a *api) links(w http.ResponseWriter, r *http.Request) {
	if a.d.Links == nil {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "approval links are not served here"))
		return
	}
	a.d.Links.ServeHTTP(w, r)
}

// telegramCallback receives a Bot API update (a pressed approval button): POST
// /telegram/callback. No secret configured is 404, a missing or wrong
// X-Telegram-Bot-Api-Secret-Token is 403, and neither decides anything; otherwise 200, with
// a Bot API method in the body when Telegram is to answer the button itself.
func (a *api) telegramCallback(w http.ResponseWriter, r *http.Request) {
	if a.d.Telegram == nil || a.d.Telegram.Secret == "" {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "Telegram callbacks are not enabled on this deployment"))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(w, r, errorf(http.StatusRequestEntityTooLarge, steward.CodeTooLarge, "the body is too large"))
			return
		}
		fail(w, r, errorf(http.StatusBadRequest, steward.CodeInvalid, "could not read the body"))
		return
	}
	reply, err := a.d.Telegram.Handle(r.Context(), r.Header.Get("X-Telegram-Bot-Api-Secret-Token"), body)
	switch {
	case errors.Is(err, telegram.ErrSecret):
		fail(w, r, errorf(http.StatusForbidden, steward.CodeUnauthorized, "%s", telegram.ErrSecret.Message))
		return
	case steward.ErrorCode(err) == steward.CodeInvalid:
		fail(w, r, errorf(http.StatusBadRequest, steward.CodeInvalid, "the body is not a Telegram update"))
		return
	case err != nil:
		fail(w, r, err)
		return
	}
	if reply == nil {
		reply = map[string]any{}
	}
	writeJSON(w, http.StatusOK, reply)
}

// configured answers 404 "<what> not configured on this server" on a route whose service
// Deps leaves nil, as the optional features' routes do.
func configured(ok bool, what string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if ok {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "%s not configured on this server", what))
		})
	}
}

// methodNotAllowed answers 405 with the route's allowed methods in Allow (chi does not
// pass them to a custom handler, so they are looked up).
func (a *api) methodNotAllowed(mux *chi.Mux) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			if mux.Match(chi.NewRouteContext(), m, r.URL.Path) {
				w.Header().Add("Allow", m)
			}
		}
		fail(w, r, errorf(http.StatusMethodNotAllowed, steward.CodeInvalid, "method %s is not allowed here", r.Method))
	}
}
