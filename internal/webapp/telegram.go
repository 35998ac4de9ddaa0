package webapp

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/stewardhq/steward/internal/steward"
)

// Settings → Telegram (docs/TELEGRAM.md, docs/ARCHITECTURE.md §19): the owner's linked
// Telegram chats, each with Unlink, and a button that makes a one-time link code to send to
// the deployment's bot. Each handler calls telegram.Service (§7).

const telegramCodeAction = "/settings/telegram/code"

func (a *web) telegramPage(w http.ResponseWriter, r *http.Request) {
	me := current(r)
	if a.d.Telegram == nil {
		a.write(w, r, "settings", http.StatusOK, func(p *page) {
			p.raw(`<p><a href="/settings">Settings</a></p><h1>Telegram</h1><p>Talking to Steward in Telegram is off on this server: ` +
				`its operator sets <code>STEWARD_TELEGRAM_BOT_TOKEN</code> (docs/TELEGRAM.md).</p>`)
		})
		return
	}
	chats, err := a.d.Telegram.Chats(r.Context(), me.OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "settings", http.StatusOK, func(p *page) {
		p.raw(`<p><a href="/settings">Settings</a></p><h1>Telegram</h1>`)
		if f, ok := takeFlash(w, r); ok {
			f.show(p)
		}
		p.raw(`<p class="meta">Write to Steward in Telegram as you do here: each linked chat is one conversation, and a change waits for your Approve or Deny there too.</p>`)
		p.raw(`<h2>Linked chats</h2>`)
		if len(chats) == 0 {
			p.raw(`<p>No chat is linked yet.</p>`)
		}
		p.raw(`<ul class="telegram-chats">`)
		for _, c := range chats {
			id := strconv.FormatInt(c.ChatID, 10)
			p.raw(`<li><strong>`).text(c.Title).raw(`</strong> <span class="meta">chat `).text(id).raw(` · linked `).text(c.LinkedAt.UTC().Format("2 Jan 2006")).raw(`</span>`).
				raw(`<form method="post" action="/settings/telegram/`).text(id).raw(`/unlink">`).hidden(me.csrf).
				raw(`<button type="submit">Unlink</button></form></li>`)
		}
		p.raw(`</ul><h2>Link a chat</h2><ol><li>Press the button for a one-time code.</li>` +
			`<li>Open the chat with this Steward's bot in Telegram and send it the code (within 15 minutes).</li></ol>` +
			`<form method="post" action="` + telegramCodeAction + `">`).hidden(me.csrf).
			raw(`<button type="submit">Make a link code</button></form>`)
	})
}

// makeTelegramCode shows a new code once, in the next page's flash.
func (a *web) makeTelegramCode(w http.ResponseWriter, r *http.Request) {
	if a.d.Telegram == nil {
		http.NotFound(w, r)
		return
	}
	code, exp, err := a.d.Telegram.Code(r.Context(), current(r).OwnerID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	redirectWith(w, r, "/settings/telegram", flash{Title: "Your link code", Text: code,
		Lines: []string{"Send it to the bot in the Telegram chat to link. It works once, until " + exp.UTC().Format("15:04 MST") + "."}})
}

func (a *web) unlinkTelegram(w http.ResponseWriter, r *http.Request) {
	if a.d.Telegram == nil {
		http.NotFound(w, r)
		return
	}
	chat, err := strconv.ParseInt(chi.URLParam(r, "chat"), 10, 64)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if err := a.d.Telegram.Unlink(r.Context(), current(r).OwnerID, chat); err != nil {
		if steward.ErrorCode(err) == steward.CodeNotFound { // another owner's chat, or none
			http.Error(w, "No linked Telegram chat "+strconv.FormatInt(chat, 10)+" of yours: it is unlinked already.", http.StatusNotFound)
			return
		}
		a.fail(w, r, err)
		return
	}
	redirectWith(w, r, "/settings/telegram", flash{Text: "Chat " + strconv.FormatInt(chat, 10) + " is unlinked: Steward no longer answers it."})
}
