package webapp

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/links"
	"github.com/stewardhq/steward/internal/markdown"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/rules"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// The owner's pages beyond chat (docs/WEBAPP.md): the activity feed, memory, and settings
// with the standing rules, gate mode, kill switch, budget and sessions. Each handler decodes
// the form, calls a service and renders (docs/ARCHITECTURE.md §7). Bad input re-renders the
// page with the service's message and a 422; nothing is written.

// invalid is the message of a client mistake (a *steward.Error that is not internal).
func invalid(err error) (string, bool) {
	var se *steward.Error
	if errors.As(err, &se) && se.Code != steward.CodeInternal && se.Code != "" {
		return se.Message, true
	}
	return "", false
}

// banner shows the kill switches that stop the owner's turns, on every page.
func (a *web) banner(p *page, r *http.Request) {
	v, err := a.d.Control.View(r.Context(), current(r).OwnerID)
	if err != nil {
		a.d.Logger.Error().Err(err).Msg("web app: read controls for the banner")
		return
	}
	if !v.GlobalKilled && !v.OwnerKilled {
		return
	}
	p.raw(`<div class="banner" role="alert">`)
	if v.GlobalKilled {
		p.raw(`<p><strong>Steward is stopped on this server</strong>: `).text(v.GlobalReason).raw(`. No turn runs until the operator resumes it.</p>`)
	}
	if v.OwnerKilled {
		p.raw(`<p><strong>You stopped Steward</strong>: `).text(v.OwnerReason).raw(`. No turn runs until you resume it in <a href="/settings">Settings</a>.</p>`)
	}
	p.raw(`</div>`)
}

// activityPage is the feed: the owner's job and webhook runs, then their turns, each newest
// first and each with its status.
func (a *web) activityPage(w http.ResponseWriter, r *http.Request) {
	owner := current(r).OwnerID
	feed, err := a.d.Activity.Feed(r.Context(), owner)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	runs, err := a.d.Activity.Runs(r.Context(), owner)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	deliveries, err := a.d.Activity.Deliveries(r.Context(), owner)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	notes, err := a.d.Activity.Notifications(r.Context(), owner)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "activity", http.StatusOK, activityBody(feed, runs, deliveries, notes))
}

// noteState says where a notification is: delivered (to which channel), to be tried again,
// given up, or not sent yet (no channel, or the deliverer has not run since).
func noteState(n store.Notification) string {
	switch {
	case n.DeliveredAt != nil:
		return "delivered to " + cmp.Or(n.Channel, "your channel") + " " + when(*n.DeliveredAt)
	case n.DeliveryAttempts > 0 && n.NextDeliveryAt != nil:
		return fmt.Sprintf("not delivered yet (%d attempts); next try %s", n.DeliveryAttempts, when(*n.NextDeliveryAt))
	case n.DeliveryAttempts > 0:
		return fmt.Sprintf("delivery failed after %d attempts", n.DeliveryAttempts)
	default:
		return "not sent to a channel yet"
	}
}

// activityShown is how many notifications the activity page shows.
const activityShown = 10

func activityBody(feed []steward.View, runs []store.JobRun, deliveries []steward.Event, notes []store.Notification) func(p *page) {
	return func(p *page) {
		p.raw(`<h1>Activity</h1>`)
		if len(feed) == 0 && len(runs) == 0 && len(deliveries) == 0 && len(notes) == 0 {
			p.raw(`<p>Nothing has happened yet.</p>`)
			return
		}
		activityNotes(p, notes)
		activityDeliveries(p, deliveries)
		activityRuns(p, runs)
		activityTurns(p, feed)
	}
}

// activityNotes lists the owner's latest notifications, as they were sent.
func activityNotes(p *page, notes []store.Notification) {
	if len(notes) == 0 {
		return
	}
	p.raw(`<h2>Notifications</h2><ol class="feed notifications">`)
	for _, n := range notes[:min(len(notes), activityShown)] {
		p.raw(`<li class="notification"><strong>`).text(cmp.Or(n.Title, "Notification")).raw(`</strong> <span class="meta">`).
			text(when(n.CreatedAt)).raw(` · `).text(noteState(n)).raw(`</span>`)
		if n.TurnID != nil {
			p.raw(` <a class="story" href="/turns/`).text(n.TurnID.String()).raw(`">The turn's story</a>`)
		}
		// The message as Markdown (channels send it so), through the one sanitizer (§1);
		// its line breaks kept (app.css), its one-tap links hidden.
		p.raw(`<div class="md message">`).raw(markdown.HTML(links.Hide(n.Message))).raw(`</div>`)
		if n.DeliveryError != "" {
			p.raw(`<p class="error">`).text(clip(n.DeliveryError, 200)).raw(`</p>`)
		}
		p.raw(`</li>`)
	}
	p.raw(`</ol>`)
}

// activityDeliveries lists the notification deliveries: channel, attempt, error.
func activityDeliveries(p *page, deliveries []steward.Event) {
	if len(deliveries) == 0 {
		return
	}
	p.raw(`<h2>Notification deliveries</h2><ol class="feed deliveries">`)
	for _, e := range deliveries {
		var d struct {
			Channel string `json:"channel"`
			Attempt int    `json:"attempt"`
			Error   string `json:"error"`
			Test    bool   `json:"test"`
		}
		_ = json.Unmarshal(e.Data, &d)
		p.raw(`<li class="delivery" data-kind="`).text(e.Kind).raw(`"><strong>`).text(strings.TrimPrefix(e.Kind, "notification.")).
			raw(`</strong> to <code>`).text(d.Channel).raw(`</code> <span class="meta">`).text(when(e.CreatedAt)).
			raw(` · attempt `).text(strconv.Itoa(d.Attempt))
		if d.Test {
			p.raw(` · test`)
		}
		p.raw(`</span>`)
		if d.Error != "" {
			p.raw(`<p class="error">`).text(clip(d.Error, 200)).raw(`</p>`)
		}
		p.raw(`</li>`)
	}
	p.raw(`</ol>`)
}

// activityRuns lists the job and webhook runs with their turns.
func activityRuns(p *page, runs []store.JobRun) {
	if len(runs) == 0 {
		return
	}
	p.raw(`<h2>Job and webhook runs</h2><ol class="feed runs">`)
	for _, run := range runs {
		kind := "Job"
		if run.Trigger == store.RunByWebhook {
			kind = "Webhook"
		}
		p.raw(`<li class="run" data-trigger="`).text(run.Trigger).raw(`"><strong>`).text(kind).raw(`</strong> <code>`).text(run.Job).
			raw(`</code> <span class="meta">`).text(when(run.CreatedAt)).raw(` · `).text(run.Trigger).raw(` · <span class="status">`).
			text(string(run.Status)).raw(`</span></span>`)
		if run.TurnID != nil {
			p.raw(` <a class="story" href="/turns/`).text(run.TurnID.String()).raw(`">The turn's story</a>`)
		}
		if run.Error != "" {
			p.raw(`<p class="error">`).text(clip(run.Error, 200)).raw(`</p>`)
		}
		p.raw(`</li>`)
	}
	p.raw(`</ol>`)
}

// activityTurns lists the turns: trigger, status, model, cost, answer or error.
func activityTurns(p *page, feed []steward.View) {
	if len(feed) == 0 {
		return
	}
	p.raw(`<h2>Turns</h2><ol class="feed">`)
	for _, v := range feed {
		p.raw(`<li><a class="story" href="/turns/`).text(v.TurnID.String()).raw(`">`).text(when(v.CreatedAt)).raw(`</a> <span class="meta">`).
			text(string(v.Trigger)).raw(` · `).text(string(v.Status))
		if v.Model != "" {
			p.raw(` · `).text(v.Model)
		}
		p.raw(fmt.Sprintf(` · $%.4f`, v.Usage.CostUSD)).raw(`</span>`)
		switch {
		case v.Answer != "":
			p.raw(`<p>`).text(clip(v.Answer, 200)).raw(`</p>`)
		case v.Error != "":
			p.raw(`<p class="error">`).text(clip(v.Error, 200)).raw(`</p>`)
		}
		p.raw(`</li>`)
	}
	p.raw(`</ol>`)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// settingsPage renders the settings; msg, when set, is the error of the last form.
func (a *web) settingsPage(w http.ResponseWriter, r *http.Request) {
	a.settings(w, r, http.StatusOK, "")
}

func (a *web) settings(w http.ResponseWriter, r *http.Request, status int, msg string) {
	me := current(r)
	ctx := r.Context()
	v, err := a.d.Control.View(ctx, me.OwnerID)
	var rs []steward.Rule
	if err == nil {
		rs, err = a.d.Rules.List(ctx, me.OwnerID)
	}
	var sess []store.WebSession
	if err == nil {
		sess, err = a.d.Sessions.List(ctx, me.OwnerID)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "settings", status, func(p *page) {
		p.raw(`<h1>Settings</h1>`).pageError(r, msg, "/settings/stop", "/settings/mode", "/settings/rules")
		// Kill switch.
		p.raw(`<h2>Kill switch</h2>`)
		if v.OwnerKilled {
			p.raw(`<p class="killed">Stopped: `).text(v.OwnerReason).raw(`</p><form method="post" action="/settings/resume">`).hidden(me.csrf).
				raw(`<button type="submit">Resume</button></form>`)
		} else {
			p.raw(`<p>Running. Stopping refuses new turns and stops running ones at their next step.</p>`+
				`<form method="post" action="/settings/stop">`).formError(r, "/settings/stop", msg).raw(`<label for="reason">Reason (optional)</label>`+
				`<input id="reason" name="reason" type="text" maxlength="500"`).value(r, "/settings/stop", "reason", "").raw(`>`).
				hidden(me.csrf).raw(`<button type="submit">Stop</button></form>`)
		}
		if v.GlobalKilled {
			p.raw(`<p class="killed">The operator stopped this server: `).text(v.GlobalReason).raw(`</p>`)
		}
		// Budget.
		b := v.Budget
		p.raw(`<h2>Today</h2><p class="budget">`).text(fmt.Sprintf("%d of %d messages · $%.4f of $%.2f", b.MessagesToday, b.MessageLimit, b.CostUSDToday, b.CostLimitUSD)).
			raw(` · resets `).text(when(b.ResetsAt)).raw(`</p>`)
		// Gate mode.
		p.raw(`<h2>Gate mode</h2><form method="post" action="/settings/mode">`).formError(r, "/settings/mode", msg).
			raw(`<label for="mode">Writes no rule covers</label><select id="mode" name="mode">`)
		modes := [][2]string{{control.ModeAsk, "ask me"}, {control.ModeDeny, "refuse (read-only)"}}
		if a.d.Control.AllowAutoMode {
			modes = append(modes, [2]string{control.ModeAuto, "run without asking (development)"})
		}
		for _, m := range modes {
			p.option(r, "/settings/mode", "mode", m[0], m[1], m[0] == v.Mode)
		}
		p.raw(`</select>`).hidden(me.csrf).raw(`<button type="submit">Save mode</button></form>`)
		// Standing rules.
		p.raw(`<h2>Standing rules</h2>`)
		if len(rs) == 0 {
			p.raw(`<p>No standing rules: every write asks.</p>`)
		}
		p.raw(`<ul class="rules">`)
		for _, x := range rs {
			p.raw(`<li><span><strong>`).text(x.Effect).raw(`</strong> `).text(rules.Describe(x))
			if x.Note != "" {
				p.raw(` — `).text(x.Note)
			}
			p.raw(` <span class="meta">(`).text(x.Source).raw(`)</span></span><form method="post" action="/settings/rules/`).text(x.ID.String()).raw(`/delete">`).
				hidden(me.csrf).raw(`<button type="submit">Delete</button></form></li>`)
		}
		const rule = "/settings/rules"
		p.raw(`</ul><form method="post" action="/settings/rules" class="rule">`).formError(r, rule, msg).
			raw(`<label for="rule-tool">Tool (a write tool, or * for every one)</label><input id="rule-tool" name="tool" type="text" required maxlength="100"`).
			value(r, rule, "tool", "").raw(`><label for="rule-effect">Effect</label><select id="rule-effect" name="effect">`).
			option(r, rule, "effect", "allow", "allow", true).option(r, rule, "effect", "deny", "deny", false).
			raw(`</select><label for="rule-predicate">When the arguments match (JSON object; empty for any)</label><input id="rule-predicate" name="predicate" type="text" maxlength="4000"`).
			value(r, rule, "predicate", "").raw(`><label for="rule-match">Match</label><select id="rule-match" name="match">`).
			option(r, rule, "match", "exact", "exactly these arguments, no others", true).
			option(r, rule, "match", "pattern", "these argument values, other arguments anything", false).
			raw(`</select><label for="rule-note">Note (optional)</label><input id="rule-note" name="note" type="text" maxlength="500"`).
			value(r, rule, "note", "").raw(`>`).hidden(me.csrf).raw(`<button type="submit">Add rule</button></form>`)
		a.signInSection(p, r)
		// Sessions.
		p.raw(`<h2>Sessions</h2><ul class="sessions">`)
		for _, s := range sess {
			ua := s.UserAgent
			if ua == "" {
				ua = "unknown browser"
			}
			p.raw(`<li><span>`).text(ua).raw(` · since `).text(when(s.CreatedAt)).raw(` · until `).text(when(s.ExpiresAt))
			if s.ID == me.SessionID {
				p.raw(` · <strong>this one</strong>`)
			}
			p.raw(`</span><form method="post" action="/settings/sessions/`).text(s.ID.String()).raw(`/revoke">`).hidden(me.csrf).
				raw(`<button type="submit">Revoke</button></form></li>`)
		}
		p.raw(`</ul>`)
		a.pushSection(p)
		p.raw(`<h2>More</h2><ul class="more"><li><a href="/settings/channels">Notification channels</a></li><li><a href="/settings/mcp">MCP servers</a></li><li><a href="/settings/accounts">Mail and calendar</a></li><li><a href="/settings/telegram">Telegram</a></li><li><a href="/settings/data">Your data: download or forget</a></li></ul>`)
	})
}

// done answers a settings or memory form: back to the page on success, the page with the
// message and 422 on bad input, 404 for an unknown id, 500 otherwise.
func (a *web) done(w http.ResponseWriter, r *http.Request, err error, back string, again func(status int, msg string)) {
	switch {
	case err == nil:
		http.Redirect(w, r, back, http.StatusSeeOther)
	case errors.Is(err, store.ErrNotFound) || steward.ErrorCode(err) == steward.CodeNotFound:
		again(http.StatusNotFound, "That item no longer exists.")
	default:
		msg, ok := invalid(err)
		if !ok {
			a.fail(w, r, err)
			return
		}
		status := http.StatusUnprocessableEntity
		if steward.ErrorCode(err) == steward.CodeRateLimited {
			status = http.StatusTooManyRequests
		}
		if s := steward.RetrySeconds(err); s > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(s))
		}
		again(status, msg)
	}
}

func (a *web) settingsAgain(w http.ResponseWriter, r *http.Request) func(int, string) {
	return func(status int, msg string) { a.settings(w, r, status, msg) }
}

func (a *web) addRule(w http.ResponseWriter, r *http.Request) {
	nr := rules.NewRule{Tool: r.PostFormValue("tool"), Effect: r.PostFormValue("effect"), Note: strings.TrimSpace(r.PostFormValue("note"))}
	var err error
	if pred := strings.TrimSpace(r.PostFormValue("predicate")); pred != "" { // empty: any arguments, whatever Match says
		if !json.Valid([]byte(pred)) {
			err = steward.Errorf(steward.CodeInvalid, `"When the arguments match" must be a JSON object, like {"title": "buy milk"}`)
		}
		nr.Predicate, nr.Match = json.RawMessage(pred), r.PostFormValue("match")
	}
	if err == nil {
		_, err = a.d.Rules.Create(r.Context(), current(r).OwnerID, nr)
	}
	a.done(w, r, err, "/settings", a.settingsAgain(w, r))
}

func (a *web) deleteRule(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		err = steward.ErrNotFound
	} else {
		err = a.d.Rules.Delete(r.Context(), current(r).OwnerID, id)
	}
	a.done(w, r, err, "/settings", a.settingsAgain(w, r))
}

func (a *web) setMode(w http.ResponseWriter, r *http.Request) {
	_, err := a.d.Control.SetMode(r.Context(), current(r).OwnerID, r.PostFormValue("mode"))
	a.done(w, r, err, "/settings", a.settingsAgain(w, r))
}

func (a *web) stop(w http.ResponseWriter, r *http.Request) {
	_, err := a.d.Control.Stop(r.Context(), current(r).OwnerID, r.PostFormValue("reason"))
	a.done(w, r, err, "/settings", a.settingsAgain(w, r))
}

func (a *web) resume(w http.ResponseWriter, r *http.Request) {
	_, err := a.d.Control.Resume(r.Context(), current(r).OwnerID)
	a.done(w, r, err, "/settings", a.settingsAgain(w, r))
}

// memoryPage lists the owner's facts, with the results of a search when ?q= is set.
func (a *web) memoryPage(w http.ResponseWriter, r *http.Request) {
	a.memory(w, r, http.StatusOK, "")
}

func (a *web) memory(w http.ResponseWriter, r *http.Request, status int, msg string) {
	me := current(r)
	if a.d.Memory == nil {
		a.write(w, r, "memory", http.StatusOK, func(p *page) {
			p.raw(`<h1>Memory</h1><p>Memory is off on this server.</p>`)
		})
		return
	}
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	var hits []memory.Hit
	searched := false
	if q != "" && msg == "" {
		var err error
		hits, err = a.d.Memory.Search(r.Context(), me.OwnerID, q, 0)
		if m, ok := invalid(err); ok {
			status, msg = http.StatusUnprocessableEntity, m
		} else if err != nil {
			a.fail(w, r, err)
			return
		}
		searched = err == nil
	}
	facts, err := a.d.Memory.Facts(r.Context(), me.OwnerID, 0)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "memory", status, func(p *page) {
		p.raw(`<h1>Memory</h1>`).pageError(r, msg, "/memory/facts")
		p.raw(`<form method="get" action="/memory" role="search"><label for="q">Search memory</label>` +
			`<input id="q" name="q" type="search" maxlength="500" value="`).text(q).raw(`"><button type="submit">Search</button></form>`)
		if searched {
			p.raw(`<h2>Results</h2>`)
			if len(hits) == 0 {
				p.raw(`<p>Nothing found.</p>`)
			}
			p.raw(`<ol class="hits">`)
			for _, h := range hits {
				p.raw(`<li><span class="meta">`).text(h.Kind).raw(fmt.Sprintf(` · distance %.3f`, h.Distance)).raw(`</span> `).text(h.Text).raw(`</li>`)
			}
			p.raw(`</ol>`)
		}
		const fact = "/memory/facts"
		p.raw(`<h2>Add a fact</h2><form method="post" action="/memory/facts" class="fact">`).formError(r, fact, msg).
			raw(`<label for="fact-kind">Kind</label><select id="fact-kind" name="kind">`)
		for i, k := range memory.FactKinds {
			p.option(r, fact, "kind", k, k, i == 0)
		}
		p.raw(`</select><label for="fact-subject">Subject (optional)</label><input id="fact-subject" name="subject" type="text" maxlength="200"`).
			value(r, fact, "subject", "").raw(`><label for="fact-content">Fact</label>` +
			// The parser drops a newline right after <textarea>: this one, not the user's.
			`<textarea id="fact-content" name="content" rows="2" required maxlength="2000">` + "\n").
			text(typed(r, fact, "content")).raw(`</textarea>`).hidden(me.csrf).raw(`<button type="submit">Remember</button></form>`)
		p.raw(`<h2>Facts</h2>`)
		if len(facts) == 0 {
			p.raw(`<p>No facts yet.</p>`)
		}
		p.raw(`<ul class="facts">`)
		for _, f := range facts {
			p.raw(`<li><span><span class="meta">`).text(f.Kind)
			if f.Subject != "" {
				p.raw(` · `).text(f.Subject)
			}
			p.raw(`</span> `).text(f.Content).raw(` <span class="meta">(`).text(f.Provenance).raw(`)</span></span>`).
				raw(`<form method="post" action="/memory/facts/`).text(f.ID.String()).raw(`/forget">`).hidden(me.csrf).
				raw(`<button type="submit">Forget</button></form></li>`)
		}
		p.raw(`</ul>`)
	})
}

func (a *web) memoryAgain(w http.ResponseWriter, r *http.Request) func(int, string) {
	return func(status int, msg string) { a.memory(w, r, status, msg) }
}

func (a *web) addFact(w http.ResponseWriter, r *http.Request) {
	if a.d.Memory == nil {
		http.NotFound(w, r)
		return
	}
	_, _, err := a.d.Memory.AddFact(r.Context(), current(r).OwnerID, memory.NewFact{Kind: r.PostFormValue("kind"),
		Subject: r.PostFormValue("subject"), Content: r.PostFormValue("content")})
	a.done(w, r, err, "/memory", a.memoryAgain(w, r))
}

func (a *web) forgetFact(w http.ResponseWriter, r *http.Request) {
	if a.d.Memory == nil {
		http.NotFound(w, r)
		return
	}
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		err = steward.ErrNotFound
	} else {
		err = a.d.Memory.ForgetFact(r.Context(), current(r).OwnerID, id)
	}
	a.done(w, r, err, "/memory", a.memoryAgain(w, r))
}
