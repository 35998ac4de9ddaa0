package webapp

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/steward"
)

// Settings → Notify this device (docs/ARCHITECTURE.md §7, Web Push): assets/push.js asks the
// browser for a push subscription with the server's VAPID public key and posts it here; it is
// saved as a channel of kind webpush through channel.Service, so it is listed, tested,
// removed and made the default on /settings/channels like any channel. Without VAPID keys
// (or STEWARD_SECRET_KEY) the section says in words what the operator has to set.

// pushSection writes the settings page's Notify this device section.
func (a *web) pushSection(p *page) {
	p.raw(`<section id="push" class="push" aria-labelledby="push-title"`)
	key, err := a.d.Channels.PushKey()
	if err != nil {
		p.raw(`><h2 id="push-title">Notify this device</h2><p class="meta">`).text(pushOff(err)).raw(`</p></section>`)
		return
	}
	p.raw(` data-vapid-key="`).text(key).raw(`"><h2 id="push-title">Notify this device</h2>` +
		`<p>Get a notification on this device when Steward waits for your approval, with Approve and Deny on it, even on the lock screen.</p>` +
		`<label for="push-name">Name of this device</label>` +
		`<input id="push-name" type="text" maxlength="32" pattern="[a-z0-9][a-z0-9_-]*" value="this-device" autocomplete="off">` +
		`<button type="button" id="push-subscribe">Notify this device</button>` +
		`<p id="push-status" role="status" aria-live="polite"></p>` +
		`<p class="meta">It becomes one of your <a href="/settings/channels">notification channels</a>, where you can test it, remove it or make it the default.</p>` +
		`</section><script src="/assets/push.js" defer></script>`)
}

// pushOff is the words of why this server cannot send Web Push.
func pushOff(err error) string {
	if msg, ok := invalid(err); ok {
		return msg
	}
	return "Push notifications are off on this server."
}

// subscribePush saves the browser's subscription (POST /settings/push, JSON
// {"name", "subscription"} with the X-CSRF-Token header) as a webpush channel; it answers the
// channel, or {"error"} in words with 4xx and nothing stored.
func (a *web) subscribePush(w http.ResponseWriter, r *http.Request) {
	if a.d.Channels == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Notification channels are off on this server."})
		return
	}
	var in struct {
		Name         string                `json:"name"`
		Subscription *channel.Subscription `json:"subscription"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<10)).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "The subscription is not the JSON this page sends: reload the page and try again."})
		return
	}
	v, err := a.d.Channels.Add(r.Context(), current(r).OwnerID, channel.Input{Name: strings.TrimSpace(in.Name), Kind: channel.WebPush, Subscription: in.Subscription})
	if err == nil {
		writeJSON(w, http.StatusCreated, v)
		return
	}
	msg, ok := invalid(err)
	if !ok {
		a.fail(w, r, err)
		return
	}
	status := http.StatusUnprocessableEntity
	if steward.ErrorCode(err) == steward.CodeConflict {
		status = http.StatusConflict
	}
	writeJSON(w, status, map[string]string{"error": msg})
}
