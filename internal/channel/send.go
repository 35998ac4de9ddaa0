package channel

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/egress"
)

// Message is one notification to send.
type Message struct {
	ID        uuid.UUID
	Title     string
	Text      string
	CreatedAt time.Time
	// Buttons are a row of Telegram inline-keyboard buttons (callback buttons: pressing one
	// sends its Data to the bot's webhook, POST /telegram/callback); other kinds ignore them.
	Buttons []Button
	// Actions are a Web Push notification's Approve and Deny; other kinds ignore them.
	Actions []Action
}

// Button is an inline-keyboard callback button. Data is at most 64 bytes (the Bot API's
// limit for callback_data).
type Button struct {
	Text string `json:"text"`
	Data string `json:"callback_data"`
}

// Payload is the JSON body the webhook kind posts: "text" for Slack-style receivers;
// "topic", "title" and "message" for ntfy's JSON publishing; the rest for anything else.
type Payload struct {
	Text           string    `json:"text"`
	Topic          string    `json:"topic,omitempty"`
	Title          string    `json:"title,omitempty"`
	Message        string    `json:"message"`
	NotificationID uuid.UUID `json:"notification_id"`
	CreatedAt      time.Time `json:"created_at"`
}

// Sender sends messages to channels. Every HTTP request goes through Guard's client (https
// on 443 unless STEWARD_EGRESS_ALLOW exempts an address); SMTP connections through a guard of
// the same allowances on the SMTP ports.
type Sender struct {
	// Options are the guards' options: Allow (STEWARD_EGRESS_ALLOW), Lookup and RootCAs (a
	// test's); scheme, ports and timeout are the sender's.
	Options egress.Options
	// Timeout bounds one attempt; zero means 15 seconds.
	Timeout time.Duration
	// VAPID signs Web Push messages; nil refuses webpush channels (ErrPushOff).
	VAPID *VAPID

	once    sync.Once
	http    *egress.Guard
	smtp    *egress.Guard
	client  *http.Client
	rootCAs *x509.CertPool
}

// NewSender returns a sender whose guards use opts (its Allow, Lookup and RootCAs).
func NewSender(opts egress.Options) *Sender {
	return &Sender{Options: opts}
}

func (s *Sender) init() {
	s.once.Do(func() {
		timeout := s.Timeout
		if timeout <= 0 {
			timeout = 15 * time.Second
		}
		opts := s.Options
		opts.AllowHTTP, opts.Timeout = false, timeout
		s.http = egress.NewGuard(opts)
		s.client = s.http.Client()
		opts.Ports = []uint16{25, 465, 587}
		s.smtp = egress.NewGuard(opts)
		s.rootCAs = opts.RootCAs
		if s.Timeout <= 0 {
			s.Timeout = timeout
		}
	})
}

// Check validates a target's destination against the guard as a send would meet it: the
// URL's scheme, host and port, and every address its host resolves to.
func (s *Sender) Check(ctx context.Context, t Target) error {
	s.init()
	if t.Kind == Email {
		host := t.Settings.Host
		_, err := s.smtp.CheckDestination(ctx, "https://"+host+":"+strconv.Itoa(t.Settings.Port))
		return err
	}
	_, err := s.http.CheckDestination(ctx, t.checkURL())
	return err
}

// Send delivers m to t once. final reports an error retrying cannot change (a refused
// destination, a 4xx other than 408 and 429, a permanent SMTP reply). Errors never carry
// the target's secrets.
func (s *Sender) Send(ctx context.Context, t Target, m Message) (final bool, err error) {
	s.init()
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	switch t.Kind {
	case Webhook:
		body, err := json.Marshal(Payload{Text: Plain(m.Title, m.Text, webhookLimit), Topic: t.Topic, Title: m.Title,
			Message: m.Text, NotificationID: m.ID, CreatedAt: m.CreatedAt})
		if err != nil {
			return true, err
		}
		h := http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {m.ID.String()}}
		if t.Secrets.Token != "" {
			// Standard Webhooks signature: base64 HMAC-SHA256 of "id.timestamp.body".
			ts := strconv.FormatInt(time.Now().Unix(), 10)
			mac := hmac.New(sha256.New, []byte(t.Secrets.Token))
			fmt.Fprintf(mac, "%s.%s.%s", m.ID, ts, body)
			h.Set("Webhook-Id", m.ID.String())
			h.Set("Webhook-Timestamp", ts)
			h.Set("Webhook-Signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		}
		return s.post(ctx, t, t.URL, h, body)
	case Ntfy:
		body, err := json.Marshal(map[string]any{"topic": t.Topic, "title": truncateBytes(m.Title, 250),
			"message": NtfyText(m.Text), "markdown": true})
		if err != nil {
			return true, err
		}
		h := http.Header{"Content-Type": {"application/json"}, "Markdown": {"yes"}}
		if t.Secrets.Token != "" {
			h.Set("Authorization", "Bearer "+t.Secrets.Token)
		}
		return s.post(ctx, t, t.URL, h, body)
	case Telegram:
		body, err := json.Marshal(telegramSend(t, m))
		if err != nil {
			return true, err
		}
		return s.post(ctx, t, t.URL+"/bot"+t.Secrets.Token+"/sendMessage", http.Header{"Content-Type": {"application/json"}}, body)
	case Slack:
		// Slack unfurls no link: its servers would fetch it (docs/SECURITY.md).
		body, err := json.Marshal(map[string]any{"text": SlackText(m.Title, m.Text), "mrkdwn": true,
			"unfurl_links": false, "unfurl_media": false})
		if err != nil {
			return true, err
		}
		return s.post(ctx, t, t.Secrets.URL, http.Header{"Content-Type": {"application/json"}}, body)
	case Email:
		return s.sendMail(ctx, t, m)
	case WebPush:
		return s.push(ctx, t, m)
	}
	return true, fmt.Errorf("unknown channel kind %q", t.Kind)
}

// telegramSend is the sendMessage of m to t's chat: MarkdownV2, its buttons (those Telegram
// takes: text, and data of at most 64 bytes) in one row.
func telegramSend(t Target, m Message) map[string]any {
	msg := TelegramMessage(t.Settings.ChatID, TelegramText(m.Title, m.Text))
	msg["parse_mode"] = "MarkdownV2"
	var row []Button
	for _, b := range m.Buttons {
		if b.Text != "" && b.Data != "" && len(b.Data) <= 64 {
			row = append(row, b)
		}
	}
	if len(row) > 0 {
		msg["reply_markup"] = map[string]any{"inline_keyboard": [][]Button{row}}
	}
	return msg
}

// TelegramMessage is the parameters of a Bot API sendMessage of text to chat, with link
// previews off: Telegram's servers fetch a previewed URL, and a link in a message Steward
// sends may come from a model that read a stranger's words (docs/SECURITY.md, "Notifications
// carry no previews"). Every sendMessage — a notification, an answer, a webhook's reply — is
// built here.
func TelegramMessage(chat any, text string) map[string]any {
	return map[string]any{"chat_id": chat, "text": text, "link_preview_options": map[string]any{"is_disabled": true}}
}

// BotAPI calls a Telegram Bot API method (answerCallbackQuery, editMessageReplyMarkup) with
// t's bot token, through the same guard as a send (BotCall, its result not read). The caller
// holds no transaction open.
func (s *Sender) BotAPI(ctx context.Context, t Target, method string, params any) error {
	return s.BotCall(ctx, t, method, params, nil)
}

// post sends one request and sorts the answer.
func (s *Sender) post(ctx context.Context, t Target, rawURL string, h http.Header, body []byte) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return true, t.errorf("%v", err)
	}
	req.Header = h
	req.Header.Set("User-Agent", "Steward-Notify/1")
	resp, err := s.client.Do(req)
	if err != nil {
		return errors.Is(err, egress.ErrBlocked), t.errorf("%v", redactURL(err))
	}
	return answered(resp, "the channel")
}

// answered reads a channel's answer (at most 64 KB of its body) and closes it: a 2xx is
// delivered; a 4xx other than 408 and 429 is permanent (sending again would not help), any
// other status worth another try. who names the server in the error.
func answered(resp *http.Response, who string) (permanent bool, err error) {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return false, nil
	case c >= 400 && c < 500 && c != http.StatusRequestTimeout && c != http.StatusTooManyRequests:
		return true, fmt.Errorf("%s answered %d", who, c)
	default:
		return false, fmt.Errorf("%s answered %d", who, c)
	}
}

// redactURL drops the URL from a client error: channel URLs carry secrets (Slack's and
// Telegram's do).
func redactURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
