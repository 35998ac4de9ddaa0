package webapp

import (
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/automation"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// The Automations page (docs/AUTOMATIONS.md): the owner's automations with their schedule,
// next three runs and last result linked to its turn's story, each paused, resumed or deleted
// (deleting asks once more, in the page); and the reminders, pending first. It reads and
// writes only through automation.Service (§7).

func (a *web) automationsPage(w http.ResponseWriter, r *http.Request) {
	if a.d.Automations == nil {
		a.notFound(w, r)
		return
	}
	me := current(r)
	ctx := r.Context()
	list, err := a.d.Automations.ListAutomations(ctx, me.OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	rems, err := a.d.Automations.ListReminders(ctx, me.OwnerID, true)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	zone, err := a.d.Automations.Zone(ctx, me.OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "automations", http.StatusOK, func(p *page) {
		p.raw(`<h1>Automations</h1>`)
		if f, ok := takeFlash(w, r); ok {
			f.show(p)
		}
		p.raw(`<p class="meta">Times in your zone, `).text(zone.String()).raw(`. Ask in the chat: “every weekday at 7:30 tell me my first meeting”, “remind me at 17:00 to call the school”.</p>`)
		if len(list) == 0 {
			p.raw(`<p>No automations yet.</p>`)
		}
		p.raw(`<ul class="automations">`)
		for _, v := range list {
			automationItem(p, me.csrf, v)
		}
		p.raw(`</ul><h2>Reminders</h2>`)
		if len(rems) == 0 {
			p.raw(`<p>No reminders.</p>`)
		}
		p.raw(`<ul class="reminders">`)
		for _, rm := range rems {
			p.raw(`<li><span><strong>`).text(rm.Text).raw(`</strong> <span class="meta">`).text(rm.When).raw(` · `).text(rm.Status)
			if rm.Late {
				p.raw(`, late`)
			}
			p.raw(`</span></span>`)
			if rm.Status == store.ReminderPending {
				p.raw(`<form method="post" action="/automations/reminders/`).text(rm.ID.String()).raw(`/cancel">`).hidden(me.csrf).
					raw(`<button type="submit">Cancel</button></form>`)
			}
			p.raw(`</li>`)
		}
		p.raw(`</ul>`)
	})
}

// automationItem writes one automation: what, when, next runs, last result, its buttons.
func automationItem(p *page, csrf string, v automation.View) {
	id := v.ID.String()
	when := v.Cron
	if v.Words != "" {
		when = v.Words
	}
	if v.Kind == store.AutomationMail {
		when = "on new mail (not yet run)"
	}
	p.raw(`<li><div><strong>`).text(v.Instruction).raw(`</strong><br><span class="meta">`).text(when).raw(` · `).text(v.Status)
	if v.PausedReason != "" {
		p.raw(` — `).text(v.PausedReason)
	}
	p.raw(`</span>`)
	if len(v.NextText) > 0 {
		p.raw(`<br><span class="meta">Next: `).text(strings.Join(v.NextText, "; ")).raw(`</span>`)
	}
	if v.Last != nil {
		p.raw(`<br><span class="meta">Last run: `).text(string(v.Last.Status)).raw(` `).text(when2(v.Last))
		if v.Last.TurnID != nil {
			p.raw(` · <a href="/turns/`).text(v.Last.TurnID.String()).raw(`">its story</a>`)
		}
		p.raw(`</span>`)
	}
	p.raw(`</div><div class="actions">`)
	op, label := "pause", "Pause"
	if v.Status == store.AutomationPaused {
		op, label = "resume", "Resume"
	}
	p.raw(`<form method="post" action="/automations/`).text(id).raw(`/` + op + `">`).hidden(csrf).
		raw(`<button type="submit">` + label + `</button></form>`).
		raw(`<details class="confirm"><summary>Delete</summary><form method="post" action="/automations/`).text(id).raw(`/delete">`).hidden(csrf).
		raw(`<p>Delete this automation? Its past runs stay in Activity.</p><button type="submit" class="danger">Delete for good</button></form></details></div></li>`)
}

func when2(r *store.JobRun) string {
	return when(r.ScheduledFor)
}

// setAutomation pauses, resumes or deletes an automation, or cancels a reminder, and goes
// back to the page saying what it did.
func (a *web) setAutomation(op string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := uuid.Parse(chi.URLParam(r, "id"))
		if a.d.Automations == nil || err != nil {
			a.notFound(w, r)
			return
		}
		ctx, owner := r.Context(), current(r).OwnerID
		text := map[string]string{"pause": "Automation paused.", "resume": "Automation resumed.", "delete": "Automation deleted.", "cancel": "Reminder cancelled."}[op]
		switch op {
		case "pause":
			_, err = a.d.Automations.Pause(ctx, owner, id)
		case "resume":
			_, err = a.d.Automations.Resume(ctx, owner, id)
		case "delete":
			err = a.d.Automations.Delete(ctx, owner, id)
		case "cancel":
			_, err = a.d.Automations.CancelReminder(ctx, owner, id)
		}
		f := flash{Text: text}
		if err != nil {
			var e *steward.Error
			if !errors.As(err, &e) || e.Code == steward.CodeInternal {
				a.fail(w, r, err)
				return
			}
			f = flash{Text: e.Message, Error: true}
		}
		redirectWith(w, r, "/automations", f)
	}
}
