package webapp

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
)

// The household inbox (docs/API.md, "Household approvals"): GET /household lists the
// requests addressed to the signed-in member by the other members of their household, and
// POST /household/{id} (CSRF) records their vote through household.Service.Decide — the
// service of POST /v1/household/approvals/{id}, so the same exactly-once resume. The page
// shows what the service's inbox holds (the call, who asked, the amount, the expiry) and
// nothing else of the requester's data.

func (a *web) householdPage(w http.ResponseWriter, r *http.Request) {
	a.household(w, r, http.StatusOK, nil)
}

// outcome is the result of a vote, shown above the inbox.
type outcome struct {
	title, text string
	failed      bool
}

func (a *web) household(w http.ResponseWriter, r *http.Request, status int, out *outcome) {
	list, err := a.d.Household.Inbox(r.Context(), current(r).OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	now := a.now.Now()
	a.write(w, r, "household", status, func(p *page) {
		p.raw(`<h1>Household</h1>`)
		if f, ok := takeFlash(w, r); ok {
			f.show(p)
		}
		if out != nil {
			class := "outcome"
			if out.failed {
				class += " error"
			}
			p.raw(`<section class="` + class + `" role="status"><h2>`).text(out.title).raw(`</h2><p>`).text(out.text).raw(`</p></section>`)
		}
		p.raw(`<p class="meta">Calls other members of your household asked to make that need your approval too. ` +
			`You see the call and who asked, nothing else of theirs.</p>`)
		if len(list) == 0 {
			p.raw(`<p>Nothing from your household is waiting for you. (You are in a household only if the operator added you with <code>steward households add</code>.)</p>`)
		}
		for _, ap := range list {
			p.raw(`<article class="household-request" data-status="`).text(ap.Status).raw(`"><h2>`).text(ap.RequesterName).
				raw(` asks to run <code class="tool">`).text(ap.Tool).raw(`</code></h2>`)
			p.raw(`<pre class="args">`).text(ap.Summary).raw(`</pre>`)
			if ap.Amount != "" {
				p.raw(`<p class="amount">Amount: <strong>`).text(ap.Amount).raw(`</strong></p>`)
			}
			p.raw(`<p class="meta">asked `).text(now.Sub(ap.CreatedAt).Round(time.Second).String()).raw(` ago · expires `).text(when(ap.ExpiresAt)).raw(`</p>`)
			switch ap.Status {
			case steward.VotePending:
				action := "/household/" + ap.ID.String()
				p.raw(`<form method="post" action="`).text(action).raw(`">`).hidden(current(r).csrf).
					raw(`<label>Message (optional) <input type="text" name="message" maxlength="500"`).value(r, action, "message", "").
					raw(`></label><div class="buttons">` +
						`<button type="submit" name="decision" value="approve">Approve</button>` +
						`<button type="submit" name="decision" value="deny">Deny</button></div></form>`)
			case steward.VoteExpired:
				p.raw(`<p class="status expired"><strong>Expired</strong>: the request's wait ended before it was decided; it can no longer be approved.</p>`)
			case steward.VoteApproved:
				p.raw(`<p class="status">You <strong>approved</strong> this`).raw(decidedAt(ap.DecidedAt)).raw(`.</p>`)
			case steward.VoteDenied:
				p.raw(`<p class="status">You <strong>denied</strong> this`).raw(decidedAt(ap.DecidedAt)).raw(`.</p>`)
			default:
				p.raw(`<p class="status">Closed: the request was decided without your vote.</p>`)
			}
			p.raw(`</article>`)
		}
	})
}

// decidedAt is " on <time>" for a decision's time (no user text: safe to write raw).
func decidedAt(t *time.Time) string {
	if t == nil {
		return ""
	}
	return " on " + when(*t)
}

// decideHousehold records the member's vote: POST /household/{id}, form fields decision
// (approve or deny) and message. A recorded vote redirects (303) to the inbox, which says
// what it did; a refused one answers the inbox with why: 409 when the request was already
// decided or expired, 404 for an unknown or foreign id, 422 for a bad form.
func (a *web) decideHousehold(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		a.household(w, r, http.StatusNotFound, &outcome{title: "Not found", text: "There is no such request in your inbox. Nothing was changed.", failed: true})
		return
	}
	var approve bool
	switch r.PostFormValue("decision") {
	case "approve":
		approve = true
	case "deny":
	default:
		a.household(w, r, http.StatusUnprocessableEntity, &outcome{title: "Choose Approve or Deny", text: "The form did not say approve or deny. Nothing was changed.", failed: true})
		return
	}
	ap, err := a.d.Household.Decide(r.Context(), current(r).OwnerID, id, approve, strings.TrimSpace(r.PostFormValue("message")))
	if err != nil {
		var se *steward.Error
		switch {
		case ap.ID != uuid.Nil:
			// The vote is recorded; resuming the requester's turn failed.
			a.d.Logger.Error().Err(err).Msg("web app: resume after a household vote")
			a.household(w, r, http.StatusOK, &outcome{title: "Recorded", text: "Your vote is recorded, but Steward could not go on with " + ap.RequesterName + "'s turn yet; they can see it in their approvals.", failed: true})
		case !errors.As(err, &se) || se.Code == steward.CodeInternal || se.Code == "":
			a.fail(w, r, err)
		case se.Code == steward.CodeNotFound:
			a.household(w, r, http.StatusNotFound, &outcome{title: "Not found", text: "There is no such request in your inbox. Nothing was changed.", failed: true})
		case se.Code == steward.CodeConflict && strings.Contains(se.Message, "expired"):
			a.household(w, r, http.StatusConflict, &outcome{title: "Expired", text: se.Message, failed: true})
		case se.Code == steward.CodeConflict:
			a.household(w, r, http.StatusConflict, &outcome{title: "Already decided", text: se.Message, failed: true})
		default:
			a.household(w, r, http.StatusUnprocessableEntity, &outcome{title: "Not recorded", text: se.Message, failed: true})
		}
		return
	}
	out := flash{Title: "Approved", Text: "You approved " + ap.RequesterName + "'s " + ap.Tool + ". It runs once every member it waits for has approved."}
	if !approve {
		out = flash{Title: "Denied", Text: "You denied " + ap.RequesterName + "'s " + ap.Tool + ". It will not run; " + ap.RequesterName + "'s turn went on without it."}
	}
	redirectWith(w, r, "/household", out)
}
