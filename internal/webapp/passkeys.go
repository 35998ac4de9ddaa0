package webapp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/passkeys"
	"github.com/stewardhq/steward/internal/ratelimit"
	"github.com/stewardhq/steward/internal/steward"
)

// Passkeys (internal/passkeys, docs/ARCHITECTURE.md §13). assets/passkey.js, loaded on the
// sign-in and settings pages only, runs the browser's side: it asks a begin route for the
// options, hands them to navigator.credentials, and posts the answer to the finish route.
// The ceremony's secret travels in an HttpOnly cookie scoped to its routes; its challenge is
// in the database. The sign-in routes have no session, so they are guarded like the key
// sign-in: the browser must say same-origin (crossOrigin) and carry the token of the sign-in
// page's pre-session cookie (X-CSRF-Token); failed assertions count as failed sign-ins
// (auth.Failures, per client).

// ceremonyCookie holds the secret of a passkey ceremony under way.
const ceremonyCookie = "steward_passkey"

// maxAnswer bounds a browser's passkey answer (a PublicKeyCredential's JSON: a few KB).
const maxAnswer = 64 << 10

// Paths of the ceremonies' routes; each ceremony's cookie is scoped to its own.
const (
	signinPasskeyPath   = "/signin/passkey"
	settingsPasskeyPath = "/settings/passkeys"
)

func setCeremony(w http.ResponseWriter, r *http.Request, path, secret string) {
	http.SetCookie(w, &http.Cookie{Name: ceremonyCookie, Value: secret, Path: path, MaxAge: int(passkeys.CeremonyTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
}

// ceremony reads and clears the ceremony cookie: a ceremony finishes once.
func ceremony(w http.ResponseWriter, r *http.Request, path string) string {
	c, err := r.Cookie(ceremonyCookie)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: ceremonyCookie, Value: "", Path: path, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	return c.Value
}

// passkeyError answers a passkey route's failure as {"error": words}: the service's words for
// a refusal, a generic line (logged) otherwise.
func (a *web) passkeyError(w http.ResponseWriter, r *http.Request, err error) {
	var se *steward.Error
	if !errors.As(err, &se) {
		zerolog.Ctx(r.Context()).Error().Err(err).Msg("passkey")
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "Something went wrong on the server. Nothing was changed; try again in a moment."})
		return
	}
	zerolog.Ctx(r.Context()).Info().Err(err).Msg("passkey refused")
	status := http.StatusUnprocessableEntity
	switch se.Code {
	case steward.CodeUnauthorized:
		status = http.StatusUnauthorized
	case steward.CodeNotFound:
		status = http.StatusNotFound
	case steward.CodeConflict:
		status = http.StatusConflict
	}
	writeJSON(w, status, map[string]string{"error": se.Message})
}

// readAnswer reads a bounded JSON body.
func readAnswer(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAnswer))
	if err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "The passkey answer is too large."})
		return nil, false
	}
	return b, true
}

// fromSigninPage refuses (403, in words) a sign-in request that is cross-site or does not
// carry the token of this browser's sign-in page (login CSRF, as the key sign-in).
func fromSigninPage(w http.ResponseWriter, r *http.Request) bool {
	if fromOwnPage(r, signinCookie, r.Header.Get("X-CSRF-Token")) {
		return true
	}
	writeJSON(w, http.StatusForbidden, map[string]string{"error": "This sign-in did not come from Steward's own sign-in page in this browser, " +
		"so nobody was signed in. Reload the sign-in page and try again."})
	return false
}

// passkeyBeginsPerClient is how many passkey sign-ins a client may begin a minute: each
// stores a ceremony (docs/ARCHITECTURE.md §12).
const passkeyBeginsPerClient = 10

// beginPasskeySignin: POST /signin/passkey/begin → the assertion options. A client past
// passkeyBeginsPerClient a minute is refused (429) before anything is stored.
func (a *web) beginPasskeySignin(w http.ResponseWriter, r *http.Request) {
	if !fromSigninPage(w, r) {
		return
	}
	if wait := a.passkeyBegins.Add(ratelimit.Client(r, a.d.TrustedProxyHeader)); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ratelimit.Seconds(wait)))
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": fmt.Sprintf(
			"Too many passkey sign-ins begun from your address (more than %d a minute); try again in %d seconds.", passkeyBeginsPerClient, ratelimit.Seconds(wait))})
		return
	}
	c, err := a.d.Passkeys.BeginSignIn(r.Context())
	if err != nil {
		a.passkeyError(w, r, err)
		return
	}
	setCeremony(w, r, signinPasskeyPath, c.Secret)
	writeJSON(w, http.StatusOK, c.Options)
}

// finishPasskeySignin: POST /signin/passkey/finish with the assertion → the session cookie
// and {"redirect": "/"}. A client past the failure limit is refused before anything is read.
func (a *web) finishPasskeySignin(w http.ResponseWriter, r *http.Request) {
	if !fromSigninPage(w, r) {
		return
	}
	client := ratelimit.Client(r, a.d.TrustedProxyHeader)
	if refusal := a.d.KeyFailures.Check(client); refusal != nil {
		w.Header().Set("Retry-After", strconv.Itoa(refusal.Seconds()))
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "Too many failed sign-ins " + refusal.Why() + "."})
		return
	}
	secret := ceremony(w, r, signinPasskeyPath)
	answer, ok := readAnswer(w, r)
	if !ok {
		return
	}
	in, err := a.d.Passkeys.FinishSignIn(r.Context(), secret, answer, r.UserAgent(), a.d.SessionTTL)
	if err != nil {
		if steward.ErrorCode(err) != steward.CodeInternal {
			a.d.KeyFailures.FailedAttempt(client)
		}
		a.passkeyError(w, r, err)
		return
	}
	setSession(w, r, in.Secret, in.Session.ExpiresAt)
	writeJSON(w, http.StatusOK, map[string]string{"redirect": "/"})
}

// beginPasskeyRegistration: POST /settings/passkeys/begin → the creation options.
func (a *web) beginPasskeyRegistration(w http.ResponseWriter, r *http.Request) {
	me := current(r)
	c, err := a.d.Passkeys.BeginRegistration(r.Context(), me.OwnerID, me.OwnerName)
	if err != nil {
		a.passkeyError(w, r, err)
		return
	}
	setCeremony(w, r, settingsPasskeyPath, c.Secret)
	writeJSON(w, http.StatusOK, c.Options)
}

// finishPasskeyRegistration: POST /settings/passkeys/finish with {"name", "credential"}.
func (a *web) finishPasskeyRegistration(w http.ResponseWriter, r *http.Request) {
	me := current(r)
	secret := ceremony(w, r, settingsPasskeyPath)
	body, ok := readAnswer(w, r)
	if !ok {
		return
	}
	var in struct {
		Name       string          `json:"name"`
		Credential json.RawMessage `json:"credential"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "The browser's passkey answer could not be read. Try again."})
		return
	}
	pk, err := a.d.Passkeys.FinishRegistration(r.Context(), me.OwnerID, me.OwnerName, secret, in.Name, in.Credential)
	if err != nil {
		a.passkeyError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"added": pk.Name, "redirect": "/settings#passkeys"})
}

// removePasskey: POST /settings/passkeys/{id}/remove (a form).
func (a *web) removePasskey(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	switch {
	case err == nil && a.d.Passkeys == nil: // passkeys off: there is none to remove
		err = steward.Errorf(steward.CodeNotFound, "There is no such passkey.")
	case err == nil:
		err = a.d.Passkeys.Remove(r.Context(), current(r).OwnerID, id)
	}
	if err != nil {
		if steward.ErrorCode(err) == steward.CodeInternal {
			a.fail(w, r, err)
			return
		}
		a.errorPage(w, r, http.StatusNotFound, "No such passkey", "There is no such passkey; it may have been removed already.")
		return
	}
	http.Redirect(w, r, "/settings#passkeys", http.StatusSeeOther)
}

// requestOrigin is the origin the browser used for r.
func requestOrigin(r *http.Request) string {
	scheme := "http"
	if secure(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// passkeyHere says why passkeys cannot be used on this page ("" when they can): off on this
// server, or the page is not at the passkey origin (a browser binds passkeys to a name).
func (a *web) passkeyHere(r *http.Request) string {
	switch {
	case !a.d.Passkeys.Enabled():
		return "Passkeys are off on this server (its operator has not set STEWARD_PASSKEY_ORIGIN)."
	case requestOrigin(r) != a.d.Passkeys.Origin:
		return "Passkeys work at " + a.d.Passkeys.Origin + "/ — open Steward there to use one."
	}
	return ""
}

// passkeySignin writes the sign-in page's passkey button (assets/passkey.js runs it).
func (a *web) passkeySignin(p *page, r *http.Request) {
	p.raw(`<section class="passkey-signin" aria-labelledby="passkey-signin-title"><h2 id="passkey-signin-title">Or use a passkey</h2>`)
	if why := a.passkeyHere(r); why != "" {
		p.raw(`<p class="meta">`).text(why).raw(`</p></section>`)
		return
	}
	// Disabled until assets/passkey.js has taken the button over (a button that does nothing
	// while the script loads, or without it, would only confuse).
	p.raw(`<button type="button" id="passkey-signin" disabled>Sign in with a passkey</button>` +
		`<p class="passkey-status" role="status" aria-live="polite"></p></section>`)
}

// signInSection is Settings' "Sign-in" section: the owner's passkeys (add, remove) and "Add a
// device". settings calls it with the page's request.
func (a *web) signInSection(p *page, r *http.Request) {
	me := current(r)
	p.raw(`<h2 id="passkeys">Passkeys</h2>`)
	if why := a.passkeyHere(r); why != "" {
		p.raw(`<p class="meta">`).text(why).raw(`</p>`)
	} else {
		keys, err := a.d.Passkeys.List(r.Context(), me.OwnerID)
		if err != nil {
			zerolog.Ctx(r.Context()).Error().Err(err).Msg("list passkeys")
			p.raw(`<p class="error">Your passkeys could not be read. Reload the page to try again.</p>`)
		}
		if err == nil && len(keys) == 0 {
			p.raw(`<p>No passkeys yet. A passkey signs you in with your fingerprint, face or screen lock instead of your key.</p>`)
		}
		p.raw(`<ul class="passkeys">`)
		for _, k := range keys {
			p.raw(`<li><span><strong>`).text(k.Name).raw(`</strong> · added `).text(when(k.CreatedAt))
			if k.LastUsedAt != nil {
				p.raw(` · last used `).text(when(*k.LastUsedAt))
			} else {
				p.raw(` · never used`)
			}
			p.raw(`</span><form method="post" action="/settings/passkeys/`).text(k.ID.String()).raw(`/remove">`).hidden(me.csrf).
				raw(`<button type="submit" aria-label="Remove passkey `).text(k.Name).raw(`">Remove</button></form></li>`)
		}
		p.raw(`</ul><form id="passkey-register" class="passkey-register"><label for="passkey-name">Name of the new passkey</label>` +
			`<input id="passkey-name" name="name" type="text" required maxlength="100" placeholder="e.g. my phone">` +
			`<button type="submit" disabled>Add a passkey</button><p class="passkey-status" role="status" aria-live="polite"></p></form>`)
	}
	p.raw(`<h2 id="device">Add a device</h2><p>Sign in on your phone or another computer with a QR code: it holds a link that works once, for 10 minutes.</p>` +
		`<form method="post" action="/settings/device">`).hidden(me.csrf).raw(`<button type="submit">Add a device</button></form>`)
}
