package config

// Voice is transcription and speech (docs/ARCHITECTURE.md §18, docs/VOICE.md).
type Voice struct {
	// VoiceOpenAIBaseURL, when set, sends transcription and speech to an OpenAI-compatible
	// /audio/transcriptions and /audio/speech there (STEWARD_VOICE_OPENAI_BASE_URL; key
	// STEWARD_VOICE_OPENAI_API_KEY, else OPENAI_API_KEY); else Gemini does both when
	// GEMINI_API_KEY is set. VoiceTranscribeModel (STEWARD_VOICE_TRANSCRIBE_MODEL) is by
	// default the fast model with Gemini and whisper-1 with an OpenAI-compatible server;
	// VoiceSpeechModel (STEWARD_VOICE_SPEECH_MODEL) has no default: speech is off until it
	// names a model. Every voice model must have a price, like any other model.
	VoiceOpenAIBaseURL, VoiceOpenAIAPIKey  string
	VoiceTranscribeModel, VoiceSpeechModel string
	// VoiceMaxBytes and VoiceMaxSeconds bound one recording (STEWARD_VOICE_MAX_BYTES,
	// 20 MB; STEWARD_VOICE_MAX_SECONDS, 600).
	VoiceMaxBytes, VoiceMaxSeconds int
}

// voice reads the Voice area.
func (r *reader) voice() Voice {
	return Voice{
		VoiceOpenAIBaseURL:   r.str("STEWARD_VOICE_OPENAI_BASE_URL", ""),
		VoiceOpenAIAPIKey:    r.str("STEWARD_VOICE_OPENAI_API_KEY", ""),
		VoiceTranscribeModel: r.str("STEWARD_VOICE_TRANSCRIBE_MODEL", ""),
		VoiceSpeechModel:     r.str("STEWARD_VOICE_SPEECH_MODEL", ""),
		VoiceMaxBytes:        r.intIn("STEWARD_VOICE_MAX_BYTES", 20<<20, 1024, 100<<20),
		VoiceMaxSeconds:      r.intIn("STEWARD_VOICE_MAX_SECONDS", 600, 5, 4*3600),
	}
}
