package channel

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/stewardhq/steward/internal/egress"
)

// Web Push (docs/ARCHITECTURE.md §7): a browser's push subscription is a channel of kind
// webpush. Its endpoint (a capability URL of the browser's push service) and its keys are
// sealed like any channel's secrets; the stored url is only the push service's origin. A
// message is sent encrypted for the browser (RFC 8291, aes128gcm) and signed with the
// deployment's VAPID key (RFC 8292) through the sender's egress guard; the service worker
// (webapp assets/sw.js) shows it, with an Approve and a Deny action when it carries the
// one-tap links.

// Subscription is a browser's PushSubscription as its toJSON() gives it.
type Subscription struct {
	Endpoint string `json:"endpoint"`
	Keys     struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// VAPID is the deployment's Web Push key pair and contact (STEWARD_VAPID_*, checked by
// config.CheckVAPID).
type VAPID struct {
	PublicKey, PrivateKey, Subject string
}

// Action is a button of a push notification: Approve or Deny, and the one-tap link it posts
// to (internal/links).
type Action struct {
	Action string `json:"action"` // "approve" or "deny"
	Title  string `json:"title"`
	URL    string `json:"url"`
}

// PushPayload is what the service worker receives, decrypted: the notification to show and
// where a tap on its body or on an action leads.
type PushPayload struct {
	Title   string   `json:"title"`
	Body    string   `json:"body"`
	Tag     string   `json:"tag"`
	URL     string   `json:"url"`
	Actions []Action `json:"actions,omitempty"`
}

// ErrGone is the push service's answer that a subscription no longer exists (404, 410): the
// browser unsubscribed or the subscription expired. The channel is then marked gone.
var ErrGone = errors.New("the push subscription is gone")

// pushLimit bounds a push notification's body: the whole payload must fit one 4096-byte
// record (RFC 8291 §4), and lock screens show a few lines anyway.
const pushLimit = 1500

// ErrPushOff words why this deployment cannot send Web Push.
var ErrPushOff = invalid("Web Push is not configured on this server: the operator sets STEWARD_VAPID_PUBLIC_KEY and STEWARD_VAPID_PRIVATE_KEY (steward vapid-keys prints a pair)")

// checkPush validates a subscription and splits it: the push service's origin (public), the
// endpoint and keys (secrets).
func (t *Target) checkPush(s *Subscription) error {
	if s == nil || s.Endpoint == "" {
		return invalid("a webpush channel needs the browser's subscription (endpoint and keys): use Settings → Notify this device in the web app")
	}
	if len(s.Endpoint) > 2000 {
		return invalid("the subscription's endpoint is longer than 2000 characters")
	}
	u, err := url.Parse(s.Endpoint)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return invalid("the subscription's endpoint is not an https URL")
	}
	p256dh, err1 := decodeKey(s.Keys.P256dh)
	auth, err2 := decodeKey(s.Keys.Auth)
	if err1 != nil || len(p256dh) != 65 {
		return invalid("the subscription's p256dh key is not a P-256 public key in base64url")
	}
	if _, err := ecdh.P256().NewPublicKey(p256dh); err != nil {
		return invalid("the subscription's p256dh key is not a point of P-256")
	}
	if err2 != nil || len(auth) != 16 {
		return invalid("the subscription's auth secret is not 16 bytes in base64url")
	}
	t.URL = "https://" + u.Host
	t.Secrets.URL = s.Endpoint
	t.Secrets.P256dh = base64.RawURLEncoding.EncodeToString(p256dh)
	t.Secrets.Auth = base64.RawURLEncoding.EncodeToString(auth)
	return nil
}

// decodeKey decodes base64url with or without padding (browsers send it unpadded).
func decodeKey(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// push sends m to a subscription, encrypted and signed; a 404 or 410 is ErrGone.
func (s *Sender) push(ctx context.Context, t Target, m Message) (bool, error) {
	if s.VAPID == nil {
		return true, ErrPushOff
	}
	p := PushPayload{Title: truncateRunes(m.Title, 120), Body: PushText(m.Text), Tag: m.ID.String(), URL: "/activity", Actions: m.Actions}
	if p.Title == "" {
		p.Title = "Steward"
	}
	if len(m.Actions) > 0 {
		p.URL = "/approvals"
	}
	body, err := json.Marshal(p)
	if err != nil {
		return true, err
	}
	sub := &webpush.Subscription{Endpoint: t.Secrets.URL, Keys: webpush.Keys{P256dh: t.Secrets.P256dh, Auth: t.Secrets.Auth}}
	resp, err := webpush.SendNotificationWithContext(ctx, body, sub, &webpush.Options{
		HTTPClient: s.client,
		// webpush-go prefixes anything but an https URL with "mailto:" itself.
		Subscriber:      strings.TrimPrefix(s.VAPID.Subject, "mailto:"),
		VAPIDPublicKey:  s.VAPID.PublicKey,
		VAPIDPrivateKey: s.VAPID.PrivateKey,
		// An approval waits a day at most (links.DefaultTTL); the push service keeps it as long.
		TTL:     24 * 60 * 60,
		Urgency: webpush.UrgencyHigh,
	})
	if err != nil {
		return errors.Is(err, egress.ErrBlocked), t.errorf("%v", redactURL(err))
	}
	if c := resp.StatusCode; c == http.StatusNotFound || c == http.StatusGone {
		resp.Body.Close()
		return true, fmt.Errorf("%w: the push service answered %d (the browser unsubscribed or the subscription expired); use Notify this device in Settings again", ErrGone, c)
	}
	return answered(resp, "the push service")
}

// PushText is the text of a push notification's body: Markdown as plain text, within
// pushLimit bytes.
func PushText(text string) string {
	return fit(plainStyle.pieces(parseMarkdown(text)), pushLimit, byteLen)
}
