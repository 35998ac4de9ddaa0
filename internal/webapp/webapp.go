// Package webapp is Steward's web app (README "Web app"): server-rendered pages on the API's
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
package webapp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/household"
	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/mcpclient"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/sessions"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/undo"
)

//go:embed assets
var files embed.FS

// Doors are the cross-owner lookups the web app needs: an API key at sign-in, a session on
// every request. *store.Door implements it.
type Doors interface {
	Authenticate(ctx context.Context, key string) (store.Principal, error)
	LookupSession(ctx context.Context, secret string) (store.SessionPrincipal, error)
}

var _ Doors = (*store.Door)(nil)

// DefaultSessionTTL is how long a session lasts when Deps.SessionTTL is zero.
const DefaultSessionTTL = 7 * 24 * time.Hour

// Deps is what the web app is built from. The app opens no transaction itself: every read and
// write goes through a service (docs/ARCHITECTURE.md §7).
type Deps struct {
	Runner *agent.Runner
	// Store backs the services below when they are nil.
	Store *store.Store
	Door  Doors
	// Sessions starts, lists and revokes web sessions; nil builds one over Store.
	Sessions *sessions.Service
	// Activity serves the approvals inbox, the activity feed and turn stories; nil builds one
	// over Store, on Runner.Now's clock.
	Activity *activity.Service
	// Control serves the kill switch, gate mode and budget; nil builds one over Store.
	Control *control.Service
	// Rules serves the standing rules; nil builds one over Store, checking tools against
	// Runner.Tools.
	Rules *rules.Service
	// Memory serves /memory; nil leaves the page saying memory is off.
	Memory *memory.Service
	// Undo undoes calls within the undo window (the story's Undo button); nil builds one over
	// Store, on Runner.Now's clock, with the default window.
	Undo *undo.Service
	// Documents serves /documents; nil leaves the page saying documents are off.
	Documents *document.Service
	// Ledger serves /money (accounts, import, report, budgets); nil leaves the page saying
	// the ledger is off.
	Ledger *ledger.Service
	// Channels serves /settings/channels; nil leaves the page saying channels are off.
	Channels *channel.Service
	// MCPServers serves /settings/mcp; nil leaves the page saying MCP servers are off.
	MCPServers *mcpclient.Service
	// Household serves /household, the member's inbox of household approvals; nil builds
	// one over Store and Runner (the API's /v1/household/approvals uses the same service).
	Household  *household.Service
	SessionTTL time.Duration
	Logger     zerolog.Logger
}

// cookieName is the session cookie.
const cookieName = "steward_session"

// csp allows only the app's own script, style and connections.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

type web struct {
	d Deps
}

// Routes returns a function that adds the web app's routes to the API's router.
func Routes(d Deps) func(chi.Router) {
	if d.SessionTTL <= 0 {
		d.SessionTTL = DefaultSessionTTL
	}
	// The runner's clock, read at each call (a test may set it after Routes).
	now := func() time.Time {
		if d.Runner != nil && d.Runner.Now != nil {
			return d.Runner.Now()
		}
		return time.Now()
	}
	if d.Sessions == nil {
		d.Sessions = &sessions.Service{Store: d.Store, Now: now}
	}
	if d.Activity == nil {
		d.Activity = &activity.Service{Store: d.Store, Now: now}
	}
	if d.Control == nil {
		d.Control = &control.Service{Store: d.Store, Now: now}
	}
	if d.Rules == nil {
		r := &rules.Service{Store: d.Store}
		if d.Runner != nil && d.Runner.Tools != nil {
			r.Tools = d.Runner.Tools
		}
		d.Rules = r
	}
	if d.Undo == nil {
		d.Undo = &undo.Service{Store: d.Store, Now: now}
	}
	if d.Household == nil {
		d.Household = &household.Service{Store: d.Store, Runner: d.Runner}
	}
	w := &web{d: d}
	return func(r chi.Router) {
		r.Group(func(r chi.Router) {
			r.Use(headers)
			r.Get("/assets/app.js", asset("assets/app.js", "text/javascript; charset=utf-8"))
			r.Get("/assets/app.css", asset("assets/app.css", "text/css; charset=utf-8"))
			r.Get("/signin", w.signinPage)
			r.Post("/signin", w.signin)
			r.Group(func(r chi.Router) {
				r.Use(w.session)
				r.Get("/", w.chatPage)
				r.Get("/approvals", w.approvalsPage)
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
				r.Get("/money", w.moneyPage)
				r.Get("/settings/channels", w.channelsPage)
				r.Get("/settings/mcp", w.mcpPage)
				r.Group(func(r chi.Router) {
					r.Use(checkCSRF)
					r.Post("/signout", w.signout)
					r.Post("/chat", w.chat)
					r.Post("/turns/{id}/confirm", w.confirm)
					r.Post("/household/{id}", w.decideHousehold)
					r.Post("/turns/{id}/calls/{call_id}/undo", w.undoCall)
					r.Post("/settings/sessions/{id}/revoke", w.revokeSession)
					r.Post("/settings/rules", w.addRule)
					r.Post("/settings/rules/{id}/delete", w.deleteRule)
					r.Post("/settings/mode", w.setMode)
					r.Post("/settings/stop", w.stop)
					r.Post("/settings/resume", w.resume)
					r.Post("/memory/facts", w.addFact)
					r.Post("/memory/facts/{id}/forget", w.forgetFact)
					r.Post("/documents/{id}/delete", w.deleteDocument)
					r.Post("/money/import", w.importStatement)
					r.Post("/settings/channels", w.addChannel)
					r.Post("/settings/channels/{name}/remove", w.removeChannel)
					r.Post("/settings/channels/{name}/test", w.testChannel)
					r.Post("/settings/channels/{name}/default", w.defaultChannel)
					r.Post("/settings/mcp", w.addMCPServer)
					r.Post("/settings/mcp/{name}/approve", w.approveMCPServer)
					r.Post("/settings/mcp/{name}/tool", w.setMCPTool)
					r.Post("/settings/mcp/{name}/delete", w.deleteMCPServer)
				})
			})
		})
	}
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
		c, err := r.Cookie(cookieName)
		var p store.SessionPrincipal
		if err == nil {
			p, err = a.d.Door.LookupSession(r.Context(), c.Value)
		}
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, http.ErrNoCookie) {
				zerolog.Ctx(r.Context()).Error().Err(err).Msg("session lookup")
				http.Error(w, "something went wrong", http.StatusInternalServerError)
				return
			}
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/signin", http.StatusSeeOther)
				return
			}
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		ctx := context.WithValue(r.Context(), whoKey{}, who{SessionPrincipal: p, csrf: csrfToken(c.Value)})
		next.ServeHTTP(w, r.WithContext(ctx))
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
		want := current(r).csrf
		if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			http.Error(w, "missing or stale CSRF token: reload the page", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// secure reports whether the request reached us over HTTPS (directly or behind a proxy).
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func (a *web) signinPage(w http.ResponseWriter, r *http.Request) {
	a.write(w, r, "signin", http.StatusOK, signinBody(""))
}

// signin trades an API key for a session.
func (a *web) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	key := strings.TrimSpace(r.PostFormValue("api_key"))
	p, err := a.d.Door.Authenticate(r.Context(), key)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			zerolog.Ctx(r.Context()).Error().Err(err).Msg("sign in")
		}
		a.write(w, r, "signin", http.StatusUnauthorized, signinBody("That API key is unknown or revoked."))
		return
	}
	sess, secret, err := a.d.Sessions.Start(r.Context(), p.OwnerID, r.UserAgent(), a.d.SessionTTL)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: secret, Path: "/", Expires: sess.ExpiresAt,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	http.Redirect(w, r, "/", http.StatusSeeOther)
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

// fail logs an internal error and answers 500 without detail.
func (a *web) fail(w http.ResponseWriter, r *http.Request, err error) {
	zerolog.Ctx(r.Context()).Error().Err(err).Msg("web app")
	http.Error(w, "something went wrong", http.StatusInternalServerError)
}
