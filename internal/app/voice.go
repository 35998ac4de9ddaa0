package app

import (
	"context"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/llm/gemini"
	"github.com/stewardhq/steward/internal/llm/openai"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/voice"
)

// voiceModels are the voice models cfg calls (docs/ARCHITECTURE.md §18): transcription
// whenever a backend is configured, speech only when STEWARD_VOICE_SPEECH_MODEL names a model.
func voiceModels(cfg config.Config) (transcribe, speak string) {
	switch {
	case cfg.VoiceOpenAIBaseURL != "":
		transcribe = cfg.VoiceTranscribeModel
		if transcribe == "" {
			transcribe = "whisper-1"
		}
	case cfg.GeminiAPIKey != "":
		transcribe = cfg.VoiceTranscribeModel
		if transcribe == "" {
			transcribe = cfg.FastModel
		}
	default:
		return "", ""
	}
	return transcribe, cfg.VoiceSpeechModel
}

// newVoice builds the voice service over the configured backends: an OpenAI-compatible
// server when STEWARD_VOICE_OPENAI_BASE_URL is set, else Gemini; with neither, a service
// whose calls answer "not configured".
func newVoice(ctx context.Context, cfg config.Config, hc *http.Client, st *store.Store, ctl agent.Control, log zerolog.Logger) (*voice.Service, error) {
	s := &voice.Service{Store: st, Control: ctl, Prices: Prices(cfg), Logger: log, Limits: voice.Limits{
		MaxBytes: cfg.VoiceMaxBytes, MaxDuration: time.Duration(cfg.VoiceMaxSeconds) * time.Second}}
	transcribe, speak := voiceModels(cfg)
	var err error
	switch {
	case cfg.VoiceOpenAIBaseURL != "":
		key := cfg.VoiceOpenAIAPIKey
		if key == "" {
			key = cfg.OpenAIAPIKey
		}
		oc := openai.Config{APIKey: key, BaseURL: cfg.VoiceOpenAIBaseURL, HTTPClient: hc}
		oc.Model = transcribe
		if s.Transcriber, err = openai.NewTranscriber(oc); err != nil {
			return nil, err
		}
		if speak != "" {
			oc.Model = speak
			if s.Speaker, err = openai.NewSpeaker(oc); err != nil {
				return nil, err
			}
		}
	case transcribe != "":
		gc := gemini.VoiceConfig{APIKey: cfg.GeminiAPIKey, BaseURL: cfg.GeminiBaseURL, HTTPClient: hc, Model: transcribe}
		if s.Transcriber, err = gemini.NewTranscriber(ctx, gc); err != nil {
			return nil, err
		}
		if speak != "" {
			gc.Model = speak
			if s.Speaker, err = gemini.NewSpeaker(ctx, gc); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}
