package webapp

import (
	"html"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/oauth"
	"github.com/stewardhq/steward/internal/steward"
)

// Settings → Mail and calendar, signing in with a provider (docs/MAIL.md "Google",
// "Microsoft"): "Connect Google" lists what each scope lets Steward do, then sends the owner
// to the provider (the page's form-action allows the providers' origins); the provider sends
// the browser back to /oauth/callback, a cross-site navigation that carries no SameSite=Strict
// session cookie, so that page only sends the browser on, same-site, to
// /oauth/callback/finish, where the session is known and accounts.Service.FinishOAuth checks that the
// state is this session's. A grant the provider refused shows "Google disconnected: reconnect".

const (
	oauthFinishPath = oauth.CallbackPath + "/finish"
	oauthAction     = "/settings/accounts/oauth/"
)

// oauthFormAction is the accounts page's form-action: the app and the providers' sign-in pages.
func (a *web) oauthFormAction(w http.ResponseWriter) {
	if a.d.Accounts == nil {
		return
	}
	origins := []string{"'self'"}
	for _, p := range a.d.Accounts.Providers() {
		if u, err := url.Parse(p.AuthURL); err == nil && u.Host != "" {
			origins = append(origins, u.Scheme+"://"+u.Host)
		}
	}
	w.Header().Set("Content-Security-Policy", strings.Replace(csp, "form-action 'self'", "form-action "+strings.Join(origins, " "), 1))
}

// oauthSection is the page's sign-in part: each provider connected, refused or to connect.
func (a *web) oauthSection(p *page, r *http.Request, me who) {
	providers := a.d.Accounts.Providers()
	if len(providers) == 0 {
		return
	}
	grants, err := a.d.Accounts.Grants(r.Context(), me.OwnerID)
	if err != nil {
		return
	}
	byProvider := map[string]oauth.View{}
	for _, g := range grants {
		byProvider[g.Provider] = g
	}
	p.raw(`<h2>Sign in with a provider</h2>`)
	for _, pr := range providers {
		g, ok := byProvider[pr.Name]
		p.raw(`<div class="account">`)
		switch {
		case ok && g.Connected:
			p.raw(`<p><strong>`).text(pr.Label + " connected").raw(`</strong><br><span class="meta">`).text(g.Email).raw(`</span></p>`)
		case ok:
			p.raw(`<p role="alert"><strong>`).text(pr.Label + " disconnected: reconnect").raw(`</strong><br><span class="meta">`).text(g.Email + " · " + g.Problem).raw(`</span></p>`)
		}
		if !ok || !g.Connected {
			verb := "Connect "
			if ok {
				verb = "Reconnect "
			}
			p.raw(`<p class="meta">Steward asks ` + html.EscapeString(pr.Label) + ` for:</p><ul class="meta">`)
			for _, u := range pr.Uses {
				p.raw(`<li>`).text(u).raw(`</li>`)
			}
			p.raw(`</ul><form method="post" action="` + oauthAction + pr.Name + `/connect">`).hidden(me.csrf).
				raw(`<button type="submit">`).text(verb + pr.Label).raw(`</button></form>`)
		}
		if ok {
			p.raw(`<form method="post" action="` + oauthAction + pr.Name + `/disconnect">`).hidden(me.csrf).
				raw(`<button type="submit">`).text("Disconnect " + pr.Label).raw(`</button></form>`)
		}
		p.raw(`</div>`)
	}
}

// connectOAuth sends the owner to the provider's sign-in, the state bound to this session.
func (a *web) connectOAuth(w http.ResponseWriter, r *http.Request) {
	if a.d.Accounts == nil {
		http.NotFound(w, r)
		return
	}
	me := current(r)
	u, err := a.d.Accounts.BeginOAuth(r.Context(), me.OwnerID, me.SessionID, chi.URLParam(r, "provider"))
	if err != nil {
		a.done(w, r, err, "/settings/accounts", a.accountsAgain(w, r))
		return
	}
	http.Redirect(w, r, u, http.StatusSeeOther)
}

// oauthBounce is where the provider sends the browser back: it carries no session cookie
// (SameSite=Strict), so it sends the browser on within the app with the callback's
// parameters (only those), telling no page the code (no Referer).
func (a *web) oauthBounce(w http.ResponseWriter, r *http.Request) {
	q, v := r.URL.Query(), url.Values{}
	for _, k := range []string{"state", "code", "error", "error_description"} {
		if x := q.Get(k); x != "" && len(x) <= 4096 {
			v.Set(k, x)
		}
	}
	next := oauthFinishPath + "?" + v.Encode()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	esc := html.EscapeString(next)
	_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
		`<meta http-equiv="refresh" content="0;url=` + esc + `"><title>Signing in…</title></head><body><p>Signing in… <a href="` + esc + `">Continue</a></p></body></html>`))
}

// finishOAuth completes the sign-in in this session and says what it connected, or why not.
func (a *web) finishOAuth(w http.ResponseWriter, r *http.Request) {
	if a.d.Accounts == nil {
		http.NotFound(w, r)
		return
	}
	me := current(r)
	q := r.URL.Query()
	c, err := a.d.Accounts.FinishOAuth(r.Context(), me.OwnerID, me.SessionID, oauth.Callback{State: q.Get("state"), Code: q.Get("code"),
		Error: q.Get("error"), ErrorDescription: q.Get("error_description")})
	if err != nil {
		msg, ok := steward.Words(err)
		if !ok {
			a.fail(w, r, err)
			return
		}
		redirectWith(w, r, "/settings/accounts", flash{Title: "Not connected", Text: msg, Error: true})
		return
	}
	redirectWith(w, r, "/settings/accounts", connectedFlash(c))
}

func connectedFlash(c accounts.Connected) flash {
	f := flash{Title: c.Label + " connected", Text: c.Label + " connected as " + c.Email + "."}
	if len(c.Kinds) > 0 {
		f.Lines = append(f.Lines, "Signed in with "+c.Label+": "+strings.Join(c.Kinds, " and ")+".")
	}
	for _, k := range c.Kept {
		f.Lines = append(f.Lines, "Your "+k+" account with a password was kept; remove it to use "+c.Label+" for "+k+".")
	}
	return f
}

// disconnectOAuth revokes the grant at the provider and removes it with its accounts.
func (a *web) disconnectOAuth(w http.ResponseWriter, r *http.Request) {
	if a.d.Accounts == nil {
		http.NotFound(w, r)
		return
	}
	note, err := a.d.Accounts.DisconnectOAuth(r.Context(), current(r).OwnerID, chi.URLParam(r, "provider"))
	if err != nil {
		a.done(w, r, err, "/settings/accounts", a.accountsAgain(w, r))
		return
	}
	f := flash{Text: "Disconnected: Steward's access was revoked and its tokens deleted."}
	if note != "" {
		f = flash{Text: "Disconnected and the tokens deleted, but " + note + ".", Error: true}
	}
	redirectWith(w, r, "/settings/accounts", f)
}
