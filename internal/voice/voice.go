// Package voice is Steward's voice service (docs/ARCHITECTURE.md §18, docs/VOICE.md): it turns
// an owner's recording into text (Transcribe) and text into speech (Speak), through the
// configured backends — a Gemini model with audio input and a Gemini text-to-speech model
// (internal/llm/gemini), or an OpenAI-compatible /audio/transcriptions and /audio/speech
// (internal/llm/openai) — checked, bounded, priced and counted against the owner's budget like
// a model call of a turn.
//
// For a face (the API, the web app, the CLI, Telegram), the whole contract is:
//
//	t, err := svc.Transcribe(ctx, ownerID, recording, declaredType)
//	// t.Text, t.Language ("en", or ""), t.DurationMS
//	a, err := svc.Speak(ctx, ownerID, text, voiceName, voice.FormatWAV) // or voice.FormatOgg
//	// a.Data, a.ContentType ("audio/wav" or "audio/ogg"), a.DurationMS
//
// Errors are steward.Errors, so a face maps them with steward.ErrorCode as for anything else:
//   - CodeInvalid (400): not audio Steward reads (the type is sniffed from the bytes — WAV, Ogg
//     Opus or Vorbis, WebM Opus, MP3, M4A — and declaredType only appears in the message),
//     truncated or damaged, no sound, no words heard, empty or unspeakable text, an unknown
//     format or a malformed voice name, Ogg asked of a backend that makes only WAV;
//   - CodeTooLarge (413): over Limits.MaxBytes, over Limits.MaxDuration (also when only the
//     header claims it, e.g. 10 hours in a 1 KB file), text over Limits.MaxText characters;
//   - CodeNotFound (404): the backend is not configured (ErrNoTranscriber, ErrNoSpeaker;
//     Service.CanTranscribe and CanSpeak tell beforehand);
//   - CodeOverBudget / CodeKilled: the owner's daily budget, the deployment's cap, a kill
//     switch — checked before the backend is called (safety.Control.Admit, as a resumed
//     turn: a voice call is not a message);
//   - CodeUnavailable (503): the backend failed or timed out (Limits.Timeout).
//
// Each call that reached a backend is a voice_calls row in the owner's transaction, its cost
// added to the owner's day at COMMIT; a backend that reports no usage is estimated
// (AudioTokensPerSecond of audio, a token per four bytes of text), never counted as free. A
// call answered by a model without a price is charged at the configured model's; a configured
// model without a price refuses the call (app.CheckPrices refuses to start first).
package voice

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/audio"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/trace"
)

// Formats Speak makes.
const (
	FormatWAV = "wav" // audio/wav, 16-bit PCM (the default)
	FormatOgg = "ogg" // audio/ogg, Opus: only from an OpenAI-compatible backend
)

// AudioTokensPerSecond estimates the audio tokens of a backend that reports none: Gemini's
// rate for audio input (32 tokens a second of sound).
const AudioTokensPerSecond = 32

// Default limits (Limits' zero values).
const (
	DefaultMaxBytes    = 20 << 20 // Gemini's inline request limit
	DefaultMaxDuration = 10 * time.Minute
	DefaultMaxText     = 4000 // characters: OpenAI's /audio/speech takes 4,096
	DefaultTimeout     = 90 * time.Second
)

// Limits bound what one call takes; a zero field is its default.
type Limits struct {
	MaxBytes    int           // a recording's size (STEWARD_VOICE_MAX_BYTES)
	MaxDuration time.Duration // a recording's length (STEWARD_VOICE_MAX_SECONDS)
	MaxText     int           // the characters Speak reads
	Timeout     time.Duration // one backend call
}

// Errors of a backend that is not configured (CodeNotFound: the feature is off here).
var (
	ErrNoTranscriber = steward.Errorf(steward.CodeNotFound, "voice transcription is not configured on this server (docs/VOICE.md)")
	ErrNoSpeaker     = steward.Errorf(steward.CodeNotFound, "speech is not configured on this server: set STEWARD_VOICE_SPEECH_MODEL (docs/VOICE.md)")
)

// Service transcribes and speaks for owners. Build it in internal/app; it is safe for
// concurrent use.
type Service struct {
	Store *store.Store
	// Control admits a call: kill switches, the owner's daily cost, the deployment's cap.
	Control agent.Control
	// Prices prices each call by the model that answered.
	Prices *trace.Prices
	// Transcriber and Speaker are the backends; nil is not configured.
	Transcriber llm.Transcriber
	Speaker     llm.Speaker
	Limits      Limits
	// Logger receives the warning of an answer priced as its configured model.
	Logger zerolog.Logger
}

// Transcript is what Transcribe heard.
type Transcript struct {
	Text       string `json:"text"`
	Language   string `json:"language"`
	DurationMS int64  `json:"duration_ms"`
}

// Audio is what Speak made.
type Audio struct {
	Data        []byte `json:"-"`
	ContentType string `json:"content_type"`
	DurationMS  int64  `json:"duration_ms"`
}

// MaxBytes is the largest recording the service takes: a face caps a body at it.
func (s *Service) MaxBytes() int { return s.limits().MaxBytes }

// CanTranscribe reports whether a transcription backend is configured.
func (s *Service) CanTranscribe() bool { return s != nil && s.Transcriber != nil }

// CanSpeak reports whether a speech backend is configured.
func (s *Service) CanSpeak() bool { return s != nil && s.Speaker != nil }

// Check reads a recording as Transcribe does — size, sniffed type, length — without calling
// a backend: the type and length, or the error Transcribe would return. declaredType is what
// the sender said it was; it is only quoted in the error.
func (s *Service) Check(recording []byte, declaredType string) (audio.Info, error) {
	l := s.limits()
	if len(recording) > l.MaxBytes {
		return audio.Info{}, steward.Errorf(steward.CodeTooLarge, "the recording is %s; the largest Steward takes is %s", size(len(recording)), size(l.MaxBytes))
	}
	info, err := audio.Inspect(recording)
	if info.Duration > l.MaxDuration {
		how := "is"
		if err != nil {
			how = "claims to be" // the header's claim, whatever the bytes hold
		}
		return audio.Info{}, steward.Errorf(steward.CodeTooLarge, "the recording %s %s long; the longest Steward takes is %s", how, round(info.Duration), round(l.MaxDuration))
	}
	if err != nil {
		if d := strings.TrimSpace(declaredType); d != "" && !strings.HasPrefix(d, "application/octet-stream") {
			var se *steward.Error
			if errors.As(err, &se) {
				return audio.Info{}, steward.Errorf(se.Code, "%s (it was sent as %.60q)", se.Message, d)
			}
		}
		return audio.Info{}, err
	}
	return info, nil
}

// Transcribe turns ownerID's recording into text. See the package comment for the errors.
func (s *Service) Transcribe(ctx context.Context, ownerID uuid.UUID, recording []byte, declaredType string) (Transcript, error) {
	if !s.CanTranscribe() {
		return Transcript{}, ErrNoTranscriber
	}
	info, err := s.Check(recording, declaredType)
	if err != nil {
		return Transcript{}, err
	}
	if err := s.admit(ctx, ownerID); err != nil {
		return Transcript{}, err
	}
	clip := llm.Clip{Data: recording, Type: info.Type, DurationMS: info.Duration.Milliseconds()}
	call, cancel := context.WithTimeout(ctx, s.limits().Timeout)
	heard, err := s.Transcriber.Transcribe(call, clip)
	cancel()
	if err != nil {
		return Transcript{}, unavailable("transcription", err)
	}
	if heard.Model == "" {
		heard.Model = s.Transcriber.Name()
	}
	if heard.Estimated {
		audioTokens := (clip.DurationMS*AudioTokensPerSecond + 999) / 1000
		heard.Usage = steward.Usage{InputTokens: audioTokens, OutputTokens: textTokens(heard.Text)}
		heard.AudioTokens = audioTokens
	}
	if err := s.record(ctx, ownerID, store.VoiceCall{Kind: "transcribe", Model: heard.Model, DurationMS: clip.DurationMS,
		Usage: heard.Usage, AudioTokens: heard.AudioTokens, Estimated: heard.Estimated}, s.Transcriber.Name()); err != nil {
		return Transcript{}, err
	}
	text := strings.TrimSpace(heard.Text)
	if text == "" {
		return Transcript{}, steward.Errorf(steward.CodeInvalid, "no words could be heard in the recording")
	}
	return Transcript{Text: text, Language: heard.Language, DurationMS: clip.DurationMS}, nil
}

// TranscribeText is Transcribe's text alone (document.Service.Transcribe).
func (s *Service) TranscribeText(ctx context.Context, ownerID uuid.UUID, recording []byte, declaredType string) (string, error) {
	t, err := s.Transcribe(ctx, ownerID, recording, declaredType)
	return t.Text, err
}

// voiceName is what a voice may be called: a backend's names are short words.
var voiceName = regexp.MustCompile(`^[A-Za-z0-9_-]{0,40}$`)

// Speak reads text aloud for ownerID in voice (empty: the backend's default) as format
// (FormatWAV when empty, or FormatOgg). See the package comment for the errors.
func (s *Service) Speak(ctx context.Context, ownerID uuid.UUID, text, voice, format string) (Audio, error) {
	if !s.CanSpeak() {
		return Audio{}, ErrNoSpeaker
	}
	text = strings.TrimSpace(text)
	l := s.limits()
	switch {
	case text == "" || !utf8.ValidString(text):
		return Audio{}, steward.Errorf(steward.CodeInvalid, "there is no text to speak")
	case utf8.RuneCountInString(text) > l.MaxText:
		return Audio{}, steward.Errorf(steward.CodeTooLarge, "the text is %d characters; Steward speaks at most %d at once", utf8.RuneCountInString(text), l.MaxText)
	case !voiceName.MatchString(voice):
		return Audio{}, steward.Errorf(steward.CodeInvalid, "a voice is named by letters, digits, '-' and '_' (at most 40)")
	}
	switch format {
	case "", FormatWAV:
		format = FormatWAV
	case FormatOgg:
	default:
		return Audio{}, steward.Errorf(steward.CodeInvalid, "format must be %q or %q", FormatWAV, FormatOgg)
	}
	if err := s.admit(ctx, ownerID); err != nil {
		return Audio{}, err
	}
	call, cancel := context.WithTimeout(ctx, l.Timeout)
	spoken, err := s.Speaker.Speak(call, text, voice, format)
	cancel()
	if err != nil {
		if steward.ErrorCode(err) == steward.CodeInvalid {
			return Audio{}, err
		}
		return Audio{}, unavailable("speech", err)
	}
	info, err := audio.Inspect(spoken.Data)
	if err != nil {
		return Audio{}, unavailable("speech", fmt.Errorf("the speech backend's audio: %w", err))
	}
	if spoken.Model == "" {
		spoken.Model = s.Speaker.Name()
	}
	if spoken.Estimated {
		spoken.Usage = steward.Usage{InputTokens: textTokens(text), OutputTokens: (info.Duration.Milliseconds()*AudioTokensPerSecond + 999) / 1000}
	}
	if err := s.record(ctx, ownerID, store.VoiceCall{Kind: "speak", Model: spoken.Model, DurationMS: info.Duration.Milliseconds(),
		Usage: spoken.Usage, Estimated: spoken.Estimated}, s.Speaker.Name()); err != nil {
		return Audio{}, err
	}
	return Audio{Data: spoken.Data, ContentType: info.Type, DurationMS: info.Duration.Milliseconds()}, nil
}

// admit refuses a call the owner's budget, the deployment's cap or a kill switch forbids.
func (s *Service) admit(ctx context.Context, ownerID uuid.UUID) error {
	if s.Control == nil {
		return nil
	}
	return s.Store.InOwner(ctx, ownerID, func(tx agent.Tx) error {
		return s.Control.Admit(ctx, tx, steward.Admission{OwnerID: ownerID, Resume: true})
	})
}

// record prices c by the model that answered and stores it. An answer naming a model without
// a price (a newer version Google routed to, a local server's own name) is charged at the
// configured model's price and logged, as chat's calls are; with neither priced the call is
// refused (fail closed).
func (s *Service) record(ctx context.Context, ownerID uuid.UUID, c store.VoiceCall, configured string) error {
	price, ok := s.Prices.Lookup(c.Model)
	if !ok {
		price, ok = s.Prices.Lookup(configured)
		if !ok {
			return steward.Errorf(steward.CodeUnavailable, "the voice model %s has no price, so its cost could not count against the budgets: set STEWARD_MODEL_PRICES for it", configured)
		}
		s.Logger.Warn().Str("model", c.Model).Str("priced_as", configured).
			Msg("the voice model's answer names a model without a price: charged at the configured model's price; set STEWARD_MODEL_PRICES for it")
	}
	c.CostMicros = price.AudioMicros(c.Usage, c.AudioTokens)
	return s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error { return tx.Voice.Record(ctx, c) })
}

func (s *Service) limits() Limits {
	l := s.Limits
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = DefaultMaxDuration
	}
	if l.MaxText <= 0 {
		l.MaxText = DefaultMaxText
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// unavailable is a backend's failure as the client sees it: in words, retryable.
func unavailable(what string, err error) error {
	if _, ok := steward.Words(err); ok {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return steward.Errorf(steward.CodeUnavailable, "the %s backend did not answer in time; try again", what)
	}
	// The client reads the steward.Error's words; the log and the trace keep the cause.
	return fmt.Errorf("%w: %w", steward.Errorf(steward.CodeUnavailable, "the %s backend failed; try again", what), err)
}

// textTokens estimates the tokens of text: a token per four bytes.
func textTokens(text string) int64 { return int64(len(text)+3) / 4 }

func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KB", (n+1023)/1024)
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }
