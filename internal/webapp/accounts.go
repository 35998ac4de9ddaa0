package webapp

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/stewardhq/steward/internal/accounts"
)

// Settings → Mail and calendar (docs/WEBAPP.md, docs/MAIL.md): the owner's mail account
// (IMAP + SMTP) and calendar (CalDAV) — never a password; connect one (the service logs in
// first: a refused server or login comes back in words, with what was typed but the
// password, and nothing is stored), test one, remove one. Each handler decodes the form and
// calls accounts.Service (docs/ARCHITECTURE.md §7).

const (
	addMailAction     = "/settings/accounts/mail"
	addCalendarAction = "/settings/accounts/calendar"
)

func (a *web) accountsPage(w http.ResponseWriter, r *http.Request) {
	a.accounts(w, r, http.StatusOK, "")
}

func (a *web) accountsAgain(w http.ResponseWriter, r *http.Request) func(int, string) {
	return func(status int, msg string) { a.accounts(w, r, status, msg) }
}

// accounts renders the page; msg is the error of the last form, a flash what a test did.
func (a *web) accounts(w http.ResponseWriter, r *http.Request, status int, msg string) {
	me := current(r)
	if a.d.Accounts == nil {
		a.write(w, r, "settings", http.StatusOK, func(p *page) {
			p.raw(`<h1>Mail and calendar</h1><p>Mail and calendar accounts are off on this server.</p>`)
		})
		return
	}
	list, err := a.d.Accounts.List(r.Context(), me.OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.oauthFormAction(w)
	byKind := map[string]accounts.View{}
	for _, v := range list {
		byKind[v.Kind] = v
	}
	a.write(w, r, "settings", status, func(p *page) {
		p.raw(`<p><a href="/settings">Settings</a></p><h1>Mail and calendar</h1>`).pageError(r, msg, addMailAction, addCalendarAction)
		if f, ok := takeFlash(w, r); ok {
			f.show(p)
		}
		p.raw(`<p class="meta">Steward reads your mail and calendar when you ask, and asks you before it sends, moves, flags or changes anything. What they contain is treated as a stranger's words.</p>`)
		val := func(action, name, def string) { p.value(r, action, name, def) }
		a.oauthSection(p, r, me)

		p.raw(`<h2>Mail</h2>`)
		if m, ok := byKind[accounts.Mail]; ok {
			p.raw(`<div class="account"><p><strong>`).text(m.From).raw(`</strong><br><span class="meta">`).text(m.IMAPURL).raw(` · `).text(m.SMTPURL).
				raw(` · `).text(m.Username).raw(` · ` + stored(m) + `</span></p>`)
			a.accountButtons(p, me, accounts.Mail)
			p.raw(`</div>`)
		} else {
			p.raw(`<form method="post" action="`+addMailAction+`" class="account-form">`).formError(r, addMailAction, msg).
				raw(`<label for="ac-imap">IMAP server</label><input id="ac-imap" name="imap_url" type="text" required maxlength="2000" placeholder="imaps://imap.example.com" autocomplete="off"`)
			val(addMailAction, "imap_url", "")
			p.raw(`><label for="ac-smtp">SMTP server</label><input id="ac-smtp" name="smtp_url" type="text" required maxlength="2000" placeholder="smtps://smtp.example.com" autocomplete="off"`)
			val(addMailAction, "smtp_url", "")
			p.raw(`><label for="ac-user">Username</label><input id="ac-user" name="username" type="text" required maxlength="320" autocomplete="off"`)
			val(addMailAction, "username", "")
			p.raw(`><label for="ac-pass">Password or app password</label><input id="ac-pass" name="password" type="password" required maxlength="1024" autocomplete="off">` +
				`<label for="ac-from">From (your address)</label><input id="ac-from" name="from" type="text" maxlength="320" placeholder="Ada &lt;ada@example.com&gt;"`)
			val(addMailAction, "from", "")
			p.raw(`>`).hidden(me.csrf).raw(`<button type="submit">Connect mail</button></form>` +
				`<p class="meta">imaps:// and smtps:// are TLS from the start; imap:// and smtp:// use STARTTLS. Gmail, iCloud and Fastmail need an app password.</p>`)
		}

		p.raw(`<h2>Calendar</h2>`)
		if c, ok := byKind[accounts.Calendar]; ok {
			p.raw(`<div class="account"><p><strong>`).text(c.CalDAVURL).raw(`</strong><br><span class="meta">`).text(c.Username).raw(` · calendar `).text(c.Calendar).
				raw(` · `).text(c.TimeZone).raw(` · ` + stored(c) + `</span></p>`)
			a.accountButtons(p, me, accounts.Calendar)
			p.raw(`</div>`)
		} else {
			p.raw(`<form method="post" action="`+addCalendarAction+`" class="account-form">`).formError(r, addCalendarAction, msg).
				raw(`<label for="ac-caldav">CalDAV URL</label><input id="ac-caldav" name="caldav_url" type="url" required maxlength="2000" placeholder="https://caldav.example.com/" autocomplete="off"`)
			val(addCalendarAction, "caldav_url", "")
			p.raw(`><label for="ac-cuser">Username</label><input id="ac-cuser" name="username" type="text" required maxlength="320" autocomplete="off"`)
			val(addCalendarAction, "username", "")
			p.raw(`><label for="ac-cpass">Password or app password</label><input id="ac-cpass" name="password" type="password" required maxlength="1024" autocomplete="off">` +
				`<label for="ac-tz">Your time zone</label><input id="ac-tz" name="timezone" type="text" maxlength="64" placeholder="Europe/Berlin"`)
			val(addCalendarAction, "timezone", "")
			p.raw(`>`).hidden(me.csrf).raw(`<button type="submit">Connect calendar</button></form>`)
		}
		p.raw(`<p class="meta">Passwords are sealed before they are stored and are never shown again.</p>`)
	})
}

// accountButtons are an account's Test and Remove.
func (a *web) accountButtons(p *page, me who, kind string) {
	p.raw(`<form method="post" action="/settings/accounts/` + kind + `/test">`).hidden(me.csrf).
		raw(`<button type="submit">Test</button></form><form method="post" action="/settings/accounts/` + kind + `/remove">`).hidden(me.csrf).
		raw(`<button type="submit">Remove</button></form>`)
}

func (a *web) addMailAccount(w http.ResponseWriter, r *http.Request) {
	if a.d.Accounts == nil {
		http.NotFound(w, r)
		return
	}
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	_, err := a.d.Accounts.AddMail(r.Context(), current(r).OwnerID, accounts.MailInput{IMAPURL: f("imap_url"), SMTPURL: f("smtp_url"),
		Username: f("username"), Password: r.PostFormValue("password"), From: f("from")})
	a.done(w, r, err, "/settings/accounts", a.accountsAgain(w, r))
}

func (a *web) addCalendarAccount(w http.ResponseWriter, r *http.Request) {
	if a.d.Accounts == nil {
		http.NotFound(w, r)
		return
	}
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	_, err := a.d.Accounts.AddCalendar(r.Context(), current(r).OwnerID, accounts.CalendarInput{CalDAVURL: f("caldav_url"),
		Username: f("username"), Password: r.PostFormValue("password"), TimeZone: f("timezone")})
	a.done(w, r, err, "/settings/accounts", a.accountsAgain(w, r))
}

func (a *web) removeAccount(w http.ResponseWriter, r *http.Request) {
	if a.d.Accounts == nil {
		http.NotFound(w, r)
		return
	}
	err := a.d.Accounts.Remove(r.Context(), current(r).OwnerID, chi.URLParam(r, "kind"))
	a.done(w, r, err, "/settings/accounts", a.accountsAgain(w, r))
}

// testAccount logs in again now and says whether it worked.
func (a *web) testAccount(w http.ResponseWriter, r *http.Request) {
	if a.d.Accounts == nil {
		http.NotFound(w, r)
		return
	}
	res, err := a.d.Accounts.Test(r.Context(), current(r).OwnerID, chi.URLParam(r, "kind"))
	if err != nil {
		a.done(w, r, err, "/settings/accounts", a.accountsAgain(w, r))
		return
	}
	f := flash{Text: "The " + res.Kind + " account works: Steward logged in."}
	if !res.OK {
		f = flash{Text: "The " + res.Kind + " account does not work: " + res.Error, Error: true}
	}
	redirectWith(w, r, "/settings/accounts", f)
}

// stored says how an account logs in: a password, or a provider's sign-in.
func stored(v accounts.View) string {
	if v.OAuth != "" {
		return "signed in with " + v.OAuth
	}
	return "password stored"
}
