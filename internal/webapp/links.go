package webapp

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/links"
	"github.com/stewardhq/steward/internal/ratelimit"
	"github.com/stewardhq/steward/internal/steward"
)

// Approval links (internal/links): /a/{token} needs no session — the link is
// the capability. GET only shows the confirmation page (link scanners prefetch); its one
// button POSTs the decision. Attempts are limited per client and per token, never globally:
// a flood of junk tokens slows down the client sending it, and a token
// hammered slows down only itself.

// linkLimits are the attempts allowed per minute and process (docs/NOTIFICATIONS.md,
// "Approve from a notification").
const (
	linkPerClient = 30
	linkPerToken  = 10
)

type linkPages struct {
	a                 *web
	svc               *links.Service
	byClient, byToken *ratelimit.Limiter
	// proxyHeader is STEWARD_TRUSTED_PROXY_HEADER (ratelimit.Client).
	proxyHeader string
}

// newLinkPages are pages of one-time links (the approval links' /a/, the device links' /d/)
// with their own limits: linkPerClient a minute per client, linkPerToken per token.
func newLinkPages(a *web, trustedProxyHeader string) *linkPages {
	return &linkPages{a: a, proxyHeader: trustedProxyHeader,
		byClient: &ratelimit.Limiter{Max: linkPerClient, Window: time.Minute},
		byToken:  &ratelimit.Limiter{Max: linkPerToken, Window: time.Minute}}
}

// LinkPages serves GET and POST /a/{token}, the pages of the approval links of svc; the API's
// router mounts it on those routes (httpapi.Deps.Links). trustedProxyHeader names the header
// a trusted proxy puts the client's address in (STEWARD_TRUSTED_PROXY_HEADER; "" when
// RemoteAddr is the client).
func LinkPages(svc *links.Service, trustedProxyHeader string) http.Handler {
	l := newLinkPages(&web{}, trustedProxyHeader)
	l.svc = svc
	return headers(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			l.decide(w, r)
			return
		}
		l.show(w, r)
	}))
}

// allow counts the attempt; over either limit it writes the 429 page.
func (l *linkPages) allow(w http.ResponseWriter, r *http.Request, token string) bool {
	waitClient, waitToken := l.byClient.Add(ratelimit.Client(r, l.proxyHeader)), l.byToken.Add(token)
	if waitClient == 0 && waitToken == 0 {
		return true
	}
	wait, from := waitToken, "for this link"
	if waitClient > waitToken {
		wait, from = waitClient, "from your address"
	}
	s := ratelimit.Seconds(wait)
	w.Header().Set("Retry-After", strconv.Itoa(s))
	l.message(w, r, http.StatusTooManyRequests, "Too many attempts",
		fmt.Sprintf("Too many attempts %s. Wait %d seconds and try again. Nothing was changed.", from, s))
	return false
}

func (l *linkPages) show(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	if !l.allow(w, r, token) {
		return
	}
	pg, err := l.svc.Show(r.Context(), token)
	if err != nil {
		l.fail(w, r, err)
		return
	}
	verb := "Approve"
	if !pg.Approve {
		verb = "Deny"
	}
	l.page(w, r, http.StatusOK, func(p *page) {
		p.raw(`<h1>` + verb + `?</h1><p>Steward is waiting for your decision on `)
		if len(pg.Calls) == 1 {
			p.raw(`this action.`)
		} else {
			p.raw(`these actions; this link decides them all.`)
		}
		p.raw(`</p>`)
		for _, c := range pg.Calls {
			p.raw(`<section class="card"><h2>`).text(c.Tool).raw(`</h2><pre class="args">`).text(string(c.Args)).raw(`</pre></section>`)
		}
		p.raw(`<form method="post" action="/a/`).text(token).raw(`"><button type="submit">` + verb + `</button></form>`)
		p.raw(`<p class="meta">This link works once, until `).text(pg.ExpiresAt.UTC().Format("2006-01-02 15:04 MST")).raw(`.</p>`)
	})
}

func (l *linkPages) decide(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	if !l.allow(w, r, token) {
		return
	}
	v, err := l.svc.Decide(r.Context(), token)
	if err != nil {
		l.fail(w, r, err)
		return
	}
	msg := "Done. Steward went on with the turn."
	switch {
	case v.Awaiting != "":
		msg = "Your decision is recorded. The turn is " + v.Awaiting + "."
	case v.Status == steward.StatusSuspended:
		msg = "Done. Steward went on and is waiting for another decision (see your notifications or the web app)."
	case v.Status == steward.StatusFailed:
		msg = "Decided, but the turn failed afterwards: see it in the web app."
	}
	l.message(w, r, http.StatusOK, "Decided", msg)
}

// fail writes the page of a link that cannot decide: the service's message for a refusal,
// a generic one otherwise.
func (l *linkPages) fail(w http.ResponseWriter, r *http.Request, err error) {
	var se *steward.Error
	if !errors.As(err, &se) {
		zerolog.Ctx(r.Context()).Error().Err(err).Msg("approval link")
		l.message(w, r, http.StatusInternalServerError, "Something went wrong", "Something went wrong. Nothing was changed; try again later.")
		return
	}
	status := http.StatusConflict
	switch se.Code {
	case steward.CodeNotFound:
		status = http.StatusNotFound
	case steward.CodeConflict:
		status = http.StatusGone
	}
	l.message(w, r, status, "This link cannot be used", se.Message)
}

// message writes the page of an outcome; a client that asks for JSON (the service worker's
// Approve and Deny, assets/sw.js) gets {"decided", "title", "message"} instead.
func (l *linkPages) message(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		w.Header().Set("Referrer-Policy", "no-referrer")
		writeJSON(w, status, map[string]any{"decided": status == http.StatusOK, "title": title, "message": msg})
		return
	}
	l.page(w, r, status, func(p *page) {
		p.raw(`<h1>`).text(title).raw(`</h1><p role="status">`).text(msg).raw(`</p>`)
	})
}

// page writes a link page: no referrer, so the token never leaks through a link on it.
func (l *linkPages) page(w http.ResponseWriter, r *http.Request, status int, body func(p *page)) {
	w.Header().Set("Referrer-Policy", "no-referrer")
	l.a.write(w, r, "link", status, body)
}
