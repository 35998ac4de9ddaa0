package channel_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/secret"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/delivery"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

const (
	tgToken  = "123456:ABCdefGHIjklMNOpqrSTUvwxYZ0123456789_-"
	ntfyTok  = "tk_ntfysecret0123456789"
	smtpPass = "smtp-pass-very-secret"
	hookKey  = "whsec-signing-key-secret"
)

// fake is a channel endpoint on 127.0.0.1 (TLS, certificate for example.com) that answers
// from a script of status codes, then 200, and records each request.
type fake struct {
	*egresstest.Server
	mu       sync.Mutex
	statuses []int
	always   bool // answer statuses[0] forever
	reqs     []recorded
}

type recorded struct {
	path   string
	header http.Header
	body   []byte
	status int
}

func newFake(t *testing.T, statuses ...int) *fake {
	f := &fake{statuses: statuses}
	f.Server = egresstest.NewTLSServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		status := http.StatusOK
		if len(f.statuses) > 0 {
			status = f.statuses[0]
			if !f.always {
				f.statuses = f.statuses[1:]
			}
		}
		f.reqs = append(f.reqs, recorded{r.URL.Path, r.Header.Clone(), b, status})
		f.mu.Unlock()
		w.WriteHeader(status)
	})
	return f
}

func (f *fake) url(path string) string {
	return fmt.Sprintf("https://example.com:%d%s", f.Addr().Port(), path)
}

func (f *fake) delivered() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []recorded
	for _, r := range f.reqs {
		if r.status == 200 {
			out = append(out, r)
		}
	}
	return out
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

type env struct {
	ctx   context.Context
	store *store.Store
	door  *store.Door
	owner uuid.UUID
	svc   *channel.Service
	opts  egress.Options
	now   time.Time
}

// newEnv is a database, an owner and the channel service whose guard allows exactly the
// given addresses (and trusts httptest's certificate, which names example.com).
func newEnv(t *testing.T, key []byte, allow ...netip.AddrPort) *env {
	t.Helper()
	db := testdb.Open(t, 10)
	owner, _ := db.Owner(t, "alice")
	sealer, err := secret.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	probe := httptest.NewTLSServer(http.NotFoundHandler())
	pool := probe.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	probe.Close()
	opts := egress.Options{Lookup: egresstest.Lookup, Allow: allow, RootCAs: pool}
	e := &env{ctx: context.Background(), store: db.Store, door: db.Door, owner: owner.ID, opts: opts, now: time.Now().Add(5 * time.Second)}
	e.svc = &channel.Service{Store: db.Store, Sealer: sealer, Sender: &channel.Sender{Options: opts, Timeout: 5 * time.Second}}
	return e
}

var key = []byte("0123456789abcdef0123456789abcdef")

// testCert is httptest's certificate (it names example.com and 127.0.0.1).
func testCert(t *testing.T) tls.Certificate {
	s := httptest.NewUnstartedServer(http.NotFoundHandler())
	s.StartTLS()
	defer s.Close()
	return s.TLS.Certificates[0]
}

func (e *env) add(t *testing.T, in channel.Input) channel.View {
	t.Helper()
	v, err := e.svc.Add(e.ctx, e.owner, in)
	if err != nil {
		t.Fatalf("add %s: %v", in.Name, err)
	}
	return v
}

// TestEveryKindDelivers: a test message reaches a local fake server of each kind in the
// format that kind renders, with its credentials, and the result says delivered.
func TestEveryKindDelivers(t *testing.T) {
	t.Parallel()
	ntfy, tg, slack, hook := newFake(t), newFake(t), newFake(t), newFake(t)
	cert := testCert(t)
	starttls, implicit := newSMTPServer(t, cert, false), newSMTPServer(t, cert, true)
	e := newEnv(t, key, ntfy.Addr(), tg.Addr(), slack.Addr(), hook.Addr(), starttls.Addr(), implicit.Addr())

	e.add(t, channel.Input{Name: "phone", Kind: "ntfy", URL: ntfy.url(""), Topic: "alerts", Token: ntfyTok})
	e.add(t, channel.Input{Name: "tg", Kind: "telegram", URL: tg.url(""), Token: tgToken, ChatID: "-1001234"})
	e.add(t, channel.Input{Name: "team", Kind: "slack", URL: slack.url("/services/T0/B0/xyzsecret")})
	e.add(t, channel.Input{Name: "hook", Kind: "webhook", URL: hook.url("/in"), Token: hookKey})
	e.add(t, channel.Input{Name: "mail", Kind: "email", Host: "example.com", Port: int(starttls.Addr().Port()),
		From: "steward@example.com", To: "me@example.com", Username: "me", Password: smtpPass})
	e.add(t, channel.Input{Name: "mail-tls", Kind: "email", Host: "example.com", Port: int(implicit.Addr().Port()), TLS: "tls",
		From: "steward@example.com", To: "me@example.com", Username: "me", Password: smtpPass})

	for _, name := range []string{"phone", "tg", "team", "hook", "mail", "mail-tls"} {
		res, err := e.svc.Test(e.ctx, e.owner, name)
		if err != nil || !res.Delivered {
			t.Errorf("test %s: %+v, %v", name, res, err)
		}
	}
	// ntfy: JSON publishing to the server root, topic and bearer token.
	if got := ntfy.delivered(); len(got) != 1 || got[0].header.Get("Authorization") != "Bearer "+ntfyTok ||
		!strings.Contains(string(got[0].body), `"topic":"alerts"`) || !strings.Contains(string(got[0].body), `"title":"Steward test"`) {
		t.Errorf("ntfy got %+v", got)
	}
	// Telegram: sendMessage with the token in the path, MarkdownV2 with the title bold and
	// "." escaped.
	if got := tg.delivered(); len(got) != 1 || got[0].path != "/bot"+tgToken+"/sendMessage" {
		t.Errorf("telegram got %+v", got)
	} else {
		var body struct{ ChatID, Text, ParseMode string }
		_ = json.Unmarshal(got[0].body, &map[string]any{})
		var m map[string]string
		_ = json.Unmarshal(got[0].body, &m)
		body.ChatID, body.Text, body.ParseMode = m["chat_id"], m["text"], m["parse_mode"]
		if body.ChatID != "-1001234" || body.ParseMode != "MarkdownV2" || !strings.HasPrefix(body.Text, "*Steward test*\n\n") ||
			!strings.HasSuffix(body.Text, "works\\.") {
			t.Errorf("telegram body %+v", body)
		}
	}
	// Slack: mrkdwn text with the title bold.
	if got := slack.delivered(); len(got) != 1 || got[0].path != "/services/T0/B0/xyzsecret" ||
		!strings.Contains(string(got[0].body), `"text":"*Steward test*\nThis is a test message`) {
		t.Errorf("slack got %+v", got)
	}
	// No link is previewed or unfurled: Telegram's and Slack's servers would fetch it
	// (docs/SECURITY.md, "Notifications carry no previews").
	if got := tg.delivered(); len(got) == 1 {
		var m struct {
			Preview *struct {
				IsDisabled bool `json:"is_disabled"`
			} `json:"link_preview_options"`
		}
		if err := json.Unmarshal(got[0].body, &m); err != nil || m.Preview == nil || !m.Preview.IsDisabled {
			t.Errorf("telegram sendMessage %s: want link_preview_options {\"is_disabled\":true}", got[0].body)
		}
	}
	if got := slack.delivered(); len(got) == 1 {
		var m map[string]any
		if err := json.Unmarshal(got[0].body, &m); err != nil || m["unfurl_links"] != false || m["unfurl_media"] != false {
			t.Errorf("slack message %s: want unfurl_links and unfurl_media false", got[0].body)
		}
	}
	// Webhook: the Standard Webhooks signature verifies with the signing key.
	if got := hook.delivered(); len(got) != 1 {
		t.Errorf("webhook got %+v", got)
	} else {
		h := got[0].header
		mac := hmac.New(sha256.New, []byte(hookKey))
		fmt.Fprintf(mac, "%s.%s.%s", h.Get("Webhook-Id"), h.Get("Webhook-Timestamp"), got[0].body)
		if want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)); h.Get("Webhook-Signature") != want || h.Get("Idempotency-Key") == "" {
			t.Errorf("webhook signature %q, want %q", h.Get("Webhook-Signature"), want)
		}
	}
	// Email: the login only over TLS, the envelope and the message.
	for name, s := range map[string]*smtpServer{"starttls": starttls, "implicit": implicit} {
		s.mu.Lock()
		if len(s.data) != 1 || len(s.auth) != 1 || s.auth[0] != "\x00me\x00"+smtpPass ||
			s.from[0] != "MAIL FROM:<steward@example.com>" || !strings.HasPrefix(s.to[0], "RCPT TO:<me@example.com>") ||
			!strings.Contains(s.data[0], "Subject: Steward test\r\n") || !strings.Contains(s.data[0], "the channel mail") {
			t.Errorf("%s smtp: auth %q from %q to %q data %q", name, s.auth, s.from, s.to, s.data)
		}
		for _, l := range s.plain {
			if strings.HasPrefix(strings.ToUpper(l), "AUTH") || strings.HasPrefix(strings.ToUpper(l), "MAIL") {
				t.Errorf("%s smtp: %q sent before TLS", name, l)
			}
		}
		s.mu.Unlock()
	}
}

// TestSecretsNeverShown: the list (what GET /v1/channels returns) carries no secret, only
// has_secret; the database holds them sealed, not in the clear.
func TestSecretsNeverShown(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	e := newEnv(t, key, f.Addr())
	e.add(t, channel.Input{Name: "tg", Kind: "telegram", URL: f.url(""), Token: tgToken, ChatID: "42"})
	e.add(t, channel.Input{Name: "team", Kind: "slack", URL: f.url("/services/T0/B0/slacksecretpath")})
	e.add(t, channel.Input{Name: "phone", Kind: "ntfy", URL: f.url(""), Topic: "t", Token: ntfyTok})
	e.add(t, channel.Input{Name: "mail", Kind: "email", Host: "example.com", Port: int(f.Addr().Port()), From: "a@example.com",
		To: "b@example.com", Username: "me", Password: smtpPass})
	list, err := e.svc.List(e.ctx, e.owner)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(list)
	for _, secret := range []string{tgToken, "slacksecretpath", ntfyTok, smtpPass} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the channel list shows the secret %q: %s", secret, b)
		}
	}
	if len(list) != 4 || !list[0].HasSecret || list[0].Name != "mail" || list[0].Username != "me" || !list[3].Default || list[3].Name != "tg" {
		t.Errorf("list %s", b)
	}
	_ = e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		chs, err := tx.Channels.List(e.ctx)
		for _, c := range chs {
			raw := string(c.Secret) + string(c.Settings) + c.URL
			for _, secret := range []string{tgToken, "slacksecretpath", ntfyTok, smtpPass} {
				if strings.Contains(raw, secret) {
					t.Errorf("channel %s stores %q in the clear", c.Name, secret)
				}
			}
		}
		return err
	})
}

// TestBadChannelsRefused: each bad channel is a clear 4xx-coded error and stores nothing.
func TestBadChannelsRefused(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	e := newEnv(t, key, f.Addr())
	e.add(t, channel.Input{Name: "first", Kind: "ntfy", URL: f.url(""), Topic: "t"})
	cases := []struct {
		in   channel.Input
		code steward.Code
		want string
	}{
		{channel.Input{Name: "priv", Kind: "webhook", URL: "https://10.0.0.1/hook"}, steward.CodeInvalid, "refused"},
		{channel.Input{Name: "priv2", Kind: "slack", URL: "https://private.example/services/x"}, steward.CodeInvalid, "refused"},
		{channel.Input{Name: "meta", Kind: "ntfy", URL: "https://metadata.example", Topic: "t"}, steward.CodeInvalid, "refused"},
		{channel.Input{Name: "gone", Kind: "webhook", URL: "https://unreachable.example/hook"}, steward.CodeInvalid, "no such host"},
		{channel.Input{Name: "http", Kind: "webhook", URL: "http://example.com/hook"}, steward.CodeInvalid, "only https"},
		{channel.Input{Name: "local", Kind: "email", Host: "localhost", From: "a@example.com", To: "b@example.com"}, steward.CodeInvalid, "refused"},
		{channel.Input{Name: "tg", Kind: "telegram", Token: "12345:short", ChatID: "1"}, steward.CodeInvalid, "bot token"},
		{channel.Input{Name: "tg2", Kind: "telegram", Token: "abc:" + strings.Repeat("x", 35), ChatID: "1"}, steward.CodeInvalid, "bot token"},
		{channel.Input{Name: "x", Kind: "pager"}, steward.CodeInvalid, "unknown channel kind"},
		{channel.Input{Name: "Bad Name", Kind: "webhook", URL: f.url("/")}, steward.CodeInvalid, "channel name"},
		{channel.Input{Name: "first", Kind: "webhook", URL: f.url("/")}, steward.CodeConflict, "already exists"},
		{channel.Input{Name: "mail", Kind: "email", Host: "example.com", From: "Me <a@example.com>", To: "b@example.com"}, steward.CodeInvalid, "plain email"},
	}
	for _, c := range cases {
		_, err := e.svc.Add(e.ctx, e.owner, c.in)
		if steward.ErrorCode(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("add %+v: %v (code %q), want %s mentioning %q", c.in, err, steward.ErrorCode(err), c.code, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "short") && c.in.Kind == "telegram" {
			t.Errorf("the error quotes the token: %v", err)
		}
	}
	if list, _ := e.svc.List(e.ctx, e.owner); len(list) != 1 {
		t.Errorf("after refusals the owner has %d channels, want 1: %+v", len(list), list)
	}
}

// TestNoKeyFailsClosed: without STEWARD_SECRET_KEY a channel with a secret is refused with
// a clear error; one without a secret is still accepted.
func TestNoKeyFailsClosed(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	e := newEnv(t, nil, f.Addr())
	_, err := e.svc.Add(e.ctx, e.owner, channel.Input{Name: "tg", Kind: "telegram", URL: f.url(""), Token: tgToken, ChatID: "1"})
	if steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), "STEWARD_SECRET_KEY") {
		t.Errorf("telegram without a key: %v", err)
	}
	e.add(t, channel.Input{Name: "hook", Kind: "webhook", URL: f.url("/in")})
	if list, _ := e.svc.List(e.ctx, e.owner); len(list) != 1 || list[0].Name != "hook" {
		t.Errorf("channels %+v", list)
	}
}

// deliverer is the production deliverer over e's guard, with a test clock and short backoff.
func (e *env) deliverer(max int) *delivery.Deliverer {
	sealer, _ := secret.NewSealer(key)
	return &delivery.Deliverer{Store: e.store, Guard: egress.NewGuard(e.opts), Sealer: sealer, Channels: e.door,
		Now: func() time.Time { return e.now }, MaxAttempts: max, Backoff: func(n int) time.Duration { return time.Minute }}
}

func (e *env) notify(t *testing.T, ch, title, msg string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		n, err := tx.Tasks.CreateNotification(e.ctx, ch, title, msg)
		id = n.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (e *env) state(t *testing.T, id uuid.UUID) (store.Notification, []steward.Event) {
	t.Helper()
	var n store.Notification
	var evs []steward.Event
	err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		ns, err := tx.Deliveries.Notifications(e.ctx, 100)
		for _, x := range ns {
			if x.ID == id {
				n = x
			}
		}
		if err != nil {
			return err
		}
		all, err := tx.Journal.RecentEvents(e.ctx, 100)
		for _, ev := range all {
			if strings.HasPrefix(ev.Kind, "notification.") && strings.Contains(string(ev.Data), id.String()) {
				evs = append([]steward.Event{ev}, evs...)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, evs
}

func kinds(evs []steward.Event) string {
	var k []string
	for _, e := range evs {
		k = append(k, e.Kind)
	}
	return strings.Join(k, ",")
}

// TestFailsTwiceThenDelivers: a named channel that fails twice, then answers, gets the
// notification exactly once; each attempt is an event of the activity feed.
func TestFailsTwiceThenDelivers(t *testing.T) {
	t.Parallel()
	tg, other := newFake(t, 500, 502), newFake(t)
	e := newEnv(t, key, tg.Addr(), other.Addr())
	e.add(t, channel.Input{Name: "default", Kind: "ntfy", URL: other.url(""), Topic: "t"})
	e.add(t, channel.Input{Name: "tg", Kind: "telegram", URL: tg.url(""), Token: tgToken, ChatID: "7"})
	d := e.deliverer(8)
	id := e.notify(t, "tg", "Briefing", "Two tasks (due today).")
	for range 5 {
		if err := d.Flush(e.ctx, e.owner); err != nil {
			t.Fatal(err)
		}
		e.now = e.now.Add(2 * time.Minute)
	}
	if got := tg.delivered(); len(got) != 1 || tg.count() != 3 || !strings.Contains(string(got[0].body), `Two tasks \\(due today\\)\\.`) {
		t.Errorf("telegram: %d requests, delivered %+v; want 3 requests, one delivery", tg.count(), got)
	}
	if other.count() != 0 {
		t.Errorf("the default channel got %d requests for a notification naming tg", other.count())
	}
	n, evs := e.state(t, id)
	if n.DeliveredAt == nil || n.DeliveryAttempts != 3 || kinds(evs) != "notification.retry,notification.retry,notification.delivered" {
		t.Errorf("notification %+v, events %s", n, kinds(evs))
	}
}

// TestAlwaysFailsIsFailedNotLost: a channel that always fails leaves the notification
// stored, marked failed with the reason and no further attempt, every attempt in the feed.
func TestAlwaysFailsIsFailedNotLost(t *testing.T) {
	t.Parallel()
	f := newFake(t, 503)
	f.always = true
	e := newEnv(t, key, f.Addr())
	e.add(t, channel.Input{Name: "phone", Kind: "ntfy", URL: f.url(""), Topic: "t", Token: ntfyTok})
	d := e.deliverer(3)
	id := e.notify(t, "", "Weekly review", "Spent 40 EUR.")
	for range 5 {
		if err := d.Flush(e.ctx, e.owner); err != nil {
			t.Fatal(err)
		}
		e.now = e.now.Add(2 * time.Minute)
	}
	n, evs := e.state(t, id)
	if f.count() != 3 || n.DeliveredAt != nil || n.NextDeliveryAt != nil || n.Message != "Spent 40 EUR." ||
		n.DeliveryError != "the channel answered 503" || kinds(evs) != "notification.retry,notification.retry,notification.failed" {
		t.Errorf("%d requests; notification %+v; events %s", f.count(), n, kinds(evs))
	}
	for _, ev := range evs {
		if strings.Contains(string(ev.Data), ntfyTok) {
			t.Errorf("event shows the token: %s", ev.Data)
		}
	}
}

// TestNotifyUnknownChannel: naming a channel the owner does not have is refused at once.
func TestNotifyUnknownChannel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, key)
	err := e.store.WithOwner(e.ctx, e.owner, func(tx *store.Tx) error {
		_, err := tx.Tasks.CreateNotification(e.ctx, "nope", "", "hello")
		return err
	})
	if steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), `no notification channel named "nope"`) {
		t.Errorf("notify to an unknown channel: %v", err)
	}
}

// TestRemoveMovesDefault: removing the default makes the oldest other channel the default;
// removing an unknown channel is not found.
func TestRemoveMovesDefault(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	e := newEnv(t, key, f.Addr())
	e.add(t, channel.Input{Name: "a", Kind: "webhook", URL: f.url("/a")})
	e.add(t, channel.Input{Name: "b", Kind: "webhook", URL: f.url("/b")})
	if v := e.add(t, channel.Input{Name: "c", Kind: "webhook", URL: f.url("/c"), Default: true}); !v.Default {
		t.Errorf("c was asked to be the default: %+v", v)
	}
	if err := e.svc.Remove(e.ctx, e.owner, "c"); err != nil {
		t.Fatal(err)
	}
	list, _ := e.svc.List(e.ctx, e.owner)
	if len(list) != 2 || !list[0].Default || list[1].Default {
		t.Errorf("after removing the default: %+v", list)
	}
	if err := e.svc.Remove(e.ctx, e.owner, "zzz"); steward.ErrorCode(err) != steward.CodeNotFound {
		t.Errorf("remove unknown: %v", err)
	}
}

// TestFormatsWithinLimits: each channel's text stays within its limit, cut on a character
// (never inside a Telegram escape), and Telegram/Slack escapes are applied.
func TestFormatsWithinLimits(t *testing.T) {
	long := strings.Repeat("a.b_", 3000) + "é"
	tg := channel.TelegramText("Title!", long)
	if n := utf8.RuneCountInString(tg); n > 4096 || !strings.HasSuffix(tg, "…") || strings.HasSuffix(strings.TrimSuffix(tg, "…"), "\\") ||
		!strings.HasPrefix(tg, "*Title\\!*\n\na\\.b\\_") {
		t.Errorf("telegram: %d characters, %q…%q", n, tg[:20], tg[len(tg)-10:])
	}
	if got := channel.SlackText("<b>", "a < b & c"); got != "*&lt;b&gt;*\na &lt; b &amp; c" {
		t.Errorf("slack: %q", got)
	}
	if got := channel.SlackText("", strings.Repeat("x", 50000)); utf8.RuneCountInString(got) != 40000 {
		t.Errorf("slack: %d characters", utf8.RuneCountInString(got))
	}
	p := channel.Plain("T", strings.Repeat("é", 5000), 4096)
	if len(p) > 4096 || !utf8.ValidString(p) || !strings.HasSuffix(p, "…") {
		t.Errorf("plain: %d bytes, valid %v", len(p), utf8.ValidString(p))
	}
}

// TestMakeDefault: a channel made the default later is the only default, and a notification
// that names no channel goes to it; an unknown name is not found and changes nothing.
func TestMakeDefault(t *testing.T) {
	t.Parallel()
	a, b := newFake(t), newFake(t)
	e := newEnv(t, key, a.Addr(), b.Addr())
	e.add(t, channel.Input{Name: "a", Kind: "webhook", URL: a.url("/a")})
	e.add(t, channel.Input{Name: "b", Kind: "webhook", URL: b.url("/b")})
	defaults := func() string {
		t.Helper()
		list, err := e.svc.List(e.ctx, e.owner)
		if err != nil {
			t.Fatal(err)
		}
		var d []string
		for _, v := range list {
			if v.Default {
				d = append(d, v.Name)
			}
		}
		return strings.Join(d, ",")
	}
	if got := defaults(); got != "a" {
		t.Fatalf("defaults before: %q", got)
	}
	v, err := e.svc.MakeDefault(e.ctx, e.owner, "b")
	if err != nil || v.Name != "b" || !v.Default {
		t.Fatalf("make b the default: %+v %v", v, err)
	}
	if got := defaults(); got != "b" {
		t.Errorf("defaults after: %q, want b only", got)
	}
	if _, err := e.svc.MakeDefault(e.ctx, e.owner, "b"); err != nil { // again: still one default
		t.Errorf("make b the default again: %v", err)
	}
	if _, err := e.svc.MakeDefault(e.ctx, e.owner, "zzz"); steward.ErrorCode(err) != steward.CodeNotFound {
		t.Errorf("unknown channel: %v, want not found", err)
	}
	if got := defaults(); got != "b" {
		t.Errorf("defaults after an unknown name: %q, want b", got)
	}
	e.notify(t, "", "Briefing", "Good morning.")
	if err := e.deliverer(3).Flush(e.ctx, e.owner); err != nil {
		t.Fatal(err)
	}
	if a.count() != 0 || len(b.delivered()) != 1 {
		t.Errorf("a got %d, b got %d; want the new default b to get the notification", a.count(), len(b.delivered()))
	}
}
