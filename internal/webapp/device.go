package webapp

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/rs/zerolog"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/stewardhq/steward/internal/sessions"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Add a device (internal/sessions, docs/ARCHITECTURE.md §13). Settings makes a one-time
// sign-in link and shows it as a QR code; /d/{token} needs no session — the link is the
// capability. As with approval links, a GET only shows a page (link previews and scanners
// prefetch URLs), whose one button POSTs; that POST must come from this page in this browser
// (its pre-session cookie's token, same-origin), and attempts are limited per client and per
// token.

// Cookies: the token of the link Settings shows (so a reload shows it again, and the POST
// that made it redirects), and the pre-session secret of a link's page.
const (
	deviceCookie       = "steward_device"
	deviceSigninCookie = "steward_device_signin"
	devicePath         = "/settings/device"
)

// newDeviceLink: POST /settings/device makes a link and shows it (GET /settings/device).
func (a *web) newDeviceLink(w http.ResponseWriter, r *http.Request) {
	token, _, err := a.d.Sessions.NewDeviceLink(r.Context(), current(r).OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: deviceCookie, Value: token, Path: devicePath, MaxAge: int(sessions.DeviceLinkTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	http.Redirect(w, r, devicePath, http.StatusSeeOther)
}

// deviceBase is where the links point: STEWARD_PUBLIC_URL, else the address this page was
// opened at.
func (a *web) deviceBase(r *http.Request) string {
	if a.d.PublicURL != "" {
		return a.d.PublicURL
	}
	return requestOrigin(r)
}

// devicePage: GET /settings/device shows the link of the cookie as a QR code while it works,
// and what became of it after.
func (a *web) devicePage(w http.ResponseWriter, r *http.Request) {
	me := current(r)
	var link store.DeviceLink
	token := ""
	if c, err := r.Cookie(deviceCookie); err == nil {
		var lerr error
		if link, lerr = a.d.Sessions.DeviceLink(r.Context(), me.OwnerID, c.Value); lerr == nil {
			token = c.Value
		} else if !errors.Is(lerr, store.ErrNotFound) {
			a.fail(w, r, lerr)
			return
		}
	}
	url := a.deviceBase(r) + "/d/" + token
	a.write(w, r, "settings", http.StatusOK, func(p *page) {
		p.raw(`<h1>Add a device</h1>`)
		again := `Make a new link`
		switch {
		case token == "":
			again = `Make a sign-in link`
		case link.UsedAt != nil:
			p.raw(`<p role="status">This link was used at `).text(when(*link.UsedAt)).raw(`: that device is signed in (see Sessions in <a href="/settings">Settings</a>).</p>`)
		case !a.now.Now().Before(link.ExpiresAt):
			p.raw(`<p role="status">This link has expired; nobody used it.</p>`)
		default:
			p.raw(`<p>Scan this code with the phone's camera, or open the link on the other device. It signs that device in once, until `).
				text(when(link.ExpiresAt)).raw(`.</p><figure class="qr">`)
			if err := qrSVG(p, url); err != nil {
				zerolog.Ctx(r.Context()).Error().Err(err).Msg("device link QR code")
			}
			p.raw(`<figcaption><a class="device-link" href="`).text(url).raw(`">`).text(url).raw(`</a></figcaption></figure>` +
				`<p class="meta">Anyone with this code or link can sign in as you until it is used or expires: show it only to your own device.</p>`)
		}
		p.raw(`<form method="post" action="/settings/device">`).hidden(me.csrf).raw(`<button type="submit">` + again + `</button></form>` +
			`<p><a href="/settings">Back to Settings</a></p>`)
	})
}

// qrSVG writes s as a QR code in inline SVG (no script, no inline style: the CSP holds), one
// path of the dark modules, the quiet zone included.
func qrSVG(p *page, s string) error {
	q, err := qrcode.New(s, qrcode.Medium)
	if err != nil {
		return err
	}
	bits := q.Bitmap()
	n := strconv.Itoa(len(bits))
	var d strings.Builder
	for y, row := range bits {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			run := 0
			for x+run < len(row) && row[x+run] {
				run++
			}
			d.WriteString("M" + strconv.Itoa(x) + " " + strconv.Itoa(y) + "h" + strconv.Itoa(run) + "v1h-" + strconv.Itoa(run) + "z")
			x += run
		}
	}
	p.raw(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ` + n + ` ` + n + `" width="264" height="264" role="img" ` +
		`aria-label="QR code of the sign-in link" shape-rendering="crispEdges"><rect width="` + n + `" height="` + n + `" fill="#fff"/>` +
		`<path fill="#000" d="` + d.String() + `"/></svg>`)
	return nil
}

// devicePages are the pages of /d/{token}: the approval links' limits and layout.
func (a *web) devicePages() *linkPages { return newLinkPages(a, a.d.TrustedProxyHeader) }

// deviceRefused writes the page of a device link that cannot sign in: the service's words.
func (l *linkPages) deviceRefused(w http.ResponseWriter, r *http.Request, err error) {
	var se *steward.Error
	if !errors.As(err, &se) {
		zerolog.Ctx(r.Context()).Error().Err(err).Msg("device link")
		l.message(w, r, http.StatusInternalServerError, "Something went wrong", "Something went wrong. Nobody was signed in; try again in a moment.")
		return
	}
	status := http.StatusGone
	if se.Code == steward.CodeNotFound {
		status = http.StatusNotFound
	}
	l.message(w, r, status, "This sign-in link cannot be used", se.Message)
}

// showDevice: GET /d/{token} only shows the page; its button signs in.
func (l *linkPages) showDevice(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	if !l.allow(w, r, token) {
		return
	}
	if err := l.a.d.Sessions.CheckDeviceLink(r.Context(), token); err != nil {
		l.deviceRefused(w, r, err)
		return
	}
	csrf := preSession(w, r, deviceSigninCookie, "/d/")
	l.page(w, r, http.StatusOK, func(p *page) {
		p.raw(`<h1>Sign in on this device?</h1><p>This link signs this device in to Steward. It works once.</p>` +
			`<form method="post" action="/d/`).text(token).raw(`">`).hidden(csrf).raw(`<button type="submit">Sign in on this device</button></form>`)
	})
}

// useDevice: POST /d/{token} signs this device in, once.
func (l *linkPages) useDevice(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	if !l.allow(w, r, token) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if !fromOwnPage(r, deviceSigninCookie, r.PostFormValue("csrf")) {
		l.message(w, r, http.StatusForbidden, "Sign-in refused", "This sign-in did not come from the link's own page in this browser, "+
			"so nobody was signed in. Open the link again and press Sign in on this device.")
		return
	}
	_, sess, secret, err := l.a.d.Sessions.UseDeviceLink(r.Context(), token, r.UserAgent(), l.a.d.SessionTTL)
	if err != nil {
		l.deviceRefused(w, r, err)
		return
	}
	setSession(w, r, secret, sess.ExpiresAt)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
