package links_test

import (
	"bytes"
	"context"
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

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/delivery"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/links"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/webapp"
)

// botAPI is a fake Telegram Bot API (TLS on 127.0.0.1, certificate for example.com): it
// answers every method {"ok":true,"result":…} as the Bot API does and records the calls.
type botAPI struct {
	*egresstest.Server
	mu    sync.Mutex
	calls []botCall
}

type botCall struct {
	Method string
	Body   map[string]any
}

const botToken = "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ"

func newBotAPI(t *testing.T) *botAPI {
	b := &botAPI{}
	b.Server = egresstest.NewTLSServer(t, func(w http.ResponseWriter, r *http.Request) {
		method, ok := strings.CutPrefix(r.URL.Path, "/bot"+botToken+"/")
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"ok":false,"error_code":401,"description":"Unauthorized"}`)
			return
		}
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		b.mu.Lock()
		b.calls = append(b.calls, botCall{method, body})
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch method {
		case "sendMessage":
			_, _ = io.WriteString(w, `{"ok":true,"result":{"message_id":77,"chat":{"id":4242,"type":"private"},"date":1,"text":"x"}}`)
		default:
			_, _ = io.WriteString(w, `{"ok":true,"result":true}`)
		}
	})
	return b
}

func (b *botAPI) called(method string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, c := range b.calls {
		if c.Method == method {
			out = append(out, c.Body)
		}
	}
	return out
}

type tgEnv struct {
	*env
	bot     *botAPI
	api     *httptest.Server
	deliver *delivery.Deliverer
}

const webhookSecret = "tg-webhook_secret-0123"

// setupTelegram is setup with alice's default channel a Telegram bot on the fake Bot API,
// the deliverer attaching the buttons, and the API serving POST /telegram/callback with
// webhookSecret (or none when secret is "").
func setupTelegram(t *testing.T, secretToken string) *tgEnv {
	t.Helper()
	e := setup(t, false)
	bot := newBotAPI(t)
	sealer, err := secret.NewSealer(e.svc.Key)
	if err != nil {
		t.Fatal(err)
	}
	opts := egress.Options{Lookup: egresstest.Lookup, Allow: []netip.AddrPort{bot.Addr()},
		RootCAs: bot.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	sender := &channel.Sender{Options: opts, Timeout: 5 * time.Second}
	chs := &channel.Service{Store: e.o.Store, Sealer: sealer, Sender: sender}
	if _, err := chs.Add(context.Background(), e.owner.ID, channel.Input{Name: "tg", Kind: channel.Telegram, Default: true,
		URL: fmt.Sprintf("https://example.com:%d", bot.Addr().Port()), Token: botToken, ChatID: "4242"}); err != nil {
		t.Fatal(err)
	}
	d := &delivery.Deliverer{Store: e.o.Store, Guard: egress.NewGuard(opts), Sealer: sealer, Sender: sender,
		Expand: e.svc.Expand, Buttons: e.svc.Buttons}
	tg := &links.Telegram{Links: e.svc, Secret: secretToken, Sealer: sealer, Sender: sender}
	api := httptest.NewServer(httpapi.New(httpapi.Deps{Runner: e.run, Store: e.o.Store, Logger: zerolog.Nop(),
		Links: webapp.LinkPages(e.svc, ""), Telegram: tg}))
	t.Cleanup(api.Close)
	return &tgEnv{env: e, bot: bot, api: api, deliver: d}
}

// sent suspends a turn, delivers its notification and returns the turn and the callback_data
// of the sent message's Approve and Deny buttons.
func (e *tgEnv) sent(t *testing.T) (turn uuid.UUID, approve, deny string) {
	t.Helper()
	turn, _, _ = e.suspend(t)
	if err := e.deliver.Flush(context.Background(), e.owner.ID); err != nil {
		t.Fatal(err)
	}
	msgs := e.bot.called("sendMessage")
	if len(msgs) == 0 {
		t.Fatal("no sendMessage reached the Bot API")
	}
	m := msgs[len(msgs)-1]
	var markup struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	raw, _ := json.Marshal(m["reply_markup"])
	if err := json.Unmarshal(raw, &markup); err != nil || len(markup.InlineKeyboard) != 1 || len(markup.InlineKeyboard[0]) != 2 {
		t.Fatalf("sendMessage %v has no inline keyboard of two buttons", m)
	}
	row := markup.InlineKeyboard[0]
	if !strings.Contains(row[0].Text, "Approve") || !strings.Contains(row[1].Text, "Deny") {
		t.Errorf("buttons %+v; want Approve then Deny", row)
	}
	for _, b := range row {
		if len(b.CallbackData) == 0 || len(b.CallbackData) > 64 {
			t.Errorf("callback_data %q is not 1–64 bytes", b.CallbackData)
		}
	}
	if text, _ := m["text"].(string); !strings.Contains(text, "create\\_task") {
		t.Errorf("sendMessage text %q does not list the call", text)
	}
	return turn, row[0].CallbackData, row[1].CallbackData
}

// press posts a callback query for data to /telegram/callback with the header secret.
func (e *tgEnv) press(t *testing.T, header *string, data string) (int, map[string]any) {
	t.Helper()
	upd := fmt.Sprintf(`{"update_id":1,"callback_query":{"id":"cq-%d","from":{"id":4242,"is_bot":false,"first_name":"Alice"},
		"message":{"message_id":77,"date":1,"chat":{"id":4242,"type":"private"},"text":"x"},"chat_instance":"1","data":%q}}`,
		time.Now().UnixNano(), data)
	req, _ := http.NewRequest("POST", e.api.URL+"/telegram/callback", bytes.NewBufferString(upd))
	req.Header.Set("Content-Type", "application/json")
	if header != nil {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", *header)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func ptr(s string) *string { return &s }

func TestTelegramButtonDecidesOnce(t *testing.T) {
	e := setupTelegram(t, webhookSecret)
	turn, approve, _ := e.sent(t)

	// A wrong or missing secret header is refused and decides nothing.
	for _, h := range []*string{nil, ptr(""), ptr("wrong"), ptr(webhookSecret + "x")} {
		if status, _ := e.press(t, h, approve); status != http.StatusForbidden {
			t.Errorf("callback with header %v = %d, want 403", h, status)
		}
	}
	if n, st := e.state(t, turn); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("after refused callbacks: %d tasks, turn %s; want 0 and suspended", n, st)
	}

	status, body := e.press(t, ptr(webhookSecret), approve)
	if status != 200 || body["method"] != nil {
		t.Fatalf("callback = %d %v; want 200 answered through the Bot API", status, body)
	}
	if n, st := e.state(t, turn); n != 1 || st != steward.StatusCompleted {
		t.Fatalf("after the button: %d tasks, turn %s; want 1 task and completed", n, st)
	}
	answers := e.bot.called("answerCallbackQuery")
	if len(answers) != 1 || !strings.Contains(answers[0]["text"].(string), "Approved") {
		t.Errorf("answerCallbackQuery calls %v; want one saying Approved", answers)
	}
	if edits := e.bot.called("editMessageReplyMarkup"); len(edits) != 1 || edits[0]["message_id"] != float64(77) {
		t.Errorf("editMessageReplyMarkup calls %v; want one removing the buttons of message 77", edits)
	}

	// The same button again: answered "already used", nothing runs again.
	status, _ = e.press(t, ptr(webhookSecret), approve)
	answers = e.bot.called("answerCallbackQuery")
	if status != 200 || len(answers) != 2 || !strings.Contains(answers[1]["text"].(string), "already used") {
		t.Errorf("second press = %d, answers %v; want 200 and 'already used'", status, answers)
	}
	// A forged token names no owner: Telegram is asked to answer it in the webhook's reply.
	status, body = e.press(t, ptr(webhookSecret), "l1:"+strings.Repeat("A", 43))
	if status != 200 || body["method"] != "answerCallbackQuery" || !strings.Contains(fmt.Sprint(body["text"]), "not valid") {
		t.Errorf("forged press = %d %v; want 200 with answerCallbackQuery 'not valid'", status, body)
	}
	status, body = e.press(t, ptr(webhookSecret), "garbage")
	if status != 200 || !strings.Contains(fmt.Sprint(body["text"]), "not valid") {
		t.Errorf("garbage press = %d %v; want 'not valid'", status, body)
	}
	if n, st := e.state(t, turn); n != 1 || st != steward.StatusCompleted {
		t.Fatalf("after repeats and forgeries: %d tasks, turn %s; want still 1 task", n, st)
	}
}

func TestTelegramDenyButton(t *testing.T) {
	e := setupTelegram(t, webhookSecret)
	turn, _, deny := e.sent(t)
	if status, _ := e.press(t, ptr(webhookSecret), deny); status != 200 {
		t.Fatalf("deny press = %d", status)
	}
	if n, st := e.state(t, turn); n != 0 || st != steward.StatusCompleted {
		t.Fatalf("after deny: %d tasks, turn %s; want 0 tasks and the turn completed", n, st)
	}
	if a := e.bot.called("answerCallbackQuery"); len(a) != 1 || !strings.Contains(a[0]["text"].(string), "Denied") {
		t.Errorf("answers %v; want Denied", a)
	}
}

func TestTelegramCallbackOffWithoutSecret(t *testing.T) {
	e := setupTelegram(t, "")
	turn, _, _ := e.suspend(t)
	// Without the secret, a forged update naming a valid-looking button is not even read.
	for _, h := range []*string{nil, ptr(""), ptr("anything")} {
		if status, _ := e.press(t, h, "l1:"+strings.Repeat("A", 43)); status != http.StatusNotFound {
			t.Errorf("callback with header %v and no secret configured = %d, want 404", h, status)
		}
	}
	if n, st := e.state(t, turn); n != 0 || st != steward.StatusSuspended {
		t.Fatalf("%d tasks, turn %s; want nothing decided", n, st)
	}
}
