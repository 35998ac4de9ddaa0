package telegram_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/audio/audiotest"
	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
)

const (
	botToken      = "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ"
	webhookSecret = "tg-webhook_secret-0123"
	ownerChat     = int64(4242)
)

// botCall is one request the fake Bot API received: the method and its parameters (JSON
// or multipart fields), and an uploaded file's bytes.
type botCall struct {
	Method string
	Params map[string]any
	File   []byte
}

// fakeBot is a fake Telegram Bot API on loopback (TLS, certificate for example.com): it
// answers the methods Steward calls as the Bot API does, serves the files it was given
// (getFile, then /file/bot<token>/<path>) and records every call.
type fakeBot struct {
	*egresstest.Server
	mu    sync.Mutex
	calls []botCall
	files map[string][]byte // file_id → content
	msgID int64
}

func newFakeBot(t *testing.T) *fakeBot {
	b := &fakeBot{files: map[string][]byte{}, msgID: 100}
	b.Server = egresstest.NewTLSServer(t, b.serve)
	// Every message Steward sent asked Telegram for no link preview: Telegram's servers
	// fetch a previewed URL, so a link in a message must never be fetched by itself
	// (docs/SECURITY.md, "Notifications carry no previews").
	t.Cleanup(func() {
		for _, c := range b.called("sendMessage") {
			if !previewOff(c.Params) {
				t.Errorf("sendMessage %v: link_preview_options = %v, want {\"is_disabled\":true}", c.Params["text"], c.Params["link_preview_options"])
			}
		}
	})
	return b
}

// previewOff reports whether a sendMessage's parameters turn link previews off.
func previewOff(params map[string]any) bool {
	o, ok := params["link_preview_options"].(map[string]any)
	return ok && o["is_disabled"] == true
}

func (b *fakeBot) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if p, ok := strings.CutPrefix(r.URL.Path, "/file/bot"+botToken+"/"); ok {
		b.mu.Lock()
		data, found := b.files[strings.TrimPrefix(p, "documents/")]
		b.mu.Unlock()
		if !found {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(data)
		return
	}
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+botToken+"/")
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"ok":false,"error_code":401,"description":"Unauthorized"}`)
		return
	}
	call := botCall{Method: method, Params: map[string]any{}}
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "multipart/form-data" {
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			data, _ := io.ReadAll(p)
			if p.FileName() != "" {
				call.File = data
			} else {
				call.Params[p.FormName()] = string(data)
			}
		}
	} else {
		_ = json.NewDecoder(r.Body).Decode(&call.Params)
	}
	b.mu.Lock()
	b.calls = append(b.calls, call)
	b.msgID++
	id := b.msgID
	b.mu.Unlock()
	switch method {
	case "getFile":
		fid, _ := call.Params["file_id"].(string)
		b.mu.Lock()
		data, found := b.files[fid]
		b.mu.Unlock()
		if !found {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"ok":false,"error_code":400,"description":"Bad Request: invalid file_id"}`)
			return
		}
		fmt.Fprintf(w, `{"ok":true,"result":{"file_id":%q,"file_size":%d,"file_path":"documents/%s"}}`, fid, len(data), fid)
	case "sendMessage", "sendVoice", "sendAudio":
		fmt.Fprintf(w, `{"ok":true,"result":{"message_id":%d,"chat":{"id":%d,"type":"private"},"date":1}}`, id, ownerChat)
	default:
		_, _ = io.WriteString(w, `{"ok":true,"result":true}`)
	}
}

// called is the calls of a method so far.
func (b *fakeBot) called(method string) []botCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []botCall
	for _, c := range b.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// texts is the text of every sendMessage so far.
func (b *fakeBot) texts() []string {
	var out []string
	for _, c := range b.called("sendMessage") {
		s, _ := c.Params["text"].(string)
		out = append(out, s)
	}
	return out
}

// tgEnv is production's graph with the deployment's bot on the fake Bot API.
type tgEnv struct {
	*apptest.Env
	bot   *fakeBot
	owner uuid.UUID
	next  int64 // the next update_id
	t     *testing.T
}

func newTGEnv(t *testing.T, model llm.Model, extra map[string]string, opts ...func(*apptest.Options)) *tgEnv {
	t.Helper()
	bot := newFakeBot(t)
	env := map[string]string{
		"STEWARD_TELEGRAM_BOT_TOKEN":      botToken,
		"STEWARD_TELEGRAM_WEBHOOK_SECRET": webhookSecret,
		"STEWARD_TELEGRAM_API_URL":        fmt.Sprintf("https://example.com:%d", bot.Addr().Port()),
		"STEWARD_EGRESS_ALLOW":            bot.Addr().String(),
	}
	for k, v := range extra {
		env[k] = v
	}
	o := apptest.Options{Model: model, Lookup: egresstest.Lookup, Env: env}
	for _, f := range opts {
		f(&o)
	}
	e := apptest.New(t, o)
	// The bot's sender trusts the fake's certificate (egress options are the test's seam).
	e.Telegram.Sender = &channel.Sender{Options: egress.Options{Lookup: egresstest.Lookup, Allow: []netip.AddrPort{bot.Addr()},
		RootCAs: bot.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}, Timeout: 5 * time.Second}
	owner, _ := e.DB.Owner(t, "ada")
	return &tgEnv{Env: e, bot: bot, owner: owner.ID, next: 1000, t: t}
}

// post sends one update to POST /telegram/callback as Telegram does and returns the status
// and the webhook's reply.
func (e *tgEnv) post(update map[string]any) (int, map[string]any) {
	e.t.Helper()
	body, _ := json.Marshal(update)
	req, _ := http.NewRequest(http.MethodPost, e.Server.URL+"/telegram/callback", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", webhookSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply map[string]any
	b, _ := io.ReadAll(resp.Body)
	if len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &reply); err != nil {
			e.t.Fatalf("callback answered %d %q: not JSON", resp.StatusCode, b)
		}
	}
	if reply["method"] == "sendMessage" && !previewOff(reply) {
		e.t.Errorf("the webhook's reply %v asks for a link preview, want link_preview_options {\"is_disabled\":true}", reply)
	}
	return resp.StatusCode, reply
}

// message is a Bot API update carrying a message from chat, with fields (text, voice, …).
func (e *tgEnv) message(chat int64, fields map[string]any) map[string]any {
	e.next++
	m := map[string]any{"message_id": e.next, "date": time.Now().Unix(),
		"chat": map[string]any{"id": chat, "type": "private", "first_name": "Ada"},
		"from": map[string]any{"id": chat, "is_bot": false, "first_name": "Ada"}}
	for k, v := range fields {
		m[k] = v
	}
	return map[string]any{"update_id": e.next, "message": m}
}

// send posts a text message from chat and wants a 200.
func (e *tgEnv) send(chat int64, text string) map[string]any {
	e.t.Helper()
	code, reply := e.post(e.message(chat, map[string]any{"text": text}))
	if code != http.StatusOK {
		e.t.Fatalf("callback for %q: %d %v", text, code, reply)
	}
	return reply
}

// link makes a code for the owner and sends it from ownerChat, as a person would.
func (e *tgEnv) link() {
	e.t.Helper()
	code, _, err := e.Telegram.Code(context.Background(), e.owner)
	if err != nil {
		e.t.Fatal(err)
	}
	reply := e.send(ownerChat, "/start "+code)
	if text, _ := reply["text"].(string); !strings.Contains(text, "linked to your Steward") {
		e.t.Fatalf("linking answered %v, want the chat linked", reply)
	}
}

// count runs a count query as the superuser (row-level security bypassed).
func (e *tgEnv) count(query string, args ...any) int {
	e.t.Helper()
	conn, err := pgx.Connect(context.Background(), e.DB.SuperURL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestTelegramConversation: a chat linked with a one-time code talks to Steward: a text
// message is a turn whose answer arrives at the Bot API formatted (MarkdownV2, escaped); a
// write arrives as a message with Approve/Deny buttons, and pressing Approve twice runs it
// once and sends the answer once; Telegram delivering an update again makes no second turn;
// the code works once.
func TestTelegramConversation(t *testing.T) {
	t.Parallel()
	model := scripted.New(
		scripted.Reply(scripted.Text("Hello **Ada**. 1+1=2 (really).")),
		scripted.Reply(scripted.Calls(scripted.Call("c1", "create_task", `{"title":"Buy milk"}`))),
		scripted.Reply(scripted.Text("Added the task.")),
		scripted.Reply(scripted.Text(long)),
	)
	e := newTGEnv(t, model, nil)
	code, _, err := e.Telegram.Code(context.Background(), e.owner)
	if err != nil {
		t.Fatal(err)
	}
	reply := e.send(ownerChat, "/start "+code)
	if text, _ := reply["text"].(string); reply["method"] != "sendMessage" || !strings.Contains(text, "linked to your Steward") {
		t.Fatalf("linking answered %v, want the chat linked", reply)
	}
	// The code works once: another chat sending it is refused.
	if text, _ := e.send(777, code)["text"].(string); !strings.Contains(text, "not valid") {
		t.Errorf("a used code answered %q, want it refused", text)
	}

	hello := e.message(ownerChat, map[string]any{"text": "hello"})
	if code, _ := e.post(hello); code != http.StatusOK {
		t.Fatalf("hello: %d", code)
	}
	texts := e.bot.texts()
	if len(texts) != 1 || texts[0] != `Hello *Ada*\. 1\+1\=2 \(really\)\.` {
		t.Fatalf("messages sent = %q, want the answer once, in MarkdownV2 with its specials escaped", texts)
	}
	if mode := e.bot.called("sendMessage")[0].Params["parse_mode"]; mode != "MarkdownV2" {
		t.Errorf("parse_mode = %v, want MarkdownV2", mode)
	}
	// Telegram retries a delivery: the same update_id makes no second turn.
	if code, _ := e.post(hello); code != http.StatusOK {
		t.Fatalf("hello again: %d", code)
	}
	if n := e.count(`SELECT count(*) FROM turns WHERE owner_id = $1`, e.owner); n != 1 {
		t.Fatalf("%d turns after the update arrived twice, want 1", n)
	}
	if n := len(e.bot.texts()); n != 1 {
		t.Fatalf("%d messages sent after the update arrived twice, want 1", n)
	}

	e.send(ownerChat, "add buy milk to my tasks")
	sends := e.bot.called("sendMessage")
	if len(sends) != 2 {
		t.Fatalf("%d messages, want the approval request as the second", len(sends))
	}
	ask := sends[1]
	if text, _ := ask.Params["text"].(string); !strings.Contains(text, "create\\_task") || !strings.Contains(text, "Buy milk") {
		t.Errorf("approval request %q does not name the write", text)
	}
	var markup struct {
		Keyboard [][]channel.Button `json:"inline_keyboard"`
	}
	b, _ := json.Marshal(ask.Params["reply_markup"])
	if err := json.Unmarshal(b, &markup); err != nil || len(markup.Keyboard) != 1 || len(markup.Keyboard[0]) != 2 ||
		!strings.Contains(markup.Keyboard[0][0].Text, "Approve") || !strings.Contains(markup.Keyboard[0][1].Text, "Deny") {
		t.Fatalf("reply_markup = %s, want one row: Approve, Deny", b)
	}
	// The conversation is one per chat: both turns are in it.
	if n := e.count(`SELECT count(DISTINCT conversation_id) FROM turns WHERE owner_id = $1`, e.owner); n != 1 {
		t.Errorf("the chat's turns are in %d conversations, want 1", n)
	}

	press := func(id string) {
		t.Helper()
		e.next++
		code, reply := e.post(map[string]any{"update_id": e.next, "callback_query": map[string]any{"id": id, "data": markup.Keyboard[0][0].Data,
			"from":    map[string]any{"id": ownerChat, "is_bot": false, "first_name": "Ada"},
			"message": map[string]any{"message_id": 101, "chat": map[string]any{"id": ownerChat, "type": "private"}}}})
		if code != http.StatusOK {
			t.Fatalf("press %s: %d %v", id, code, reply)
		}
	}
	press("q1")
	press("q2")
	if n := e.count(`SELECT count(*) FROM tasks WHERE owner_id = $1 AND title = 'Buy milk'`, e.owner); n != 1 {
		t.Fatalf("%d tasks after two presses of Approve, want 1", n)
	}
	answers := e.bot.called("answerCallbackQuery")
	if len(answers) != 2 {
		t.Fatalf("%d answerCallbackQuery, want one per press", len(answers))
	}
	if text, _ := answers[0].Params["text"].(string); !strings.Contains(text, "Approved") {
		t.Errorf("first press answered %q, want Approved", text)
	}
	if text, _ := answers[1].Params["text"].(string); !strings.Contains(text, "already used") || answers[1].Params["show_alert"] != true {
		t.Errorf("second press answered %v, want an alert that the link was used", answers[1].Params)
	}
	texts = e.bot.texts()
	if len(texts) != 3 || texts[2] != "Added the task\\." {
		t.Fatalf("messages = %q, want the resumed turn's answer once, third", texts)
	}
	if n := len(e.bot.called("editMessageReplyMarkup")); n < 1 {
		t.Errorf("the buttons were not removed after the decision")
	}

	// An answer longer than a Telegram message arrives whole, in parts cut at paragraphs.
	e.send(ownerChat, "tell me everything")
	parts := e.bot.texts()[3:]
	if len(parts) < 3 {
		t.Fatalf("a %d-character answer came as %d messages, want it in parts", len(long), len(parts))
	}
	for i, p := range parts {
		if len([]rune(p)) > 4096 || strings.HasSuffix(p, "…") || !strings.HasPrefix(p, "Paragraph") {
			t.Errorf("part %d (%d characters) is cut short or does not start at a paragraph: …%q", i, len([]rune(p)), p[max(0, len(p)-40):])
		}
	}
	if got := strings.Join(parts, "\n\n"); !strings.Contains(got, "Paragraph 1:") || !strings.Contains(got, "Paragraph 40: the end\\.") {
		t.Errorf("the parts do not carry the whole answer")
	}
}

// long is an answer of 40 paragraphs full of MarkdownV2's special characters (each escaped).
var long = func() string {
	var b strings.Builder
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&b, "Paragraph %d: %s\n\n", i, strings.Repeat("a.b-c (d)! ", 12))
	}
	b.WriteString("Paragraph 40: the end.")
	return b.String()
}()

// TestTelegramStrangerIsRefused: a chat that is not linked gets one polite refusal in the
// webhook's own reply, and nothing about it is stored — no update, no turn, no chat, no
// Bot API call.
func TestTelegramStrangerIsRefused(t *testing.T) {
	t.Parallel()
	e := newTGEnv(t, scripted.New(), nil)
	stranger := int64(999)
	reply := e.send(stranger, "hello, who are you?")
	if text, _ := reply["text"].(string); reply["method"] != "sendMessage" || reply["chat_id"] != float64(stranger) ||
		!strings.Contains(text, "only talks to the people it belongs to") {
		t.Fatalf("reply = %v, want one polite refusal to the chat", reply)
	}
	for _, table := range []string{"telegram_updates", "telegram_chats", "turns", "conversations", "audit_log"} {
		if n := e.count(`SELECT count(*) FROM ` + table); n != 0 {
			t.Errorf("%d rows in %s after a stranger's message, want none", n, table)
		}
	}
	// A group cannot be linked, even with a valid code (everyone in it would speak as the
	// owner), and the code still works in a private chat.
	code, _, err := e.Telegram.Code(context.Background(), e.owner)
	if err != nil {
		t.Fatal(err)
	}
	group := e.message(-100123, map[string]any{"text": code})
	group["message"].(map[string]any)["chat"] = map[string]any{"id": -100123, "type": "group", "title": "Family"}
	if _, reply := e.post(group); !strings.Contains(fmt.Sprint(reply["text"]), "Only a private chat") {
		t.Errorf("a group sending a code: %v, want it refused", reply)
	}
	if n := e.count(`SELECT count(*) FROM telegram_chats`); n != 0 {
		t.Errorf("%d chats linked after a group sent a code, want none", n)
	}
	if text, _ := e.send(ownerChat, code)["text"].(string); !strings.Contains(text, "linked to your Steward") {
		t.Errorf("the code in a private chat after the group: %q", text)
	}
	e.bot.mu.Lock()
	n := len(e.bot.calls)
	e.bot.mu.Unlock()
	if n != 0 {
		t.Errorf("%d Bot API calls for a stranger, want none (the refusal is the webhook's reply)", n)
	}
	// A wrong secret is refused before anything is read.
	req, _ := http.NewRequest(http.MethodPost, e.Server.URL+"/telegram/callback", strings.NewReader(`{"update_id":1}`))
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", "wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("wrong secret: %d, want 403", resp.StatusCode)
	}
}

// TestTelegramDocument: a document sent to the bot is fetched (getFile, then the file)
// and becomes a document of the owner's; one larger than the limit is refused in words
// before anything is downloaded, and nothing is saved.
func TestTelegramDocument(t *testing.T) {
	t.Parallel()
	e := newTGEnv(t, scripted.New(), map[string]string{"STEWARD_MAX_DOCUMENT_BYTES": "4096"})
	e.link()
	e.bot.mu.Lock()
	e.bot.files["doc-1"] = []byte("The boiler was serviced on 3 March; next service due in March.\n")
	e.bot.mu.Unlock()
	code, _ := e.post(e.message(ownerChat, map[string]any{"document": map[string]any{"file_id": "doc-1", "file_unique_id": "u1",
		"file_name": "boiler.txt", "mime_type": "text/plain", "file_size": 64}}))
	if code != http.StatusOK {
		t.Fatalf("document: %d", code)
	}
	docs, err := e.Documents.List(context.Background(), e.owner)
	if err != nil || len(docs) != 1 || docs[0].Name != "boiler.txt" {
		t.Fatalf("documents = %+v, %v; want boiler.txt", docs, err)
	}
	if texts := e.bot.texts(); len(texts) != 1 || !strings.Contains(texts[0], `Saved "boiler.txt" as a document`) {
		t.Fatalf("messages = %q, want the document saved", texts)
	}
	e.post(e.message(ownerChat, map[string]any{"document": map[string]any{"file_id": "doc-2", "file_unique_id": "u2",
		"file_name": "huge.pdf", "mime_type": "application/pdf", "file_size": 50 << 20}}))
	if texts := e.bot.texts(); len(texts) != 2 || !strings.Contains(texts[1], "larger than Steward takes") {
		t.Fatalf("messages = %q, want the large file refused in words", texts)
	}
	if n := len(e.bot.called("getFile")); n != 1 {
		t.Errorf("getFile called %d times, want once (the large file is refused by its announced size)", n)
	}
	if docs, _ := e.Documents.List(context.Background(), e.owner); len(docs) != 1 {
		t.Errorf("%d documents, want still 1", len(docs))
	}

	// A photo (Telegram lists its sizes smallest first; the largest is fetched) is a document too.
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, image.NewRGBA(image.Rect(0, 0, 64, 48)), nil); err != nil {
		t.Fatal(err)
	}
	e.bot.mu.Lock()
	e.bot.files["photo-big"] = jpg.Bytes()
	e.bot.mu.Unlock()
	e.post(e.message(ownerChat, map[string]any{"photo": []map[string]any{
		{"file_id": "photo-small", "file_unique_id": "p1", "width": 32, "height": 24, "file_size": 300},
		{"file_id": "photo-big", "file_unique_id": "p2", "width": 64, "height": 48, "file_size": jpg.Len()}}}))
	if texts := e.bot.texts(); len(texts) != 3 || !strings.Contains(texts[2], "Saved \"photo-") {
		t.Fatalf("messages = %q, want the photo saved", texts)
	}
	docs, _ = e.Documents.List(context.Background(), e.owner)
	if len(docs) != 2 {
		t.Fatalf("documents = %+v, want the photo beside boiler.txt", docs)
	}
	var photo steward.Document
	for _, d := range docs {
		if d.Name != "boiler.txt" {
			photo = d
		}
	}
	f, err := e.Documents.Content(context.Background(), e.owner, photo.ID)
	if err != nil || f.ContentType != "image/jpeg" || !bytes.Equal(f.Data, jpg.Bytes()) {
		t.Errorf("the photo's file: %s, %d bytes, %v; want the JPEG as sent", f.ContentType, len(f.Data), err)
	}
}

// TestTelegramOnLambda: with a run queue (STEWARD_RUN_QUEUE_URL, as on Lambda) the callback
// answers at once — no turn yet, nothing sent — and puts {"owner_id","kind":"telegram_update","key"}
// on the queue; functions/worker's handler (work.Spine.HandleMessages) runs the turn and the answer
// arrives; the message delivered again runs nothing more. A message the queue loses leaves
// the update queued, and the scheduler's tick takes it a minute later — once, whatever the
// late message then does.
func TestTelegramOnLambda(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []string
	sqs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct{ QueueUrl, MessageBody string }
		_ = json.NewDecoder(r.Body).Decode(&m)
		if r.Header.Get("X-Amz-Target") != "AmazonSQS.SendMessage" || !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
			t.Errorf("fake SQS: target %q, authorization %q", r.Header.Get("X-Amz-Target"), r.Header.Get("Authorization"))
		}
		mu.Lock()
		bodies = append(bodies, m.MessageBody)
		mu.Unlock()
		_, _ = io.WriteString(w, `{"MessageId":"m-1"}`)
	}))
	t.Cleanup(sqs.Close)
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	e := newTGEnv(t, scripted.New(scripted.Reply(scripted.Text("Queued and answered.")), scripted.Reply(scripted.Text("Drained and answered."))),
		map[string]string{"STEWARD_RUN_QUEUE_URL": sqs.URL + "/123456789012/steward-RunQueue", "AWS_REGION": "eu-west-1",
			"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret"},
		func(o *apptest.Options) { o.Now = now })
	e.link()
	e.send(ownerChat, "hello from the queue")
	mu.Lock()
	queued := append([]string(nil), bodies...)
	mu.Unlock()
	if len(queued) != 1 || !strings.Contains(queued[0], `"owner_id":"`+e.owner.String()+`"`) || !strings.Contains(queued[0], `"kind":"telegram_update"`) {
		t.Fatalf("run queue got %q, want one {owner_id, telegram_update}", queued)
	}
	if n := e.count(`SELECT count(*) FROM turns`); n != 0 || len(e.bot.texts()) != 0 {
		t.Fatalf("%d turns and %d messages before the worker ran, want none", n, len(e.bot.texts()))
	}
	ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-1", Body: queued[0]}}}
	for range 2 { // the second is SQS delivering the message again
		resp, err := e.Work.HandleMessages(context.Background(), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("worker: %+v, %v", resp, err)
		}
	}
	if texts := e.bot.texts(); len(texts) != 1 || texts[0] != `Queued and answered\.` {
		t.Fatalf("messages = %q, want the answer once", texts)
	}
	if n := e.count(`SELECT count(*) FROM turns`); n != 1 {
		t.Fatalf("%d turns, want 1", n)
	}

	// The queue loses the next message: a minute later the scheduler's tick takes the update.
	e.send(ownerChat, "and this one?")
	mu.Lock()
	lost := bodies[len(bodies)-1]
	mu.Unlock()
	if _, err := e.Scheduler.Handle(context.Background(), autonomy.Event{ScheduledTime: now()}); err != nil {
		t.Fatal(err)
	}
	if n := len(e.bot.texts()); n != 1 {
		t.Fatalf("%d messages before the update was a minute old, want still 1", n)
	}
	clock.Add(int64(2 * time.Minute))
	if _, err := e.Scheduler.Handle(context.Background(), autonomy.Event{ScheduledTime: now()}); err != nil {
		t.Fatal(err)
	}
	if texts := e.bot.texts(); len(texts) != 2 {
		t.Fatalf("messages after the tick = %q, want the drained update answered", texts)
	}
	if resp, err := e.Work.HandleMessages(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-2", Body: lost}}}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("late message: %+v, %v", resp, err)
	}
	if texts := e.bot.texts(); len(texts) != 2 || texts[1] != `Drained and answered\.` {
		t.Fatalf("messages = %q, want the drained update answered once", texts)
	}
	if n := e.count(`SELECT count(*) FROM turns`); n != 2 {
		t.Fatalf("%d turns, want 2", n)
	}
}

// TestTelegramVoiceNote: a voice note (espeak-ng speech, made Ogg by sox) sent to the bot is
// fetched, transcribed by the OpenAI-compatible audio server (which checks it got those
// Ogg bytes), shown back, and its transcript is the owner's message: the turn answers in
// text and — after /voice on — also as a voice note (sendVoice, Ogg/Opus).
func TestTelegramVoiceNote(t *testing.T) {
	t.Parallel()
	note := audiotest.Read(t, audiotest.Convert(t, audiotest.Speech(t, "What is on my list today?"), "ogg"))
	spoken := audiotest.OggOpus(1.5)
	var mu sync.Mutex
	var heard [][]byte
	audioSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/audio/transcriptions"):
			f, _, err := r.FormFile("file")
			if err != nil {
				t.Errorf("fake audio server: no file: %v", err)
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			data, _ := io.ReadAll(f)
			mu.Lock()
			heard = append(heard, data)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"text":"What is on my list today?","language":"english","duration":1.5}`)
		case strings.HasSuffix(r.URL.Path, "/audio/speech"):
			w.Header().Set("Content-Type", "audio/ogg")
			_, _ = w.Write(spoken)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(audioSrv.Close)
	model := scripted.New(scripted.Reply(scripted.Text("Your list is empty today.")))
	e := newTGEnv(t, model, map[string]string{"STEWARD_VOICE_OPENAI_BASE_URL": audioSrv.URL + "/v1",
		"STEWARD_VOICE_OPENAI_API_KEY": "sk-test", "STEWARD_VOICE_SPEECH_MODEL": "tts-1"})
	e.link()
	if text, _ := e.send(ownerChat, "/voice on")["text"].(string); !strings.Contains(text, "Voice replies are on") {
		t.Fatalf("/voice on answered %q", text)
	}
	e.bot.mu.Lock()
	e.bot.files["voice-1"] = note
	e.bot.mu.Unlock()
	code, _ := e.post(e.message(ownerChat, map[string]any{"voice": map[string]any{"file_id": "voice-1", "file_unique_id": "v1",
		"duration": 2, "mime_type": "audio/ogg", "file_size": len(note)}}))
	if code != http.StatusOK {
		t.Fatalf("voice note: %d", code)
	}
	mu.Lock()
	got := heard
	mu.Unlock()
	if len(got) != 1 || !bytes.Equal(got[0], note) || !bytes.HasPrefix(got[0], []byte("OggS")) {
		t.Fatalf("the audio server heard %d recordings, want the Ogg voice note once", len(got))
	}
	texts := e.bot.texts()
	if len(texts) != 2 || !strings.Contains(texts[0], "What is on my list today?") || texts[1] != `Your list is empty today\.` {
		t.Fatalf("messages = %q, want the transcript, then the answer", texts)
	}
	if reqs := model.Requests(); len(reqs) != 1 || !strings.Contains(fmt.Sprint(reqs[0].Messages[len(reqs[0].Messages)-1]), "What is on my list today?") {
		t.Errorf("the model was not asked the transcript as the owner's message")
	}
	voices := e.bot.called("sendVoice")
	if len(voices) != 1 || !bytes.Equal(voices[0].File, spoken) || voices[0].Params["chat_id"] != fmt.Sprint(ownerChat) {
		t.Fatalf("sendVoice calls = %d, want the spoken answer (Ogg/Opus) once", len(voices))
	}
}

// TestTelegramVoiceNoteWithoutSpeech: with no speech configured a voice note is answered in
// words that it cannot be used, and no turn runs.
func TestTelegramVoiceNoteWithoutSpeech(t *testing.T) {
	t.Parallel()
	e := newTGEnv(t, scripted.New(), nil)
	e.link()
	e.post(e.message(ownerChat, map[string]any{"voice": map[string]any{"file_id": "voice-1", "file_unique_id": "v1", "duration": 2, "mime_type": "audio/ogg"}}))
	if texts := e.bot.texts(); len(texts) != 1 || !strings.Contains(texts[0], "Voice notes need speech configured") {
		t.Fatalf("messages = %q, want speech not configured, in words", texts)
	}
	if n := e.count(`SELECT count(*) FROM turns`); n != 0 {
		t.Errorf("%d turns, want none", n)
	}
}

// TestTelegramContinuedTurn: on Lambda a turn about to outlive the worker's invocation
// continues in another (docs/ARCHITECTURE.md §2): the chat hears it is still working, and
// when the continued turn ends its answer arrives in the chat too.
func TestTelegramContinuedTurn(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []string
	sqs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct{ MessageBody string }
		_ = json.NewDecoder(r.Body).Decode(&m)
		mu.Lock()
		bodies = append(bodies, m.MessageBody)
		mu.Unlock()
		_, _ = io.WriteString(w, `{"MessageId":"m"}`)
	}))
	t.Cleanup(sqs.Close)
	model := scripted.New(scripted.Reply(scripted.Calls(scripted.Call("c1", "get_current_time", `{}`))),
		scripted.Reply(scripted.Text("It is later than you think.")))
	e := newTGEnv(t, model, map[string]string{"STEWARD_RUN_QUEUE_URL": sqs.URL + "/123456789012/steward-RunQueue",
		"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret",
		"STEWARD_CONTINUE_MARGIN": "10m"})
	e.link()
	e.send(ownerChat, "what time is it?")
	worker := func(body string) {
		t.Helper()
		// The worker's invocation has less time left than the margin: the turn continues.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		resp, err := e.Work.HandleMessages(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", Body: body}}})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("worker: %+v, %v", resp, err)
		}
	}
	mu.Lock()
	first := bodies[0]
	mu.Unlock()
	worker(first)
	mu.Lock()
	queued := append([]string(nil), bodies...)
	mu.Unlock()
	if len(queued) != 2 || !strings.Contains(queued[1], `"kind":"turn_continue"`) {
		t.Fatalf("run queue = %q, want the turn continuing", queued)
	}
	if texts := e.bot.texts(); len(texts) != 1 || !strings.Contains(texts[0], "Still working") {
		t.Fatalf("messages = %q, want still working", texts)
	}
	worker(queued[1])
	if texts := e.bot.texts(); len(texts) != 2 || texts[1] != `It is later than you think\.` {
		t.Fatalf("messages = %q, want the continued turn's answer", texts)
	}
}

// TestTelegramLinksAreNotPreviewed: a link in an answer reaches the chat as text, and no
// message Steward sends — an answer, a webhook reply, a plain notice — asks Telegram for a
// preview, so Telegram's servers never fetch a URL a hijacked model chose.
func TestTelegramLinksAreNotPreviewed(t *testing.T) {
	t.Parallel()
	e := newTGEnv(t, scripted.New(scripted.Reply(scripted.Text("Read https://evil.example/x?d=secret"))), nil)
	e.link()
	e.send(ownerChat, "what's new?")
	sends := e.bot.called("sendMessage")
	if len(sends) != 1 || !strings.Contains(fmt.Sprint(sends[0].Params["text"]), "evil.example") {
		t.Fatalf("messages sent = %v, want the answer with its link", e.bot.texts())
	}
	if !previewOff(sends[0].Params) {
		t.Errorf("the answer's sendMessage has link_preview_options %v, want {\"is_disabled\":true}", sends[0].Params["link_preview_options"])
	}
	// A plain notice (say): a voice note without speech configured.
	e.post(e.message(ownerChat, map[string]any{"voice": map[string]any{"file_id": "v1", "duration": 1, "mime_type": "audio/ogg"}}))
	if n := len(e.bot.called("sendMessage")); n < 2 {
		t.Fatalf("%d messages, want a notice about the voice note too", n)
	}
	for _, c := range e.bot.called("sendMessage") {
		if !previewOff(c.Params) {
			t.Errorf("sendMessage %q asks for a link preview", c.Params["text"])
		}
	}
}
