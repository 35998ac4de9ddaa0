package telegram

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/trace"
	"github.com/stewardhq/steward/internal/voice"
)

// download fetches a file the bot received (getFile, then the file), at most max bytes:
// the size Telegram announced is checked before anything is fetched, the download is cut
// at max+1 bytes whatever it claims.
func (s *Service) download(ctx context.Context, chatID int64, st Stored, max int64) ([]byte, error) {
	if st.FileSize > max {
		return nil, channel.ErrTooLarge
	}
	var f struct {
		FilePath string `json:"file_path"`
		FileSize int64  `json:"file_size"`
	}
	t := s.target(chatID)
	if err := s.Sender.BotCall(ctx, t, "getFile", map[string]any{"file_id": st.FileID}, &f); err != nil {
		return nil, err
	}
	if f.FileSize > max {
		return nil, channel.ErrTooLarge
	}
	return s.Sender.BotFile(ctx, t, f.FilePath, max)
}

// voiceNote transcribes a voice note and runs its transcript as the owner's message; the
// answer is text, and a voice note too when the chat turned voice replies on.
func (s *Service) voiceNote(ctx context.Context, owner uuid.UUID, chat store.TelegramChat, st Stored) error {
	if !s.Voice.CanTranscribe() {
		return s.say(ctx, chat.ChatID, noVoice)
	}
	audio, err := s.download(ctx, chat.ChatID, st, MaxVoiceBytes)
	if errors.Is(err, channel.ErrTooLarge) {
		return s.say(ctx, chat.ChatID, fmt.Sprintf("That voice note is longer than I can take (%d MB at most).", MaxVoiceBytes>>20))
	}
	if err != nil {
		return s.fetchFailed(ctx, chat.ChatID, "voice note", err)
	}
	ct := st.MimeType
	if ct == "" {
		ct = "audio/ogg"
	}
	tr, err := s.Voice.Transcribe(ctx, owner, audio, ct)
	text := tr.Text
	if err != nil {
		return s.say(ctx, chat.ChatID, "I could not understand that voice note: "+wordsOf(err))
	}
	if strings.TrimSpace(text) == "" {
		return s.say(ctx, chat.ChatID, "I heard nothing I could write down in that voice note.")
	}
	if err := s.say(ctx, chat.ChatID, "🎙 "+text); err != nil {
		return err
	}
	return s.turn(ctx, owner, chat, text, chat.Voice)
}

// speak sends text as a voice note (sendVoice, Ogg/Opus) when the speech backend makes
// Ogg/Opus, else as a WAV file (sendDocument: Telegram plays only Ogg/Opus as a voice note);
// a failure is logged, the text answer was sent already.
func (s *Service) speak(ctx context.Context, owner uuid.UUID, chatID int64, text string) {
	if !s.Voice.CanSpeak() {
		return
	}
	log := zerolog.Ctx(ctx)
	text = cutRunes(text, voice.DefaultMaxText)
	spoken, err := s.Voice.Speak(ctx, owner, text, "", voice.FormatOgg)
	if steward.ErrorCode(err) == steward.CodeInvalid {
		spoken, err = s.Voice.Speak(ctx, owner, text, "", voice.FormatWAV) // a backend that makes WAV only
	}
	if err != nil {
		log.Warn().Str("error", trace.Redact(err.Error())).Msg("telegram: speaking the answer failed")
		return
	}
	method, field, name := "sendVoice", "voice", "answer.ogg"
	if !strings.HasPrefix(spoken.ContentType, "audio/ogg") {
		method, field, name = "sendDocument", "document", "answer.wav"
	}
	if err := s.Sender.BotUpload(ctx, s.target(chatID), method, map[string]string{"chat_id": fmt.Sprint(chatID)}, field, name,
		spoken.ContentType, spoken.Data, nil); err != nil {
		log.Warn().Str("error", trace.Redact(err.Error())).Msg("telegram: sending the spoken answer failed")
	}
}

// document stores a document or photo sent to the bot as a document of the owner's, and
// says so (or why not, in words).
func (s *Service) document(ctx context.Context, owner uuid.UUID, chat store.TelegramChat, st Stored) error {
	max := s.Documents.Limit()
	data, err := s.download(ctx, chat.ChatID, st, max)
	if errors.Is(err, channel.ErrTooLarge) {
		return s.say(ctx, chat.ChatID, fmt.Sprintf("That file is larger than Steward takes (%d MB at most); nothing was saved.", max>>20))
	}
	if err != nil {
		return s.fetchFailed(ctx, chat.ChatID, st.Kind, err)
	}
	name := path.Base(strings.ReplaceAll(st.FileName, "\\", "/"))
	if name == "" || name == "." || name == "/" {
		name = "telegram-" + st.Kind
	}
	doc, err := s.Documents.Upload(ctx, owner, name, st.MimeType, data)
	if err != nil {
		return s.say(ctx, chat.ChatID, fmt.Sprintf("I could not save %q as a document: %s Nothing was saved.", name, wordsOf(err)))
	}
	return s.say(ctx, chat.ChatID, fmt.Sprintf("Saved %q as a document (%d KB). Ask me about it any time.", doc.Name, (len(data)+1023)/1024))
}

// fetchFailed tells the chat a file could not be fetched, and logs why.
func (s *Service) fetchFailed(ctx context.Context, chatID int64, what string, err error) error {
	zerolog.Ctx(ctx).Warn().Str("error", trace.Redact(err.Error())).Msg("telegram: fetching a file failed")
	return s.say(ctx, chatID, "I could not fetch that "+what+" from Telegram. Please send it again in a minute.")
}

// wordsOf is a steward.Error's words, else a generic sentence.
func wordsOf(err error) string {
	m, ok := steward.Words(err)
	if !ok {
		return "something went wrong on Steward's side."
	}
	if !strings.HasSuffix(m, ".") {
		m += "."
	}
	return m
}
