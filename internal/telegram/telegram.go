// Package telegram is two-way Telegram (docs/TELEGRAM.md, docs/ARCHITECTURE.md §19): the
// deployment's bot (STEWARD_TELEGRAM_BOT_TOKEN) serves the Telegram chats owners linked to
// their Steward owner with a one-time code. A linked chat's messages become turns of one
// conversation per chat, through the same agent.Runner every face uses; answers go back
// formatted (MarkdownV2, channel.TelegramText), a write waiting for approval as a message
// with Approve/Deny buttons (the one-tap links' machinery, links.Service.TurnButtons); voice
// notes are transcribed (and answered by voice when the chat asked for it), documents and
// photos become documents. Anyone else gets one polite refusal and nothing is stored.
//
// Each update of a linked chat is stored once, keyed by its update_id (Telegram retries a
// delivery until answered; a repeated one makes no second turn) with its work item
// (internal/work, UpdateKind), then handed on (Service.Hand: in-process under `steward serve`,
// the run queue on Lambda) and taken once by Process. Every
// Bot API call runs outside any transaction, through the channel sender's egress guard and
// timeout.
package telegram

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/links"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/trace"
	"github.com/stewardhq/steward/internal/voice"
	"github.com/stewardhq/steward/internal/work"
)

// Door finds, across owners, whose a link code or a chat is. *store.Door implements it.
type Door interface {
	LookupTelegramCode(ctx context.Context, hash []byte) (uuid.UUID, error)
	LookupTelegramChat(ctx context.Context, chatID int64) (uuid.UUID, error)
}

// Runner starts turns: agent.Runner.Start, the one loop of every face.
type Runner interface {
	Start(ctx context.Context, in agent.Input, emit agent.Emit) (steward.View, error)
}

// Documents stores what is sent to the bot: document.Service.
type Documents interface {
	Upload(ctx context.Context, ownerID uuid.UUID, name, contentType string, data []byte) (steward.Document, error)
	Limit() int64
}

// Buttons makes the Approve/Deny buttons of a suspended turn: links.Service.TurnButtons.
type Buttons interface {
	TurnButtons(ctx context.Context, owner, turnID uuid.UUID) ([]channel.Button, error)
}

// Service is the deployment's bot serving linked chats.
type Service struct {
	Store *store.Store
	Door  Door
	// Bot is the deployment's bot: a Telegram target (its token and the Bot API's base
	// URL); Sender calls the Bot API through the egress guard, within its timeout.
	Bot    channel.Target
	Sender *channel.Sender
	Runner Runner
	// Documents stores documents and photos; Buttons makes a waiting write's buttons;
	// Voice transcribes voice notes and speaks answers (internal/voice; without a
	// transcriber a voice note is answered that speech is not configured).
	Documents Documents
	Buttons   Buttons
	Voice     *voice.Service
	// Hand runs a stored update (its work item, Kind) where this deployment runs work:
	// work.Spine.Hand — in-process under `steward serve`, through the run queue on Lambda,
	// else before the callback answers.
	Hand func(ctx context.Context, kind string, owner uuid.UUID, key string)
	// CodeTTL is a link code's life; zero means DefaultCodeTTL.
	CodeTTL time.Duration
	Now     steward.Clock
}

// DefaultCodeTTL is how long a link code works.
const DefaultCodeTTL = 15 * time.Minute

// MaxVoiceBytes bounds a voice note downloaded for transcription (Telegram's voice notes
// are Ogg/Opus at about 2 KB a second: 20 MB is well over an hour).
const MaxVoiceBytes = 20 << 20

// What the bot says in words.
const (
	refusal = "Hello! This is a private Steward assistant, and it only talks to the people it belongs to. " +
		"If that is you, link this chat: make a code in Steward (Settings → Telegram, or `steward telegram link`) and send it here."
	linked      = "This chat is linked to your Steward. Write to me here as you would in the app; I ask before I change anything."
	badCode     = "That code is not valid (it may have expired or been used already). Make a new one in Steward (Settings → Telegram, or `steward telegram link`) and send it here."
	takenChat   = "This chat is already linked to someone else's Steward. They can unlink it in their settings first."
	groupChat   = "Only a private chat with me can be linked (everyone in a group would speak as you). Open a chat with me and send the code there; the code still works."
	unsupported = "I can read text messages, voice notes, documents and photos. That kind of message I can't use, sorry."
	noVoice     = "Voice notes need speech configured on this Steward deployment, and it is not. Please write your message instead."
	noSpeech    = "Spoken answers need speech configured on this Steward deployment, and it is not; I answer in text."
	voiceOn     = "Voice replies are on: I answer your voice notes with a voice note too (/voice off to stop)."
	voiceOff    = "Voice replies are off: I answer in text (/voice on to hear them)."
)

// Code makes a one-time link code for owner: 12 letters and digits (about 60 bits), stored
// only as its hash, working once until it expires.
func (s *Service) Code(ctx context.Context, owner uuid.UUID) (string, time.Time, error) {
	code := newCode()
	exp := s.Now.Now().Add(s.codeTTL())
	err := s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		return tx.Telegram.CreateCode(ctx, auth.Hash(code), exp)
	})
	return code, exp, err
}

func (s *Service) codeTTL() time.Duration {
	if s.CodeTTL > 0 {
		return s.CodeTTL
	}
	return DefaultCodeTTL
}

// codeAlphabet leaves out the letters and digits people confuse (0/O, 1/I/L).
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// codeLen is a code's length: 31^12 ≈ 2^59.
const codeLen = 12

func newCode() string {
	b := make([]byte, codeLen)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

// normalCode reads what a person typed as a code: spaces and dashes dropped, upper case;
// false when it cannot be one.
func normalCode(s string) (string, bool) {
	s = strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(s)))
	if len(s) != codeLen {
		return "", false
	}
	for _, r := range s {
		if !strings.ContainsRune(codeAlphabet, r) {
			return "", false
		}
	}
	return s, true
}

// Chat is a linked chat as the owner sees it.
type Chat struct {
	ChatID   int64     `json:"chat_id"`
	Title    string    `json:"title"`
	Voice    bool      `json:"voice"`
	LinkedAt time.Time `json:"linked_at"`
}

// Chats lists the owner's linked chats.
func (s *Service) Chats(ctx context.Context, owner uuid.UUID) ([]Chat, error) {
	var out []Chat
	err := s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		chats, err := tx.Telegram.Chats(ctx)
		for _, c := range chats {
			out = append(out, Chat{ChatID: c.ChatID, Title: c.Title, Voice: c.Voice, LinkedAt: c.LinkedAt})
		}
		return err
	})
	return out, err
}

// Unlink stops serving a chat of the owner's; an unknown one is not_found.
func (s *Service) Unlink(ctx context.Context, owner uuid.UUID, chatID int64) error {
	err := s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error { return tx.Telegram.Unlink(ctx, chatID) })
	if errors.Is(err, store.ErrNotFound) {
		return steward.Errorf(steward.CodeNotFound, "no linked Telegram chat %d", chatID)
	}
	return err
}

// update is the part of a Bot API Update a message needs.
type update struct {
	UpdateID int64    `json:"update_id"`
	Message  *message `json:"message"`
}

type message struct {
	MessageID int64 `json:"message_id"`
	Chat      struct {
		ID        int64  `json:"id"`
		Type      string `json:"type"`
		Title     string `json:"title"`
		Username  string `json:"username"`
		FirstName string `json:"first_name"`
	} `json:"chat"`
	Text     string `json:"text"`
	Caption  string `json:"caption"`
	Voice    *file  `json:"voice"`
	Audio    *file  `json:"audio"`
	Document *file  `json:"document"`
	Photo    []file `json:"photo"`
}

type file struct {
	FileID   string `json:"file_id"`
	FileName string `json:"file_name"`
	MimeType string `json:"mime_type"`
	FileSize int64  `json:"file_size"`
}

// Stored is what is kept of a linked chat's message until it is taken: its kind and words,
// or the file to fetch.
type Stored struct {
	Kind     string `json:"kind"` // text | voice | document | photo
	Text     string `json:"text,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	FileName string `json:"file_name,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
	FileSize int64  `json:"file_size,omitempty"`
}

// stored sorts a message; false for a kind the bot does not use.
func (m *message) stored() (Stored, bool) {
	switch {
	case m.Voice != nil:
		return Stored{Kind: "voice", FileID: m.Voice.FileID, MimeType: m.Voice.MimeType, FileSize: m.Voice.FileSize}, true
	case m.Audio != nil:
		return Stored{Kind: "voice", FileID: m.Audio.FileID, MimeType: m.Audio.MimeType, FileSize: m.Audio.FileSize}, true
	case m.Document != nil:
		return Stored{Kind: "document", Text: m.Caption, FileID: m.Document.FileID, FileName: m.Document.FileName,
			MimeType: m.Document.MimeType, FileSize: m.Document.FileSize}, true
	case len(m.Photo) > 0:
		p := m.Photo[len(m.Photo)-1] // Telegram lists a photo's sizes smallest first
		return Stored{Kind: "photo", Text: m.Caption, FileID: p.FileID, FileName: fmt.Sprintf("photo-%d.jpg", m.MessageID),
			MimeType: "image/jpeg", FileSize: p.FileSize}, true
	case strings.TrimSpace(m.Text) != "":
		return Stored{Kind: "text", Text: m.Text}, true
	}
	return Stored{}, false
}

// reply is a webhook answer: a sendMessage Telegram runs itself, with the bot that
// received the update — no Bot API call, nothing stored.
func reply(chatID int64, text string) map[string]any {
	m := channel.TelegramMessage(chatID, text)
	m["method"] = "sendMessage"
	return m
}

// Receive handles a message update (links.Messages): a linked chat's message is stored once
// and handed on; an unlinked chat sending a valid code is linked; any other stranger gets
// one refusal, and nothing about them is stored.
func (s *Service) Receive(ctx context.Context, body []byte) (map[string]any, error) {
	var u update
	if err := json.Unmarshal(body, &u); err != nil {
		return nil, steward.Errorf(steward.CodeInvalid, "the body is not a Telegram update")
	}
	m := u.Message
	if m == nil || m.Chat.ID == 0 {
		return nil, nil // an edit, a join, a poll…: acknowledged, nothing to do
	}
	owner, err := s.Door.LookupTelegramChat(ctx, m.Chat.ID)
	if errors.Is(err, store.ErrNotFound) {
		return s.stranger(ctx, m), nil
	}
	if err != nil {
		return nil, err
	}
	text := strings.TrimSpace(m.Text)
	if cmd, arg, ok := command(text); ok {
		return s.command(ctx, owner, m.Chat.ID, cmd, arg)
	}
	st, ok := m.stored()
	if !ok {
		return reply(m.Chat.ID, unsupported), nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	var fresh bool
	err = s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		fresh, err = tx.Telegram.Receive(ctx, u.UpdateID, m.Chat.ID, b)
		if err != nil || !fresh {
			return err
		}
		return work.Enqueue(ctx, tx, UpdateKind, owner, work.Key(u.UpdateID), s.Now.Now())
	})
	if errors.Is(err, store.ErrNotFound) || steward.ErrorCode(err) == steward.CodeInvalid {
		return nil, nil // unlinked meanwhile, or a value Postgres refuses: nothing to do
	}
	if err != nil || !fresh {
		return nil, err
	}
	s.Hand(ctx, UpdateKind, owner, work.Key(u.UpdateID))
	return nil, nil
}

// command splits "/voice on" or "/start@bot CODE"; false when text is not a command.
func command(text string) (string, string, bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	cmd, arg, _ := strings.Cut(text, " ")
	cmd, _, _ = strings.Cut(cmd, "@")
	return strings.ToLower(cmd), strings.TrimSpace(arg), true
}

// stranger answers a chat that is not linked: a valid code links it; anything else is one
// refusal.
func (s *Service) stranger(ctx context.Context, m *message) map[string]any {
	text := strings.TrimSpace(m.Text)
	if cmd, arg, ok := command(text); ok && cmd == "/start" {
		text = arg
	}
	code, ok := normalCode(text)
	if !ok {
		return reply(m.Chat.ID, refusal)
	}
	if m.Chat.Type != "private" {
		// Everyone in a group would speak as the owner: only a private chat is linked.
		return reply(m.Chat.ID, groupChat)
	}
	if err := s.link(ctx, code, m); err != nil {
		switch steward.ErrorCode(err) {
		case steward.CodeNotFound:
			return reply(m.Chat.ID, badCode)
		case steward.CodeConflict:
			return reply(m.Chat.ID, takenChat)
		}
		zerolog.Ctx(ctx).Warn().Str("error", trace.Redact(err.Error())).Msg("telegram: linking a chat failed")
		return reply(m.Chat.ID, "Linking failed for a reason on Steward's side. Please try again in a minute.")
	}
	return reply(m.Chat.ID, linked)
}

// link uses a code and links the chat in one owner transaction: a used, expired or unknown
// code is not_found, a chat linked to another owner a conflict; neither changes anything.
func (s *Service) link(ctx context.Context, code string, m *message) error {
	h := auth.Hash(code)
	owner, err := s.Door.LookupTelegramCode(ctx, h)
	if errors.Is(err, store.ErrNotFound) {
		return steward.Errorf(steward.CodeNotFound, "unknown code")
	}
	if err != nil {
		return err
	}
	title := m.Chat.Title
	if title == "" && m.Chat.Username != "" {
		title = "@" + m.Chat.Username
	}
	if title == "" {
		title = m.Chat.FirstName
	}
	title = steward.Visible(cutRunes(title, 100))
	err = s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		if err := tx.Telegram.UseCode(ctx, h, s.Now.Now()); err != nil {
			return err
		}
		return tx.Telegram.Link(ctx, m.Chat.ID, title)
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return steward.Errorf(steward.CodeNotFound, "used or expired code")
	case errors.Is(err, store.ErrConflict):
		return steward.Errorf(steward.CodeConflict, "chat linked to another owner")
	}
	return err
}

// command runs a linked chat's command, answered in the webhook's reply.
func (s *Service) command(ctx context.Context, owner uuid.UUID, chatID int64, cmd, arg string) (map[string]any, error) {
	switch cmd {
	case "/start":
		return reply(chatID, linked), nil
	case "/voice":
		on := strings.EqualFold(arg, "on")
		if !on && !strings.EqualFold(arg, "off") {
			return reply(chatID, "Say /voice on to have voice notes answered by voice, /voice off for text only."), nil
		}
		if on && !s.Voice.CanSpeak() {
			return reply(chatID, noSpeech), nil
		}
		err := s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error { return tx.Telegram.SetVoice(ctx, chatID, on) })
		if err != nil {
			return nil, err
		}
		if on {
			return reply(chatID, voiceOn), nil
		}
		return reply(chatID, voiceOff), nil
	}
	return reply(chatID, "I know /voice on, /voice off and /start; anything else, just write."), nil
}

// Process runs a stored update once: the first caller takes it, any other (a redelivered
// queue message, a second process) finds it taken and does nothing.
func (s *Service) Process(ctx context.Context, owner uuid.UUID, updateID int64) error {
	var chat store.TelegramChat
	var raw []byte
	err := s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		chatID, msg, err := tx.Telegram.Take(ctx, updateID)
		if err != nil {
			return err
		}
		raw = msg
		chat, err = tx.Telegram.Chat(ctx, chatID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil // taken already, or the chat was unlinked
	}
	if err != nil {
		return err
	}
	var st Stored
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("telegram update %d: %w", updateID, err)
	}
	switch st.Kind {
	case "text":
		return s.turn(ctx, owner, chat, st.Text, false)
	case "voice":
		return s.voiceNote(ctx, owner, chat, st)
	default:
		return s.document(ctx, owner, chat, st)
	}
}

// turn runs the owner's message as a turn of the chat's conversation and sends the outcome;
// spoken also sends the answer as a voice note.
func (s *Service) turn(ctx context.Context, owner uuid.UUID, chat store.TelegramChat, text string, spoken bool) error {
	in := agent.Input{OwnerID: owner, ConversationID: chat.ConversationID, Message: text, Trigger: steward.TriggerChat}
	v, err := s.Runner.Start(ctx, in, nil)
	if chat.ConversationID != nil && steward.ErrorCode(err) == steward.CodeNotFound {
		in.ConversationID = nil // the owner deleted the conversation: the chat starts a new one
		v, err = s.Runner.Start(ctx, in, nil)
	}
	if err != nil {
		return s.say(ctx, chat.ChatID, refusalOf(err))
	}
	if chat.ConversationID == nil || *chat.ConversationID != v.ConversationID {
		if err := s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
			return tx.Telegram.SetConversation(ctx, chat.ChatID, v.ConversationID)
		}); err != nil && !errors.Is(err, store.ErrNotFound) {
			zerolog.Ctx(ctx).Warn().Str("error", trace.Redact(err.Error())).Msg("telegram: keeping the chat's conversation failed")
		}
	}
	if err := s.answer(ctx, owner, chat.ChatID, v); err != nil {
		return err
	}
	if spoken && v.Status == steward.StatusCompleted && v.Answer != "" {
		s.speak(ctx, owner, chat.ChatID, v.Answer)
	}
	return nil
}

// refusalOf is what the owner is told of a turn that could not start: a steward.Error's
// words, never an internal error's.
func refusalOf(err error) string {
	if m, ok := steward.Words(err); ok {
		return "Steward could not start on that: " + m
	}
	return "Something went wrong on Steward's side; nothing was done. Please try again in a minute."
}

// answer sends a turn's outcome to the chat: the answer, formatted; a write waiting for
// approval with its Approve/Deny buttons; an end in words.
func (s *Service) answer(ctx context.Context, owner uuid.UUID, chatID int64, v steward.View) error {
	switch v.Status {
	case steward.StatusCompleted:
		text := v.Answer
		if strings.TrimSpace(text) == "" {
			text = "Done."
		}
		for _, part := range split(text, partRunes) {
			if err := s.send(ctx, chatID, "", part, nil); err != nil {
				return err
			}
		}
		return nil
	case steward.StatusSuspended:
		if v.Awaiting != "" {
			return s.say(ctx, chatID, "Your decision is recorded; Steward is "+v.Awaiting+".")
		}
		buttons, err := s.Buttons.TurnButtons(ctx, owner, v.TurnID)
		if err != nil {
			return err
		}
		var b strings.Builder
		if len(v.Pending) == 1 {
			b.WriteString("Steward wants to do this and waits for your approval:\n")
		} else {
			fmt.Fprintf(&b, "Steward wants to do these %d things and waits for your approval (the buttons decide them all):\n", len(v.Pending))
		}
		for _, p := range v.Pending {
			fmt.Fprintf(&b, "• %s: %s\n", p.Tool, links.Summary(p.Args))
		}
		if len(buttons) == 0 {
			b.WriteString("\nApprove or deny it in the Steward app.")
		}
		return s.send(ctx, chatID, "Approval needed", b.String(), buttons)
	case steward.StatusContinuing, steward.StatusRunning, steward.StatusResuming:
		return s.say(ctx, chatID, "Still working on it; the answer follows.")
	case steward.StatusCancelled:
		return s.say(ctx, chatID, "Stopped: nothing more was done.")
	default:
		msg := "The turn failed; nothing more was done."
		if v.Error != "" {
			msg = "The turn failed: " + v.Error
		}
		return s.say(ctx, chatID, msg)
	}
}

// UpdateKind is the work spine's kind of a stored update (internal/work): enqueued with the
// update, keyed by its update_id.
const UpdateKind = "telegram_update"

// Kind is the stored updates' kind on the work spine: its worker is Process (an update
// already taken is done); with neither `steward serve` nor a run queue it runs before the
// callback answers, and the drain takes an update whose hand-off was lost a minute later.
func (s *Service) Kind() work.Kind {
	return work.Kind{Name: UpdateKind, Grace: time.Minute, Inline: true, Work: func(ctx context.Context, owner uuid.UUID, key string) error {
		updateID, err := strconv.ParseInt(key, 10, 64)
		if err != nil {
			return fmt.Errorf("telegram update key %q: %w", key, err)
		}
		return s.Process(ctx, owner, updateID)
	}}
}

// Ended is an agent.Hooks.Ended listener: a continued turn of a linked chat's conversation
// has its answer sent there (Continued); a failure is logged, the turn is saved either way.
func (s *Service) Ended(ctx context.Context, owner uuid.UUID, v steward.View) {
	if err := s.Continued(ctx, owner, v); err != nil {
		zerolog.Ctx(ctx).Warn().Str("error", trace.Redact(err.Error())).Stringer("turn_id", v.TurnID).Msg("telegram: sending a continued turn's answer failed")
	}
}

// Continued sends the outcome of a turn that continued past its invocation (§2) to the
// linked chat whose conversation it is; a turn of any other conversation is not the bot's.
func (s *Service) Continued(ctx context.Context, owner uuid.UUID, v steward.View) error {
	var chatID int64
	err := s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		chats, err := tx.Telegram.Chats(ctx)
		for _, c := range chats {
			if c.ConversationID != nil && *c.ConversationID == v.ConversationID {
				chatID = c.ChatID
			}
		}
		return err
	})
	if err != nil || chatID == 0 {
		return err
	}
	return s.answer(ctx, owner, chatID, v)
}

// target is the deployment's bot sending to chatID.
func (s *Service) target(chatID int64) channel.Target {
	t := s.Bot
	t.Settings.ChatID = strconv.FormatInt(chatID, 10)
	return t
}

// send sends Markdown text (and buttons) as MarkdownV2, through the sender's guard.
func (s *Service) send(ctx context.Context, chatID int64, title, text string, buttons []channel.Button) error {
	if _, err := s.Sender.Send(ctx, s.target(chatID), channel.Message{Title: title, Text: text, Buttons: buttons}); err != nil {
		return fmt.Errorf("telegram: send to chat: %w", err)
	}
	return nil
}

// say sends plain words (no Markdown read in them).
func (s *Service) say(ctx context.Context, chatID int64, text string) error {
	if err := s.Sender.BotCall(ctx, s.target(chatID), "sendMessage", channel.TelegramMessage(chatID, text), nil); err != nil {
		return fmt.Errorf("telegram: send to chat: %w", err)
	}
	return nil
}

// Decided answers a button pressed in a linked chat (links.Messages): the answer, the
// buttons removed once decided, and the decided turn's outcome sent to the chat.
func (s *Service) Decided(ctx context.Context, owner uuid.UUID, b links.Pressed, v *steward.View) bool {
	err := s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		_, err := tx.Telegram.Chat(ctx, b.ChatID)
		return err
	})
	if err != nil {
		return false
	}
	t := s.target(b.ChatID)
	log := zerolog.Ctx(ctx)
	if err := s.Sender.BotCall(ctx, t, "answerCallbackQuery", map[string]any{"callback_query_id": b.QueryID, "text": b.Text, "show_alert": b.Alert}, nil); err != nil {
		log.Warn().Err(err).Msg("telegram: answerCallbackQuery")
		return false
	}
	if b.Done {
		if err := s.Sender.BotCall(ctx, t, "editMessageReplyMarkup", map[string]any{"chat_id": b.ChatID, "message_id": b.MessageID,
			"reply_markup": map[string]any{"inline_keyboard": [][]channel.Button{}}}, nil); err != nil {
			log.Warn().Err(err).Msg("telegram: editMessageReplyMarkup")
		}
	}
	if v != nil {
		if err := s.answer(ctx, owner, b.ChatID, *v); err != nil {
			log.Warn().Str("error", trace.Redact(err.Error())).Msg("telegram: sending the decided turn's answer")
		}
	}
	return true
}

// partRunes bounds one message of a long answer: Telegram takes 4,096 characters after
// MarkdownV2's escapes, which can double a text full of punctuation.
const partRunes = 2000

// split cuts a long answer into parts of at most n characters, at a paragraph break, else
// a line break, else a space, else anywhere; a short one is one part.
func split(text string, n int) []string {
	var parts []string
	for {
		r := []rune(text)
		if len(r) <= n {
			return append(parts, text)
		}
		head := string(r[:n])
		cut := -1
		for _, sep := range []string{"\n\n", "\n", " "} {
			if i := strings.LastIndex(head, sep); i > len(head)/2 {
				cut = i
				break
			}
		}
		if cut < 0 {
			cut = len(head)
		}
		parts = append(parts, strings.TrimRight(head[:cut], " \n"))
		text = strings.TrimLeft(text[cut:], " \n")
	}
}

func cutRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
