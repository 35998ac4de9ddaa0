// Package channel holds the owner's notification channels: their kinds —
// ntfy, Telegram, Slack, email, the signed HTTPS webhook and a browser's Web Push
// subscription — how each is checked when it is
// set up, how a message is formatted for it, and how it is sent, every connection through the
// SSRF guard of internal/egress (docs/ARCHITECTURE.md §8). Secrets (tokens, passwords, a
// Slack webhook URL) are sealed with AES-GCM (Sealer) before they reach the database and are
// never returned. internal/delivery sends stored notifications through it; Service is what
// the faces call.
package channel

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
)

// The kinds of channel.
const (
	Webhook  = "webhook"
	Ntfy     = "ntfy"
	Telegram = "telegram"
	Slack    = "slack"
	Email    = "email"
	WebPush  = "webpush"
)

// Kinds lists the kinds in the order the docs name them.
var Kinds = []string{Ntfy, Telegram, Slack, Email, Webhook, WebPush}

// TelegramAPI is the Bot API's base URL.
const TelegramAPI = "https://api.telegram.org"

// Input is a channel to set up, as the API, the CLI and the web app send it. Token,
// Password and (for Slack) URL are secrets: stored sealed, never returned.
type Input struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Default bool   `json:"default,omitempty"`
	// URL: the webhook's URL, the ntfy server (https://ntfy.sh), the Slack incoming-webhook
	// URL (secret), or the Telegram Bot API's base URL (empty: api.telegram.org).
	URL   string `json:"url,omitempty"`
	Topic string `json:"topic,omitempty"`
	// Token: ntfy access token, Telegram bot token, or the webhook's signing secret.
	Token  string `json:"token,omitempty"`
	ChatID string `json:"chat_id,omitempty"`
	// Email: the SMTP server, the sender and recipient, and the login.
	Host     string `json:"host,omitempty"`
	Port     int    `json:"port,omitempty"`
	TLS      string `json:"tls,omitempty"` // "starttls" (default; port 587) or "tls" (implicit; port 465)
	From     string `json:"from,omitempty"`
	To       string `json:"to,omitempty"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// Subscription is a webpush channel's browser subscription (PushSubscription.toJSON());
	// its endpoint and keys are secrets.
	Subscription *Subscription `json:"subscription,omitempty"`
}

// Settings are a channel's public settings, stored as JSON next to the sealed secret.
type Settings struct {
	ChatID   string `json:"chat_id,omitempty"`
	Host     string `json:"host,omitempty"`
	Port     int    `json:"port,omitempty"`
	TLS      string `json:"tls,omitempty"`
	From     string `json:"from,omitempty"`
	To       string `json:"to,omitempty"`
	Username string `json:"username,omitempty"`
}

// Secrets are a channel's secrets, sealed as one JSON object.
type Secrets struct {
	Token    string `json:"token,omitempty"`
	URL      string `json:"url,omitempty"` // a Slack webhook URL, a Web Push endpoint
	Password string `json:"password,omitempty"`
	// P256dh and Auth are a Web Push subscription's keys (unpadded base64url).
	P256dh string `json:"p256dh,omitempty"`
	Auth   string `json:"auth,omitempty"`
}

func (s Secrets) empty() bool { return s == Secrets{} }

// Target is everything a send needs: the kind, public settings and opened secrets.
type Target struct {
	Name     string
	Kind     string
	URL      string
	Topic    string
	Settings Settings
	Secrets  Secrets
}

var (
	nameRe          = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)
	telegramTokenRe = regexp.MustCompile(`^\d+:[A-Za-z0-9_-]{30,}$`)
	chatIDRe        = regexp.MustCompile(`^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$`)
	topicRe         = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	hostRe          = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$`)
)

func invalid(format string, args ...any) error {
	return steward.Errorf(steward.CodeInvalid, format, args...)
}

// check validates in (without network) and splits it into the stored parts: url, topic,
// public settings and secrets. URLs are checked against the guard by the service.
func (in *Input) check() (Target, error) {
	in.Name = strings.TrimSpace(in.Name)
	in.Kind = strings.ToLower(strings.TrimSpace(in.Kind))
	if !nameRe.MatchString(in.Name) {
		return Target{}, invalid("a channel name is 1–32 lower-case letters, digits, - and _, starting with a letter or digit")
	}
	t := Target{Name: in.Name, Kind: in.Kind}
	for _, f := range []struct{ name, v string }{{"url", in.URL}, {"token", in.Token}, {"password", in.Password}} {
		if len(f.v) > 2000 {
			return Target{}, invalid("the %s is longer than 2000 characters", f.name)
		}
	}
	check, ok := kindChecks[in.Kind]
	if !ok {
		return Target{}, invalid("unknown channel kind %q: one of %s", in.Kind, strings.Join(Kinds, ", "))
	}
	if err := check(in, &t); err != nil {
		return Target{}, err
	}
	return t, nil
}

// kindChecks validates the input of each kind of channel into its target.
var kindChecks = map[string]func(*Input, *Target) error{
	Webhook:  (*Input).checkWebhook,
	Ntfy:     (*Input).checkNtfy,
	Telegram: (*Input).checkTelegram,
	Slack:    (*Input).checkSlack,
	Email:    (*Input).checkEmail,
	WebPush:  func(in *Input, t *Target) error { return t.checkPush(in.Subscription) },
}

func (in *Input) checkWebhook(t *Target) error {
	if in.URL == "" {
		return invalid("a webhook channel needs a url")
	}
	if in.Topic != "" && !topicRe.MatchString(in.Topic) {
		return invalid("the topic is 1–64 letters, digits, - and _")
	}
	t.URL, t.Topic, t.Secrets.Token = in.URL, in.Topic, in.Token
	return nil
}

func (in *Input) checkNtfy(t *Target) error {
	if in.URL == "" {
		in.URL = "https://ntfy.sh"
	}
	if !topicRe.MatchString(in.Topic) {
		return invalid("an ntfy channel needs a topic: 1–64 letters, digits, - and _")
	}
	t.URL, t.Topic, t.Secrets.Token = strings.TrimRight(in.URL, "/"), in.Topic, in.Token
	return nil
}

func (in *Input) checkTelegram(t *Target) error {
	if !telegramTokenRe.MatchString(in.Token) {
		return invalid("the Telegram bot token does not have the shape <digits>:<at least 30 letters, digits, - or _> (from @BotFather)")
	}
	if !chatIDRe.MatchString(in.ChatID) {
		return invalid("the Telegram chat_id is a number (e.g. 123456789 or -100…) or a @channelusername")
	}
	if in.URL == "" {
		in.URL = TelegramAPI
	}
	t.URL, t.Settings.ChatID, t.Secrets.Token = strings.TrimRight(in.URL, "/"), in.ChatID, in.Token
	return nil
}

func (in *Input) checkSlack(t *Target) error {
	if in.URL == "" {
		return invalid("a Slack channel needs its incoming-webhook url")
	}
	t.Secrets.URL = in.URL
	return nil
}

func (in *Input) checkEmail(t *Target) error {
	if !hostRe.MatchString(in.Host) {
		return invalid("an email channel needs the SMTP server's host name")
	}
	if err := in.checkSMTPPort(); err != nil {
		return err
	}
	for _, a := range []struct{ name, v string }{{"from", in.From}, {"to", in.To}} {
		if addr, err := mail.ParseAddress(a.v); err != nil || addr.Name != "" || len(a.v) > 254 || strings.ContainsAny(a.v, "\r\n") {
			return invalid("%s is not a plain email address (name@example.com)", a.name)
		}
	}
	if (in.Username == "") != (in.Password == "") || len(in.Username) > 254 {
		return invalid("give both username and password for the SMTP login, or neither")
	}
	t.Settings = Settings{Host: strings.ToLower(in.Host), Port: in.Port, TLS: in.TLS, From: in.From, To: in.To, Username: in.Username}
	t.Secrets.Password = in.Password
	return nil
}

// checkSMTPPort settles the TLS mode and its default port.
func (in *Input) checkSMTPPort() error {
	switch in.TLS = strings.ToLower(in.TLS); in.TLS {
	case "", "starttls":
		in.TLS = "starttls"
		if in.Port == 0 {
			in.Port = 587
		}
	case "tls":
		if in.Port == 0 {
			in.Port = 465
		}
	default:
		return invalid(`tls is "starttls" or "tls" (plain SMTP is not offered)`)
	}
	if in.Port < 1 || in.Port > 65535 {
		// The guard allows 25, 465 and 587 (and STEWARD_EGRESS_ALLOW's exact addresses).
		return invalid("the SMTP port is a number from 1 to 65535 (usually 587 or 465)")
	}
	return nil
}

// checkURL returns the URL every HTTP kind sends to (for validation against the guard):
// the webhook's URL, the ntfy server, the Slack webhook, the Telegram API; "" for email.
func (t Target) checkURL() string {
	switch t.Kind {
	case Slack, WebPush:
		return t.Secrets.URL
	case Email:
		return ""
	}
	return t.URL
}

// View is a channel as a client sees it: public settings only, and whether a secret is set.
type View struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Default bool   `json:"default"`
	URL     string `json:"url,omitempty"`
	Topic   string `json:"topic,omitempty"`
	Settings
	HasSecret bool   `json:"has_secret"`
	CreatedAt string `json:"created_at"`
	// GoneAt is when the destination answered that it no longer exists (a Web Push
	// subscription's 404 or 410); such a channel is no longer sent to.
	GoneAt string `json:"gone_at,omitempty"`
}

// settingsJSON encodes the public settings.
func (s Settings) json() json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// redact removes any secret from an error text (a client library may quote a URL).
func (t Target) redact(s string) string {
	for _, v := range []string{t.Secrets.Token, t.Secrets.URL, t.Secrets.Password, t.Secrets.P256dh, t.Secrets.Auth} {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "[redacted]")
			s = strings.ReplaceAll(s, url.PathEscape(v), "[redacted]")
		}
	}
	return s
}

// errorf is a send error with the secrets of t removed.
func (t Target) errorf(format string, args ...any) error {
	return fmt.Errorf("%s", t.redact(fmt.Sprintf(format, args...)))
}
