// Package webapp is Steward's web app (docs/WEBAPP.md): server-rendered pages on the API's
// chi router, signed in with an API key into a server-side session, with one small script
// (assets/app.js) for streaming chat and approval cards. Everything is embedded (go:embed);
// there is no build step and no inline script, so the Content-Security-Policy forbids it.
//
// Security, in code:
//   - Session: a random secret in an HttpOnly, SameSite=Strict cookie (Secure when the request
//     came over HTTPS); only its SHA-256 is stored (migrations/00012_web_sessions.sql). The
//     lookup by hash crosses owners, so it goes through the read-only door (§5).
//   - CSRF: every state-changing request carries a per-session token (form field csrf or
//     header X-CSRF-Token), a one-way derivation of the session secret that the server
//     recomputes; a missing or wrong token is 403 and nothing is written.
//   - Sign-in (login CSRF): the sign-in page sets a pre-session secret in an
//     HttpOnly, SameSite=Strict cookie and its form carries that secret's token, checked the
//     same way; a sign-in the browser marks cross-site (Sec-Fetch-Site), or whose Origin is
//     not this host, is refused 403 before any key is looked up. Unknown keys are counted per
//     client and key prefix (auth.Failures, shared with the API): past the limit, 429.
package webapp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/automation"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/erasure"
	"github.com/stewardhq/steward/internal/export"
	"github.com/stewardhq/steward/internal/household"
	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/mcpclient"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/oauth"
	"github.com/stewardhq/steward/internal/passkeys"
	"github.com/stewardhq/steward/internal/ratelimit"
	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/sessions"
	"github.com/stewardhq/steward/internal/skills"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/telegram"
	"github.com/stewardhq/steward/internal/trading"
	"github.com/stewardhq/steward/internal/undo"
	"github.com/stewardhq/steward/internal/upload"
	"github.com/stewardhq/steward/internal/voice"
)

//go:embed assets
var files embed.FS

// Doors are the cross-owner lookups the web app needs: an API key, a passkey or a device
// link at sign-in, a session on every request. *store.Door implements it.
type Doors interface {
	Authenticate(ctx context.Context, key string) (store.Principal, error)
	LookupSession(ctx context.Context, secret string) (store.SessionPrincipal, error)
	LookupPasskeyOwner(ctx context.Context, credentialID []byte) (uuid.UUID, error)
	LookupDeviceLinkOwner(ctx context.Context, hash []byte) (uuid.UUID, error)
}

var _ Doors = (*store.Door)(nil)

// DefaultSessionTTL is how long a session lasts when Deps.SessionTTL is zero.
const DefaultSessionTTL = 7 * 24 * time.Hour

// Deps is what the web app is built from. The app opens no transaction itself: every read and
// write goes through a service (docs/ARCHITECTURE.md §7).
type Deps struct {
	Runner *agent.Runner
	Store  *store.Store
	Door   Doors
	// The services below are built by internal/app, the one composition root
	// (docs/ARCHITECTURE.md §7); the web app builds none. Routes panics when Sessions,
	// Activity, Control, Rules, Undo or Household is nil: a programming error.
	//
	// Sessions starts, lists and revokes web sessions, and makes and uses device links.
	Sessions *sessions.Service
	// Passkeys registers passkeys and signs in with them; nil means passkeys are off.
	Passkeys *passkeys.Service
	// PublicURL is where device links point (STEWARD_PUBLIC_URL); empty: the address the
	// owner's Settings page was opened at.
	PublicURL string
	// Activity serves the approvals inbox, the activity feed and turn stories.
	Activity *activity.Service
	// Control serves the kill switch, gate mode and budget.
	Control *control.Service
	// Rules serves the standing rules.
	Rules *rules.Service
	// Memory serves /memory; nil leaves the page saying memory is off.
	Memory *memory.Service
	// Undo undoes calls within the undo window (the story's Undo button).
	Undo *undo.Service
	// Documents serves /documents; nil leaves the page saying documents are off.
	Documents *document.Service
	// Uploads bounds the document uploads received at once (the API's Gate); nil means a
	// Gate of the defaults.
	Uploads *upload.Gate
	// Skills serves /skills; nil leaves the page saying skills are off.
	Skills *skills.Service
	// Ledger serves /money (accounts, import, report, budgets); nil leaves the page saying
	// the ledger is off.
	Ledger *ledger.Service
	// Channels serves /settings/channels; nil leaves the page saying channels are off.
	Channels *channel.Service
	// MCPServers serves /settings/mcp; nil leaves the page saying MCP servers are off.
	MCPServers *mcpclient.Service
	// Trading serves /trading (docs/TRADING.md); nil leaves the page saying trading is off.
	Trading *trading.Service
	// Automations serves the Automations page; nil answers 404 there.
	Automations *automation.Service
	// Accounts serves /settings/accounts; nil leaves the page saying accounts are off.
	Accounts *accounts.Service
	// Telegram serves /settings/telegram (link codes, linked chats); nil leaves the page
	// saying two-way Telegram is off.
	Telegram *telegram.Service
	// Voice is the composer's microphone and the answers' Play buttons (§18); nil, or a
	// service without the backend, shows neither.
	Voice *voice.Service
	// Erasure serves a conversation's rename and delete, the chats' search and forgetting a
	// time range; Export serves "Download my data" (owndata.go). nil: those pages are 404.
	Erasure *erasure.Service
	Export  *export.Service
	// Household serves /household, the member's inbox of household approvals (the API's
	// /v1/household/approvals uses the same service).
	Household  *household.Service
	SessionTTL time.Duration
	Logger     zerolog.Logger
	// KeyFailures counts unknown keys at sign-in per client and key prefix, and slows them
	// down (the API's, so both count together); nil builds one for the web app.
	KeyFailures *auth.Failures
	// TrustedProxyHeader names the header the trusted proxy puts the client's address in
	// (STEWARD_TRUSTED_PROXY_HEADER, ratelimit.Client); empty means RemoteAddr is the client.
	TrustedProxyHeader string
}

// cookieName is the session cookie; signinCookie the pre-session secret of the sign-in form.
const (
	cookieName   = "steward_session"
	signinCookie = "steward_signin"
)

// csp allows only the app's own script, style and connections.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; media-src 'self' blob:; " +
	"manifest-src 'self'; worker-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

type web struct {
	d Deps
	// now is the runner's clock (the system clock without a runner).
	now steward.Clock
	// passkeyBegins counts the passkey sign-ins each client begins (passkeys.go).
	passkeyBegins *ratelimit.Limiter
}

// Routes returns a function that adds the web app's routes to the API's router.
func Routes(d Deps) func(chi.Router) {
	if d.SessionTTL <= 0 {
		d.SessionTTL = DefaultSessionTTL
	}
	var now steward.Clock // the runner's; the system clock without one
	if d.Runner != nil {
		now = d.Runner.Now
	}
	var missing []string
	for _, dep := range []struct {
		name string
		nil  bool
	}{{"Sessions", d.Sessions == nil}, {"Activity", d.Activity == nil}, {"Control", d.Control == nil},
		{"Rules", d.Rules == nil}, {"Undo", d.Undo == nil}, {"Household", d.Household == nil}} {
		if dep.nil {
			missing = append(missing, "Deps."+dep.name)
		}
	}
	if len(missing) > 0 { // a programming error: internal/app builds them (docs/ARCHITECTURE.md §7)
		panic("webapp.Routes: " + strings.Join(missing, ", ") + " nil; internal/app builds the web app's services")
	}
	if d.KeyFailures == nil {
		d.KeyFailures = &auth.Failures{}
	}
	if d.Uploads == nil {
		d.Uploads = &upload.Gate{}
	}
	w := &web{d: d, now: now, passkeyBegins: &ratelimit.Limiter{Max: passkeyBeginsPerClient, Window: time.Minute}}
	device := w.devicePages()
	return func(r chi.Router) {
		// Unknown pages are the app's 404 page; the API's routes keep the API's JSON answer.
		api := http.NotFound
		if m, ok := r.(interface{ NotFoundHandler() http.HandlerFunc }); ok { // *chi.Mux
			api = m.NotFoundHandler()
		}
		r.NotFound(func(rw http.ResponseWriter, req *http.Request) {
			if !wantsPage(req) {
				api(rw, req)
				return
			}
			headers(http.HandlerFunc(w.notFound)).ServeHTTP(rw, w.maybeSignedIn(req))
		})
		r.Group(func(r chi.Router) {
			r.Use(headers)
			for _, f := range shell {
				r.Get(f.path, asset(f.file, f.contentType))
			}
			r.Get("/assets/passkey.js", asset("assets/passkey.js", "text/javascript; charset=utf-8"))
			r.Get("/signin", w.signinPage)
			r.Post("/signin", w.signin)
			r.Post(signinPasskeyPath+"/begin", w.beginPasskeySignin)
			r.Post(signinPasskeyPath+"/finish", w.finishPasskeySignin)
			r.Get("/d/{token}", device.showDevice)
			r.Get(oauth.CallbackPath, w.oauthBounce)
			r.Post("/d/{token}", device.useDevice)
			r.Group(func(r chi.Router) {
				r.Use(w.session)
				r.Get("/", w.chatPage)
				r.Get("/c/{id}", w.conversationPage)
				r.Get("/conversations", w.conversationsPage)
				r.Get("/approvals", w.approvalsPage)
				r.Get("/approvals/count", w.pendingCount)
				r.Get("/household", w.householdPage)
				r.Get("/settings", w.settingsPage)
				r.Get("/turns/{id}", w.storyPage)
				r.Get("/turns/{id}/status", w.turnStatus)
				r.Get("/activity", w.activityPage)
				r.Get("/memory", w.memoryPage)
				r.Get("/documents", w.documentsPage)
				r.Get("/documents/{id}", w.documentPage)
				r.Get("/documents/{id}/content", w.documentContent)
				// Multipart: the handler checks the CSRF token, the form's first part.
				r.Post("/documents", w.uploadDocument)
				r.Get("/skills", w.skillsPage)
				r.Get("/skills/{id}", w.skillPage)
				// Multipart: the handler checks the CSRF token, the form's first part.
				r.Post("/skills/upload", w.uploadSkill)
				r.Get("/money", w.moneyPage)
				r.Get("/trading", w.tradingPage)
				r.Get("/automations", w.automationsPage)
				r.Get("/settings/channels", w.channelsPage)
				r.Get("/settings/mcp", w.mcpPage)
				r.Get("/settings/accounts", w.accountsPage)
				r.Get(oauthFinishPath, w.finishOAuth)
				r.Get("/settings/telegram", w.telegramPage)
				r.Get(devicePath, w.devicePage)
				w.ownDataRoutes(r) // owndata.go
				r.Group(func(r chi.Router) {
					r.Use(checkCSRF)
					r.Post("/signout", w.signout)
					r.Post("/chat", w.chat)
					r.Post("/voice/transcribe", w.transcribe)
					r.Post("/voice/speak", w.speak)
					r.Post("/turns/{id}/confirm", w.confirm)
					r.Post("/turns/{id}/cancel", w.cancelTurn)
					r.Post("/household/{id}", w.decideHousehold)
					r.Post("/turns/{id}/calls/{call_id}/undo", w.undoCall)
					r.Post("/settings/sessions/{id}/revoke", w.revokeSession)
					r.Post("/settings/rules", w.addRule)
					r.Post("/settings/rules/{id}/delete", w.deleteRule)
					r.Post("/settings/mode", w.setMode)
					r.Post(priceAction, w.setPrice)
					r.Post("/settings/stop", w.stop)
					r.Post("/settings/resume", w.resume)
					r.Post("/memory/facts", w.addFact)
					r.Post("/memory/facts/{id}/forget", w.forgetFact)
					r.Post("/documents/{id}/delete", w.deleteDocument)
					r.Post("/skills/url", w.fetchSkill)
					r.Post("/skills/{id}/install", w.installSkill)
					r.Post("/skills/{id}/override", w.overrideSkill)
					r.Post("/skills/{id}/enable", w.setSkill(true))
					r.Post("/skills/{id}/disable", w.setSkill(false))
					r.Post("/skills/{id}/delete", w.deleteSkill)
					r.Post("/money/import", w.importStatement)
					r.Post("/settings/channels", w.addChannel)
					r.Post("/automations/{id}/pause", w.setAutomation("pause"))
					r.Post("/automations/{id}/resume", w.setAutomation("resume"))
					r.Post("/automations/{id}/delete", w.setAutomation("delete"))
					r.Post("/automations/reminders/{id}/cancel", w.setAutomation("cancel"))
					r.Post("/settings/channels/{name}/remove", w.removeChannel)
					r.Post("/settings/channels/{name}/test", w.testChannel)
					r.Post("/settings/channels/{name}/default", w.defaultChannel)
					r.Post("/settings/push", w.subscribePush)
					r.Post("/settings/mcp", w.addMCPServer)
					r.Post(addMailAction, w.addMailAccount)
					r.Post(addCalendarAction, w.addCalendarAccount)
					r.Post("/settings/accounts/{kind}/test", w.testAccount)
					r.Post("/settings/accounts/{kind}/remove", w.removeAccount)
					r.Post(oauthAction+"{provider}/connect", w.connectOAuth)
					r.Post(oauthAction+"{provider}/disconnect", w.disconnectOAuth)
					r.Post(telegramCodeAction, w.makeTelegramCode)
					r.Post("/settings/telegram/{chat}/unlink", w.unlinkTelegram)
					r.Post("/settings/mcp/{name}/approve", w.approveMCPServer)
					r.Post("/settings/mcp/{name}/tool", w.setMCPTool)
					r.Post("/settings/mcp/{name}/delete", w.deleteMCPServer)
					r.Post(settingsPasskeyPath+"/begin", w.beginPasskeyRegistration)
					r.Post(settingsPasskeyPath+"/finish", w.finishPasskeyRegistration)
					r.Post(settingsPasskeyPath+"/{id}/remove", w.removePasskey)
					r.Post(devicePath, w.newDeviceLink)
				})
			})
		})
	}
}

// shell is the app shell: the files every page loads, the icons, the manifest and the
// service worker (assets/sw.js caches exactly these, never a page or owner data).
var shell = []struct{ path, file, contentType string }{
	{"/assets/app.js", "assets/app.js", "text/javascript; charset=utf-8"},
	{"/assets/app.css", "assets/app.css", "text/css; charset=utf-8"},
	{"/assets/push.js", "assets/push.js", "text/javascript; charset=utf-8"},
	{"/assets/icon.svg", "assets/icon.svg", "image/svg+xml"},
	{"/assets/icon-192.png", "assets/icon-192.png", "image/png"},
	{"/assets/icon-512.png", "assets/icon-512.png", "image/png"},
	{"/favicon.ico", "assets/icon-192.png", "image/png"},
	{"/manifest.webmanifest", "assets/manifest.webmanifest", "application/manifest+json"},
	{"/offline", "assets/offline.html", "text/html; charset=utf-8"},
	// At the root so that its scope is the whole app.
	{"/sw.js", "assets/sw.js", "text/javascript; charset=utf-8"},
}

// asset serves one embedded file.
func asset(name, contentType string) http.HandlerFunc {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(b)
	}
}

// headers sets the Content-Security-Policy and friends on every response of the app.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// who is the signed-in owner of a request.
type who struct {
	store.SessionPrincipal
	csrf string
}

type whoKey struct{}

func current(r *http.Request) who { v, _ := r.Context().Value(whoKey{}).(who); return v }

// session requires a live session; without one a page redirects to /signin and anything else
// is 401.
func (a *web) session(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		me, err := a.lookup(r)
		if err != nil {
			if steward.ErrorCode(err) == steward.CodeUnavailable {
				a.fail(w, r, err)
				return
			}
			if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, http.ErrNoCookie) {
				zerolog.Ctx(r.Context()).Error().Err(err).Msg("session lookup")
				a.errorPage(w, r, http.StatusInternalServerError, "Something went wrong", "Steward could not check your sign-in. Try again in a moment.")
				return
			}
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/signin", http.StatusSeeOther)
				return
			}
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), whoKey{}, me)))
	})
}

// lookup finds the session of the request's cookie.
func (a *web) lookup(r *http.Request) (who, error) {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return who{}, err
	}
	p, err := a.d.Door.LookupSession(r.Context(), c.Value)
	if err != nil {
		return who{}, err
	}
	return who{SessionPrincipal: p, csrf: csrfToken(c.Value)}, nil
}

// maybeSignedIn is r with its owner when it carries a live session (a 404 page outside the
// session's routes then shows the navigation), else r.
func (a *web) maybeSignedIn(r *http.Request) *http.Request {
	if me, err := a.lookup(r); err == nil {
		return r.WithContext(context.WithValue(r.Context(), whoKey{}, me))
	}
	return r
}

// wantsPage reports whether a request is a browser's for a page: a GET or HEAD outside the
// API's paths that accepts HTML.
func wantsPage(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	for _, api := range []string{"/v1/", "/mcp", "/webhooks/", "/telegram/", "/healthz"} {
		if strings.HasPrefix(r.URL.Path, api) {
			return false
		}
	}
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// notFound is the app's 404 page.
func (a *web) notFound(w http.ResponseWriter, r *http.Request) {
	a.errorPage(w, r, http.StatusNotFound, "Page not found", "There is nothing at this address. It may have been removed, or the link is mistyped.")
}

// errorPage writes an error page in the app's layout.
func (a *web) errorPage(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	a.write(w, r, "error", status, func(p *page) {
		p.raw(`<h1>`).text(title).raw(`</h1><p>`).text(msg).raw(`</p><p><a href="/">Back to the chat</a></p>`)
	})
}

// csrfToken is the session's CSRF token: a one-way derivation of its secret, which only the
// HttpOnly cookie carries, so another site can neither read nor compute it.
func csrfToken(secret string) string {
	h := sha256.Sum256([]byte("steward csrf\x00" + secret))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// checkCSRF refuses a request whose token (header X-CSRF-Token or form field csrf) is not the
// session's: 403, before the handler runs.
func checkCSRF(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("X-CSRF-Token")
		if got == "" {
			var err error
			if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
				r.Body = http.MaxBytesReader(w, r.Body, maxUpload) // a statement upload (money.go)
				err = r.ParseMultipartForm(maxUpload)
			} else {
				r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
				err = r.ParseForm()
			}
			if tooLarge(err) {
				http.Error(w, "the form is too large", http.StatusRequestEntityTooLarge)
				return
			}
			got = r.PostFormValue("csrf")
		}
		if !sameToken(got, current(r).csrf) {
			http.Error(w, "missing or stale CSRF token: reload the page", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameToken reports whether a request's CSRF token is the one wanted (never an empty one).
func sameToken(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// secure reports whether the request reached us over HTTPS (directly or behind a proxy).
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// signinPage serves the sign-in form.
func (a *web) signinPage(w http.ResponseWriter, r *http.Request) {
	a.signinForm(w, r, http.StatusOK, "")
}

// signinForm writes the sign-in form with message msg (if any). The form carries the CSRF
// token of the browser's pre-session secret (cookie signinCookie, scoped to /signin), which
// is kept when the browser has one, so two open sign-in pages both work.
func (a *web) signinForm(w http.ResponseWriter, r *http.Request, status int, msg string) {
	token := preSession(w, r, signinCookie, "/signin")
	r = r.WithContext(context.WithValue(r.Context(), whoKey{}, who{csrf: token}))
	a.write(w, r, "signin", status, func(p *page) {
		signinBody(token, msg)(p)
		a.passkeySignin(p, r)
	})
}

// preSession returns the CSRF token of the browser's pre-session secret (cookie name, scoped
// to path), setting a new secret when the browser has none; a page without a session puts
// the token in its form (the sign-in page, a device link's page).
func preSession(w http.ResponseWriter, r *http.Request, name, path string) string {
	secret := ""
	if c, err := r.Cookie(name); err == nil && len(c.Value) <= 64 {
		secret = c.Value
	}
	if secret == "" {
		secret = rand.Text()
		http.SetCookie(w, &http.Cookie{Name: name, Value: secret, Path: path,
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	}
	return csrfToken(secret)
}

// fromOwnPage reports whether a request without a session came from Steward's own page in
// this browser: not cross-site (crossOrigin), carrying token, the CSRF token of the
// pre-session cookie name.
func fromOwnPage(r *http.Request, name, token string) bool {
	pre, err := r.Cookie(name)
	return crossOrigin.Check(r) == nil && err == nil && sameToken(token, csrfToken(pre.Value))
}

// setSession gives the browser its session cookie.
func setSession(w http.ResponseWriter, r *http.Request, secret string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: secret, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
}

// crossOrigin refuses a request the browser marks as sent by another site (Sec-Fetch-Site),
// or, from a browser without it, whose Origin is not the request's host.
var crossOrigin = http.NewCrossOriginProtection()

// signin trades an API key for a session. Only the sign-in page's own form in this browser
// may: a cross-site request, or one without the token of the browser's pre-session cookie,
// is refused (403) before the key is looked up — another site could otherwise sign the
// browser into the sender's account (login CSRF). A client or key prefix with too many
// unknown keys is told to wait (429, Retry-After).
func (a *web) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if !fromOwnPage(r, signinCookie, r.PostFormValue("csrf")) {
		a.write(w, r, "signin", http.StatusForbidden, func(p *page) {
			p.raw(`<h1>Sign-in refused</h1><p role="alert" class="error">This sign-in did not come from ` +
				`Steward's own sign-in page in this browser, so nobody was signed in. If you were signing in, ` +
				`<a href="/signin">open the sign-in page and try again</a>.</p>`)
		})
		return
	}
	client := ratelimit.Client(r, a.d.TrustedProxyHeader)
	if refusal := a.d.KeyFailures.Check(client); refusal != nil {
		a.tooManyFailures(w, r, refusal)
		return
	}
	key := strings.TrimSpace(r.PostFormValue("api_key"))
	p, err := a.d.Door.Authenticate(r.Context(), key)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			zerolog.Ctx(r.Context()).Error().Err(err).Msg("sign in")
		} else if refusal := a.d.KeyFailures.Failed(client, key); refusal != nil {
			a.tooManyFailures(w, r, refusal)
			return
		}
		a.signinForm(w, r, http.StatusUnauthorized, "That API key is unknown or revoked.")
		return
	}
	sess, secret, err := a.d.Sessions.Start(r.Context(), p.OwnerID, r.UserAgent(), a.d.SessionTTL)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	setSession(w, r, secret, sess.ExpiresAt)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// tooManyFailures is the 429 sign-in page of a client or key prefix with too many unknown keys.
func (a *web) tooManyFailures(w http.ResponseWriter, r *http.Request, refusal *auth.Refusal) {
	w.Header().Set("Retry-After", strconv.Itoa(refusal.Seconds()))
	a.signinForm(w, r, http.StatusTooManyRequests, "Too many failed sign-ins "+refusal.Why()+".")
}

// signout revokes the session and clears the cookie.
func (a *web) signout(w http.ResponseWriter, r *http.Request) {
	me := current(r)
	err := a.d.Sessions.Revoke(r.Context(), me.OwnerID, me.SessionID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		a.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

func (a *web) revokeSession(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err == nil {
		err = a.d.Sessions.Revoke(r.Context(), current(r).OwnerID, id)
	}
	if err != nil {
		http.Error(w, "no such session", http.StatusNotFound)
		return
	}
	http.Redirect(w, r, "/settings", http.StatusSeeOther)
}

// fail logs an internal error and answers 500 without detail: the error page, or for the
// script's requests (chat, confirm) a line of text it shows.
// A database that cannot be reached (a restart, a failover) is 503 with Retry-After and
// words saying so.
func (a *web) fail(w http.ResponseWriter, r *http.Request, err error) {
	zerolog.Ctx(r.Context()).Error().Err(err).Msg("web app")
	status, title, msg := http.StatusInternalServerError, "Something went wrong", "Steward could not show this page. Try again in a moment; nothing was changed."
	line := "something went wrong"
	if steward.ErrorCode(err) == steward.CodeUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(steward.RetrySeconds(err)))
		status, title, msg = http.StatusServiceUnavailable, "Steward is unavailable for a moment", unavailableText
		line = unavailableText
	}
	if r.Method != http.MethodGet {
		http.Error(w, line, status)
		return
	}
	a.errorPage(w, r, status, title, msg)
}

// unavailableText is what the owner reads while the database cannot be reached.
const unavailableText = "Steward cannot reach its database right now (a restart or maintenance); try again in a few seconds."
