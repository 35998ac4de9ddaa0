package telegram_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/delivery"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/links"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/telegram"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
	"github.com/stewardhq/steward/internal/webapp"
)

// The approval buttons of a Telegram notification (telegram.Buttons) and their callback
// (telegram.Callback), over the one-tap links of internal/links.

// linkEnv is a runner whose suspensions store a notification with one-tap links, on a fresh
// database with the demo model, and an owner alice; the door is the runtime's (steward_door).
type linkEnv struct {
	o     testdb.Opened
	srv   *httptest.Server
	svc   *links.Service
	run   *agent.Runner
	owner store.Owner
}

// setupLinks serves the link pages and makes the links on the runner's suspensions.
func setupLinks(t *testing.T) *linkEnv {
	t.Helper()
	ctx := context.Background()
	o := testdb.Open(t, 30)
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	door, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	svc := &links.Service{Store: o.Store, Door: door,
		Issuer: links.Issuer{TTL: 30 * time.Minute, Key: []byte("0123456789abcdef0123456789abcdef")}}
	run := agent.New(agent.Config{Model: demo.New(), Tools: reg, Store: o.Store, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour},
		agent.Hooks{Suspended: []func(context.Context, agent.Tx, steward.Turn) (bool, error){svc.Suspended}})
	svc.Confirmer = run
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Runner: run, Store: o.Store, Auth: door, Logger: zerolog.Nop(),
		Links: webapp.LinkPages(svc, "")}))
	t.Cleanup(srv.Close)
	svc.PublicURL = srv.URL
	owner, _ := o.Owner(t, "alice")
	return &linkEnv{o: o, srv: srv, svc: svc, run: run, owner: owner}
}

// suspend starts a turn whose create_task waits for approval and returns it with the
// approve and deny links of its notification.
func (e *linkEnv) suspend(t *testing.T) (turn uuid.UUID, approve, deny string) {
	t.Helper()
	v, err := e.run.Start(context.Background(), agent.Input{OwnerID: e.owner.ID, Message: "remind me to buy milk"}, nil)
	if err != nil || v.Status != steward.StatusSuspended {
		t.Fatalf("start = %+v, %v; want suspended", v, err)
	}
	var n []steward.Notification
	err = e.o.Store.WithOwner(context.Background(), e.owner.ID, func(tx *store.Tx) error {
		var err error
		n, err = tx.Tasks.ListNotifications(context.Background(), 10)
		return err
	})
	if err != nil || len(n) != 1 {
		t.Fatalf("notifications = %+v, %v; want 1", n, err)
	}
	msg := e.svc.Expand(n[0].Message) // what the deliverer sends
	if !strings.Contains(msg, `create_task: title="buy milk"`) {
		t.Errorf("notification %q does not list the call with its arguments", msg)
	}
	a := regexp.MustCompile(`Approve: (\S+)`).FindStringSubmatch(msg)
	d := regexp.MustCompile(`Deny: (\S+)`).FindStringSubmatch(msg)
	if a == nil || d == nil || !strings.HasPrefix(a[1], e.srv.URL+"/a/") {
		t.Fatalf("notification %q has no approve and deny links to %s/a/", msg, e.srv.URL)
	}
	return v.TurnID, a[1], d[1]
}

// state is alice's number of tasks and the turn's status.
func (e *linkEnv) state(t *testing.T, turn uuid.UUID) (int, steward.Status) {
	t.Helper()
	var tasks []steward.Task
	var tr steward.Turn
	err := e.o.Store.WithOwner(context.Background(), e.owner.ID, func(tx *store.Tx) error {
		var err error
		if tasks, err = tx.Tasks.ListTasks(context.Background(), ""); err != nil {
			return err
		}
		tr, err = tx.Turns.Get(context.Background(), turn)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(tasks), tr.Status
}

// buttonBot is a fake Telegram Bot API (TLS on 127.0.0.1, certificate for example.com): it
// answers every method {"ok":true,"result":…} as the Bot API does and records the calls.
type buttonBot struct {
	*egresstest.Server
	mu    sync.Mutex
	calls []buttonCall
}

type buttonCall struct {
	Method string
	Body   map[string]any
}

func newButtonBot(t *testing.T) *buttonBot {
	b := &buttonBot{}
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
		b.calls = append(b.calls, buttonCall{method, body})
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

func (b *buttonBot) called(method string) []map[string]any {
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

type buttonEnv struct {
	*linkEnv
	bot     *buttonBot
	api     *httptest.Server
	deliver *delivery.Deliverer
}

// setupTelegram is setupLinks with alice's default channel a Telegram bot on the fake Bot API,
// the deliverer attaching the buttons, and the API serving POST /telegram/callback with
// webhookSecret (or none when secret is "").
func setupTelegram(t *testing.T, secretToken string) *buttonEnv {
	t.Helper()
	e := setupLinks(t)
	bot := newButtonBot(t)
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
		Expand: e.svc.Expand, Buttons: telegram.Buttons(e.svc)}
	tg := &telegram.Callback{Links: e.svc, Store: e.o.Store, Secret: secretToken, Sealer: sealer, Sender: sender}
	api := httptest.NewServer(httpapi.New(httpapi.Deps{Runner: e.run, Store: e.o.Store, Logger: zerolog.Nop(),
		Links: webapp.LinkPages(e.svc, ""), Telegram: tg}))
	t.Cleanup(api.Close)
	return &buttonEnv{linkEnv: e, bot: bot, api: api, deliver: d}
}

// sent suspends a turn, delivers its notification and returns the turn and the callback_data
// of the sent message's Approve and Deny buttons.
func (e *buttonEnv) sent(t *testing.T) (turn uuid.UUID, approve, deny string) {
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
func (e *buttonEnv) press(t *testing.T, header *string, data string) (int, map[string]any) {
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
