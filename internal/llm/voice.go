package llm

import (
	"context"

	"github.com/stewardhq/steward/internal/steward"
)

// Clip is audio on its way to a speech-to-text model: the bytes, their MIME type as sniffed
// from the bytes (never as declared by whoever sent them) and their length in milliseconds,
// read from the container (internal/voice checks all three before an adapter sees a clip).
type Clip struct {
	Data       []byte
	Type       string
	DurationMS int64
}

// Heard is a speech-to-text model's answer: the words, the language it heard (a BCP-47 tag
// such as "en"; empty when the model does not say), the model that answered and what it
// used. A model that reports no usage leaves Usage zero and Estimated true: the caller
// estimates it from the clip (internal/voice).
type Heard struct {
	Text, Language, Model string
	Usage                 steward.Usage
	// AudioTokens is the part of Usage.InputTokens that was audio, priced at the audio rate.
	AudioTokens int64
	Estimated   bool
}

// Spoken is a text-to-speech model's answer: audio of ContentType ("audio/wav",
// "audio/ogg"), the model that answered and what it used (Estimated as in Heard; the output
// tokens are audio).
type Spoken struct {
	Data               []byte
	ContentType, Model string
	Usage              steward.Usage
	Estimated          bool
}

// Transcriber turns speech into text: Gemini with audio input (internal/llm/gemini) or an
// OpenAI-compatible /audio/transcriptions endpoint (internal/llm/openai).
type Transcriber interface {
	Transcribe(ctx context.Context, clip Clip) (Heard, error)
	// Name is the model transcriptions are priced by.
	Name() string
}

// Speaker turns text into speech: a Gemini text-to-speech model (PCM, wrapped in a WAV
// header) or an OpenAI-compatible /audio/speech endpoint. format is "wav" or "ogg"
// (Ogg/Opus); a Speaker that cannot make format returns an error of steward.CodeInvalid.
// voice is the backend's voice name; empty is its default.
type Speaker interface {
	Speak(ctx context.Context, text, voice, format string) (Spoken, error)
	Name() string
}
