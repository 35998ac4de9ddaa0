package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/stewardhq/steward/internal/audio"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// maxSpeech bounds the audio read from /audio/speech: more than any text Steward sends
// (internal/voice caps it) makes at 48 kHz.
const maxSpeech = 64 << 20

// DefaultVoice is the voice Speak asks for when none is named.
const DefaultVoice = "alloy"

// Transcriber transcribes through an OpenAI-compatible POST {base}/audio/transcriptions
// (OpenAI, whisper.cpp's server, faster-whisper servers): the recording as a multipart file
// named by its sniffed type. It implements llm.Transcriber (docs/ARCHITECTURE.md §18).
type Transcriber struct{ audioClient }

// Speaker speaks through an OpenAI-compatible POST {base}/audio/speech, asking for WAV or
// for Opus in Ogg. It implements llm.Speaker.
type Speaker struct{ audioClient }

type audioClient struct{ m *Model }

var (
	_ llm.Transcriber = (*Transcriber)(nil)
	_ llm.Speaker     = (*Speaker)(nil)
)

// NewTranscriber returns a Transcriber for cfg (its Model the transcription model, e.g.
// "whisper-1"). It makes no request.
func NewTranscriber(cfg Config) (*Transcriber, error) {
	m, err := New(cfg)
	return &Transcriber{audioClient{m}}, err
}

// NewSpeaker returns a Speaker for cfg (its Model the speech model, e.g. "gpt-4o-mini-tts").
// It makes no request.
func NewSpeaker(cfg Config) (*Speaker, error) {
	m, err := New(cfg)
	return &Speaker{audioClient{m}}, err
}

// Name is the configured model.
func (a audioClient) Name() string { return a.m.name }

// extensions name the multipart file by type: servers read the format from the file name.
var extensions = map[string]string{audio.WAV: "wav", audio.Ogg: "ogg", audio.WebM: "webm", audio.MP3: "mp3", audio.M4A: "m4a"}

// Transcribe sends clip. OpenAI's gpt-* transcription models answer json (no language); the
// others (whisper-1, whisper.cpp) verbose_json with the language. The SDK reads no usage:
// Heard is Estimated.
func (t *Transcriber) Transcribe(ctx context.Context, clip llm.Clip) (llm.Heard, error) {
	format := openai.AudioResponseFormatVerboseJSON
	if strings.HasPrefix(t.m.name, "gpt-") {
		format = openai.AudioResponseFormatJSON
	}
	var out openai.AudioResponse
	err := t.m.retry.Do(ctx, func(ctx context.Context) error {
		var err error
		out, err = t.m.chat.CreateTranscription(ctx, openai.AudioRequest{Model: t.m.name,
			FilePath: "recording." + extensions[clip.Type], Reader: bytes.NewReader(clip.Data), Format: format})
		return err
	})
	if err != nil {
		return llm.Heard{}, fmt.Errorf("openai: transcription: %w", err)
	}
	return llm.Heard{Text: out.Text, Language: language(out.Language), Model: t.m.name, Estimated: true}, nil
}

// Speak asks for format ("wav", or "ogg": Opus, which OpenAI sends in Ogg) in voice
// (DefaultVoice when empty).
func (s *Speaker) Speak(ctx context.Context, text, voice, format string) (llm.Spoken, error) {
	rf, ct := openai.SpeechResponseFormatWav, audio.WAV
	switch format {
	case "", "wav":
	case "ogg":
		rf, ct = openai.SpeechResponseFormatOpus, audio.Ogg
	default:
		return llm.Spoken{}, steward.Errorf(steward.CodeInvalid, "the speech backend makes wav or ogg, not %q", format)
	}
	if voice == "" {
		voice = DefaultVoice
	}
	var data []byte
	err := s.m.retry.Do(ctx, func(ctx context.Context) error {
		resp, err := s.m.chat.CreateSpeech(ctx, openai.CreateSpeechRequest{Model: openai.SpeechModel(s.m.name),
			Input: text, Voice: openai.SpeechVoice(voice), ResponseFormat: rf})
		if err != nil {
			return err
		}
		defer resp.Close()
		data, err = io.ReadAll(io.LimitReader(resp, maxSpeech+1))
		if err == nil && len(data) > maxSpeech {
			err = fmt.Errorf("the speech is over %d MB", maxSpeech>>20)
		}
		return err
	})
	if err != nil {
		return llm.Spoken{}, fmt.Errorf("openai: speech: %w", err)
	}
	return llm.Spoken{Data: data, ContentType: ct, Model: s.m.name, Estimated: true}, nil
}

// language turns whisper's language name ("english") or code ("en") into a short tag; an
// unknown name is kept as it is.
func language(l string) string {
	l = strings.ToLower(strings.TrimSpace(l))
	if code, ok := languages[l]; ok {
		return code
	}
	return l
}

var languages = map[string]string{"english": "en", "german": "de", "french": "fr", "spanish": "es", "italian": "it",
	"portuguese": "pt", "dutch": "nl", "polish": "pl", "russian": "ru", "japanese": "ja", "chinese": "zh", "korean": "ko",
	"swedish": "sv", "norwegian": "no", "danish": "da", "finnish": "fi", "turkish": "tr", "ukrainian": "uk", "czech": "cs", "greek": "el"}
