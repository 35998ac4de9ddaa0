package webapp

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Pages are written with a small builder that escapes every value (escape), not
// html/template: text/template's reflection disables the linker's dead-method elimination
// and would add about 5 MB to every Lambda bootstrap, over their cap (internal/lambdatest).

// page builds one HTML page.
type page struct{ strings.Builder }

// text writes s escaped for HTML text and quoted attribute values.
func (p *page) text(s string) *page { _, _ = escaper.WriteString(p, s); return p }

// escaper escapes the five characters that matter in HTML text and quoted attributes.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")

// raw writes trusted markup (constants of this package only).
func (p *page) raw(s string) *page { p.WriteString(s); return p }

// hidden writes the CSRF field of a form.
func (p *page) hidden(csrf string) *page {
	return p.raw(`<input type="hidden" name="csrf" value="`).text(csrf).raw(`">`)
}

var nav = []struct{ page, href, label string }{{"chat", "/", "Chat"}, {"conversations", "/conversations", "Chats"}, {"approvals", "/approvals", "Approvals"},
	{"household", "/household", "Household"}, {"activity", "/activity", "Activity"}, {"memory", "/memory", "Memory"}, {"money", "/money", "Money"},
	{"documents", "/documents", "Documents"}, {"skills", "/skills", "Skills"}, {"automations", "/automations", "Automations"}, {"settings", "/settings", "Settings"}}

// badge is the approvals link's count of writes waiting (app.js keeps it current from
// /approvals/count); hidden at zero. id is its element id ("" for none).
func badge(p *page, id string, n int) {
	p.raw(`<span class="badge"`)
	if id != "" {
		p.raw(` id="` + id + `"`)
	}
	p.raw(` data-count="` + strconv.Itoa(n) + `"`)
	if n == 0 {
		p.raw(` hidden`)
	}
	p.raw(`><span class="sr-only">, waiting: </span>` + strconv.Itoa(n) + `</span>`)
}

// pendingLink is the approvals count in a phone's compact header, beside the menu button
// (the navigation's badge is folded into the menu there); hidden at zero, and on wider
// screens, where the navigation shows its own badge.
func pendingLink(p *page, n int) {
	p.raw(`<a class="pending-link" href="/approvals"`)
	if n == 0 {
		p.raw(` hidden`)
	}
	p.raw(`>Approvals`)
	badge(p, "", n)
	p.raw(`</a>`)
}

// titles names the pages outside the navigation; the others are named by their nav label.
var titles = map[string]string{"signin": "Sign in", "story": "Turn story", "error": "Error", "conversations": "Chats", "trading": "Trading"}

// title is the document title of page name: "Approvals · Steward".
func title(name string, status int) string {
	if status == http.StatusNotFound {
		return "Not found · Steward" // whichever page looked for it
	}
	for _, n := range nav {
		if n.page == name {
			return n.label + " · Steward"
		}
	}
	if t, ok := titles[name]; ok {
		return t + " · Steward"
	}
	return "Steward"
}

// pendingWrites is the count the badge shows (0, logged, when it cannot be read: the page
// still renders).
func (a *web) pendingWrites(r *http.Request) int {
	c, err := a.d.Activity.Pending(r.Context(), current(r).OwnerID)
	if err != nil {
		a.d.Logger.Error().Err(err).Msg("web app: count the writes waiting for the badge")
		return 0
	}
	return c.Writes
}

// pendingCount answers the badge's count as JSON (GET /approvals/count).
func (a *web) pendingCount(w http.ResponseWriter, r *http.Request) {
	c, err := a.d.Activity.Pending(r.Context(), current(r).OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// themeCookie holds the owner's choice of light or dark (app.js sets it; none: the system's).
const themeCookie = "steward_theme"

// write sends the page inside the layout: a compact header (on a phone the navigation folds
// into a menu), the kill-switch banner, the page.
func (a *web) write(w http.ResponseWriter, r *http.Request, name string, status int, body func(p *page)) {
	me := current(r)
	var p page
	p.raw(`<!doctype html><html lang="en"`)
	if c, err := r.Cookie(themeCookie); err == nil && (c.Value == "dark" || c.Value == "light") {
		p.raw(` data-theme="` + c.Value + `"`)
	}
	p.raw(`><head><meta charset="utf-8">` +
		`<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">` +
		`<meta name="color-scheme" content="light dark"><meta name="theme-color" content="#0b57d0">` +
		`<meta name="csrf-token" content="`).text(me.csrf).raw(`"><title>` + title(name, status) + `</title>` +
		`<link rel="icon" href="/assets/icon.svg" type="image/svg+xml"><link rel="apple-touch-icon" href="/assets/icon-192.png">` +
		`<link rel="manifest" href="/manifest.webmanifest">` +
		`<link rel="stylesheet" href="/assets/app.css"><script src="/assets/app.js" defer></script>`)
	if name == "signin" || name == "settings" {
		p.raw(`<script src="/assets/passkey.js" defer></script>`)
	}
	p.raw(`</head><body class="page-` + name + `">` +
		`<a class="skip" href="#main">Skip to content</a><header><a class="brand" href="/">Steward</a>`)
	if me.OwnerName != "" {
		waiting := a.pendingWrites(r)
		pendingLink(&p, waiting)
		p.raw(`<button type="button" class="menu-toggle" aria-expanded="false" aria-controls="main-nav">Menu</button>` +
			`<div class="menu" id="main-nav"><nav aria-label="Main">`)
		for _, n := range nav {
			p.raw(`<a href="` + n.href + `"`)
			if n.page == name {
				p.raw(` aria-current="page"`)
			}
			p.raw(`>` + n.label)
			if n.page == "approvals" {
				badge(&p, "pending-badge", waiting)
			}
			p.raw(`</a>`)
		}
		p.raw(`</nav><form method="post" action="/signout" class="inline">`).hidden(me.csrf).raw(`<button type="submit" class="quiet">Sign out</button></form></div>`)
	}
	p.raw(`<button type="button" class="theme-toggle quiet" aria-label="Dark mode" hidden>Dark</button></header>`)
	if me.OwnerName != "" {
		a.banner(&p, r)
	}
	p.raw(`<main id="main" tabindex="-1">`)
	body(&p)
	p.raw(`</main></body></html>`)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(p.String()))
}

func signinBody(csrf, msg string) func(p *page) {
	return func(p *page) {
		p.raw(`<h1>Sign in</h1>`)
		if msg != "" {
			p.raw(`<p role="alert" class="error">`).text(msg).raw(`</p>`)
		}
		p.raw(`<form method="post" action="/signin">`).hidden(csrf).raw(`<label for="api_key">API key</label>` +
			`<input id="api_key" name="api_key" type="password" autocomplete="current-password" required>` +
			`<button type="submit">Sign in</button></form>` +
			`<p class="meta">No key yet? Whoever runs this Steward makes one: <code>steward owners add NAME</code> on its server, ` +
			`or <code>steward remote owners add NAME</code> for a deployment on AWS (docs/DEPLOY.md). The key is shown once.</p>`)
	}
}

// card writes the approval form of a suspended turn: one card per pending call, led by its
// one-line summary, its arguments as labelled fields, the exact arguments as stored and run
// and their hash one click away (a disclosure), and one submit. The stream sends the same
// markup to app.js (event.CardHTML), and app.js turns a card decided elsewhere into its
// verdict (settled).
func card(p *page, reg *tools.Registry, turnID uuid.UUID, pending []steward.PendingCall) {
	p.raw(`<form class="approval" data-turn="`).text(turnID.String()).raw(`" aria-label="Approval needed">`)
	for _, c := range pending {
		p.raw(`<fieldset class="card" data-call="`).text(c.CallID).raw(`" data-hash="`).text(c.ArgsHash).raw(`">`)
		p.raw(`<legend><span class="ask">Approve?</span> <span class="summary">`).text(reg.SayCall(c.Tool, c.Args)).raw(`</span></legend>`)
		if held := heldWhy(c); held != "" {
			p.raw(`<p class="held" role="note">`).text(held).raw(`</p>`)
		}
		if !c.Reversible {
			p.raw(`<p class="final" role="note">`).text(cantUndo).raw(`</p>`)
		}
		fields(p, reg, c.Tool, c.Args)
		if c.Preview != "" { // what the tool found before asking (install_skill: the skill and its scan)
			p.raw(`<pre class="preview">`).text(steward.Visible(c.Preview)).raw(`</pre>`)
		}
		p.raw(`<details class="exact"><summary>Exact arguments</summary><p class="meta">Tool <code class="tool">`).text(c.Tool).
			raw(`</code></p><pre class="args">`).text(steward.Visible(string(c.Args))).raw(`</pre>`)
		p.raw(`<p class="hash">args hash <code>`).text(short(c.ArgsHash)).raw(`</code></p></details>`)
		p.raw(`<label>Message if you deny (optional) <input type="text" name="message" maxlength="500"></label><div class="buttons">` +
			`<button type="button" data-choice="approve">Approve</button><button type="button" data-choice="deny">Deny</button>`)
		if c.AlwaysOffered {
			p.raw(`<button type="button" data-choice="always" title="Never ask again for this tool with exactly these arguments">Always allow exactly this</button>`)
		}
		p.raw(`</div></fieldset>`)
	}
	p.raw(`<button type="submit" class="submit">Submit decisions</button></form>`)
}

// cantUndo is what an approval card says of a call that cannot be undone once it runs (its
// effect leaves the database: notify, web requests, MCP tools); app.js words it the same.
const cantUndo = "This can't be undone once it runs."

// heldWhy says why a call waits when it is more than an ordinary ask (docs/ARCHITECTURE.md
// §3): the gate holds a call that can carry data out in a turn that read outside content
// (egress taint), and asks every write of a turn that recalled outside text from memory,
// whatever the owner's allow rules say.
func heldWhy(c steward.PendingCall) string {
	src := c.Taint
	if src == "" {
		src = "unknown source"
	}
	switch c.Reason {
	case steward.ReasonTainted:
		return "Held: this turn read outside content (" + src + "); it may carry your data out"
	case steward.ReasonUntrusted:
		return "Asked because this turn read " + src + ": your standing rules and auto mode do not apply to it"
	}
	return ""
}

func approvalsBody(list []activity.Approval, now time.Time, reg *tools.Registry) func(p *page) {
	return func(p *page) {
		p.raw(`<h1>Approvals</h1>`)
		if len(list) == 0 {
			p.raw(`<p>Nothing is waiting for you.</p>`)
		}
		for _, ap := range list {
			p.raw(`<article class="pending"><p class="meta">`).text(string(ap.Trigger)).raw(` · asked `).
				text(now.Sub(ap.CreatedAt).Round(time.Second).String()).raw(` ago`)
			if ap.ExpiresAt != nil {
				p.raw(` · expires `).text(when(*ap.ExpiresAt))
			}
			p.raw(`</p>`)
			card(p, reg, ap.TurnID, ap.Pending)
			p.raw(`<div class="result" aria-live="polite"></div></article>`)
		}
	}
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
