package webapp

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stewardhq/steward/internal/channel"
)

// Settings → Notification channels (docs/WEBAPP.md, docs/NOTIFICATIONS.md): the owner's channels —
// never a secret; add one (its secrets in password fields, write-only), remove one, make one
// the default, and send a test message. Each handler decodes the form, calls channel.Service and renders
// (docs/ARCHITECTURE.md §7); a channel the service refuses comes back with its message and
// a 422, and nothing is stored.

func (a *web) channelsPage(w http.ResponseWriter, r *http.Request) {
	a.channels(w, r, http.StatusOK, "")
}

// channels renders the page; msg is the error of the last form (a refused add keeps what
// was typed), a flash what a test did.
func (a *web) channels(w http.ResponseWriter, r *http.Request, status int, msg string) {
	const add = "/settings/channels"
	me := current(r)
	if a.d.Channels == nil {
		a.write(w, r, "settings", http.StatusOK, func(p *page) {
			p.raw(`<h1>Notification channels</h1><p>Notification channels are off on this server.</p>`)
		})
		return
	}
	list, err := a.d.Channels.List(r.Context(), me.OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "settings", status, func(p *page) {
		p.raw(`<p><a href="/settings">Settings</a></p><h1>Notification channels</h1>`).pageError(r, msg, add)
		if f, ok := takeFlash(w, r); ok {
			f.show(p)
		}
		if len(list) == 0 {
			p.raw(`<p>No channels: notifications stay in the activity feed.</p>`)
		}
		p.raw(`<ul class="channels">`)
		for _, c := range list {
			p.raw(`<li class="channel"><span><strong>`).text(c.Name).raw(`</strong> <span class="meta">`).text(c.Kind)
			if c.Default {
				p.raw(` · default`)
			}
			if c.Kind != channel.Slack && c.URL != "" { // a Slack URL is a secret, and not stored here anyway
				p.raw(` · `).text(c.URL)
			}
			if c.Topic != "" {
				p.raw(` · topic `).text(c.Topic)
			}
			if c.Settings.ChatID != "" {
				p.raw(` · chat `).text(c.Settings.ChatID)
			}
			if c.Settings.To != "" {
				p.raw(` · to `).text(c.Settings.To)
			}
			if c.HasSecret {
				p.raw(` · secret stored`)
			}
			if c.GoneAt != "" {
				p.raw(`</span> <span class="gone" role="note"><strong>Gone:</strong> `).text(goneWhy(c)).raw(`</span>`)
			} else {
				p.raw(`</span>`)
			}
			p.raw(`</span><form method="post" action="/settings/channels/`).text(c.Name).raw(`/test">`).hidden(me.csrf).
				raw(`<button type="submit">Send test</button></form><form method="post" action="/settings/channels/`).text(c.Name).raw(`/remove">`).
				hidden(me.csrf).raw(`<button type="submit">Remove</button></form>`)
			if !c.Default {
				p.raw(`<form method="post" action="/settings/channels/`).text(c.Name).raw(`/default">`).hidden(me.csrf).
					raw(`<button type="submit">Make default</button></form>`)
			}
			p.raw(`</li>`)
		}
		// A refused form keeps what was typed, except its secrets (token, Slack URL, password).
		val := func(name string) { p.value(r, add, name, "") }
		p.raw(`</ul><h2>Add a channel</h2><form method="post" action="/settings/channels" class="channel-form">`).formError(r, add, msg).
			raw(`<label for="ch-name">Name</label><input id="ch-name" name="name" type="text" required maxlength="32" pattern="[a-z0-9][a-z0-9_-]*"`)
		val("name")
		p.raw(`><label for="ch-kind">Kind</label><select id="ch-kind" name="kind">`)
		for i, k := range channel.Kinds {
			if k == channel.WebPush { // a browser subscribes itself: Settings → Notify this device (push.go)
				continue
			}
			p.option(r, add, "kind", k, k, i == 0)
		}
		p.raw(`</select><label><input name="default" type="checkbox" value="on"`).checked(r, add, "default").raw(`> Make it the default</label>` +
			`<fieldset><legend>ntfy, webhook</legend>` +
			`<label for="ch-url">URL (ntfy server, default https://ntfy.sh; the webhook's https URL)</label><input id="ch-url" name="url" type="url" maxlength="2000"`)
		val("url")
		p.raw(`><label for="ch-topic">Topic</label><input id="ch-topic" name="topic" type="text" maxlength="64"`)
		val("topic")
		p.raw(`><label for="ch-token">Token (ntfy access token, Telegram bot token, webhook signing secret)</label><input id="ch-token" name="token" type="password" autocomplete="off" maxlength="2000">` +
			`</fieldset><fieldset><legend>Telegram</legend><label for="ch-chat">Chat ID</label><input id="ch-chat" name="chat_id" type="text" maxlength="40"`)
		val("chat_id")
		p.raw(`><p class="meta">The bot token goes in Token above.</p></fieldset>` +
			`<fieldset><legend>Slack</legend><label for="ch-slack">Incoming-webhook URL (secret)</label><input id="ch-slack" name="slack_url" type="password" autocomplete="off" maxlength="2000"></fieldset>` +
			`<fieldset><legend>Email</legend><label for="ch-host">SMTP host</label><input id="ch-host" name="host" type="text" maxlength="253"`)
		val("host")
		p.raw(`><label for="ch-port">Port</label><input id="ch-port" name="port" type="text" inputmode="numeric" maxlength="5"`)
		val("port")
		p.raw(`><label for="ch-tls">TLS</label><select id="ch-tls" name="tls">`).option(r, add, "tls", "starttls", "STARTTLS (587)", true).
			option(r, add, "tls", "tls", "TLS (465)", false).raw(`</select><label for="ch-from">From</label><input id="ch-from" name="from" type="text" maxlength="254"`)
		val("from")
		p.raw(`><label for="ch-to">To</label><input id="ch-to" name="to" type="text" maxlength="254"`)
		val("to")
		p.raw(`><label for="ch-user">Username</label><input id="ch-user" name="username" type="text" autocomplete="off" maxlength="254"`)
		val("username")
		p.raw(`><label for="ch-pass">Password</label><input id="ch-pass" name="password" type="password" autocomplete="off" maxlength="2000"></fieldset>`).
			hidden(me.csrf).raw(`<button type="submit">Add channel</button></form>` +
			`<p class="meta">Secrets are sealed before they are stored and are never shown again.</p>`)
	})
}

// goneWhy says why nothing is sent to a gone channel any more, and what to do.
func goneWhy(c channel.View) string {
	at := c.GoneAt
	if t, err := time.Parse(time.RFC3339, at); err == nil {
		at = when(t)
	}
	return "since " + at + " the push service says this subscription no longer exists (the browser unsubscribed, or it expired), so nothing is sent to it. Remove it, then use Notify this device in Settings on that device again."
}

func (a *web) channelsAgain(w http.ResponseWriter, r *http.Request) func(int, string) {
	return func(status int, msg string) { a.channels(w, r, status, msg) }
}

func (a *web) addChannel(w http.ResponseWriter, r *http.Request) {
	if a.d.Channels == nil {
		http.NotFound(w, r)
		return
	}
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	in := channel.Input{Name: f("name"), Kind: f("kind"), Default: r.PostFormValue("default") != "", URL: f("url"), Topic: f("topic"),
		Token: f("token"), ChatID: f("chat_id"), Host: f("host"), TLS: f("tls"), From: f("from"), To: f("to"),
		Username: f("username"), Password: r.PostFormValue("password")}
	if in.Kind == channel.Slack {
		in.URL = f("slack_url")
	}
	if in.Kind == channel.Email {
		if port := f("port"); port != "" {
			n, err := strconv.Atoi(port)
			if err != nil || n < 1 || n > 65535 {
				a.channels(w, r, http.StatusUnprocessableEntity, "the port is a number from 1 to 65535")
				return
			}
			in.Port = n
		}
	} else {
		in.TLS = ""
	}
	_, err := a.d.Channels.Add(r.Context(), current(r).OwnerID, in)
	a.done(w, r, err, "/settings/channels", a.channelsAgain(w, r))
}

func (a *web) removeChannel(w http.ResponseWriter, r *http.Request) {
	if a.d.Channels == nil {
		http.NotFound(w, r)
		return
	}
	err := a.d.Channels.Remove(r.Context(), current(r).OwnerID, chi.URLParam(r, "name"))
	a.done(w, r, err, "/settings/channels", a.channelsAgain(w, r))
}

// defaultChannel makes a channel the owner's default.
func (a *web) defaultChannel(w http.ResponseWriter, r *http.Request) {
	if a.d.Channels == nil {
		http.NotFound(w, r)
		return
	}
	_, err := a.d.Channels.MakeDefault(r.Context(), current(r).OwnerID, chi.URLParam(r, "name"))
	a.done(w, r, err, "/settings/channels", a.channelsAgain(w, r))
}

// testChannel sends a test message now and shows whether it was delivered.
func (a *web) testChannel(w http.ResponseWriter, r *http.Request) {
	if a.d.Channels == nil {
		http.NotFound(w, r)
		return
	}
	res, err := a.d.Channels.Test(r.Context(), current(r).OwnerID, chi.URLParam(r, "name"))
	if err != nil {
		a.done(w, r, err, "/settings/channels", a.channelsAgain(w, r))
		return
	}
	f := flash{Text: "A test message was sent to " + res.Channel + "."}
	if !res.Delivered {
		f = flash{Text: "The test to " + res.Channel + " failed: " + res.Error, Error: true}
	}
	redirectWith(w, r, "/settings/channels", f)
}
