// Package voicefake is a fake of the speech APIs Steward's voice backends call, for tests
// (docs/ARCHITECTURE.md §18): Gemini's generateContent (audio in → a JSON transcript; the
// AUDIO modality → 24 kHz 16-bit PCM) behind the real genai SDK, and an OpenAI-compatible
// /audio/transcriptions and /audio/speech behind the real go-openai client. It checks the
// audio it is sent the way a provider would — the declared type must be what the bytes are
// (internal/audio sniffs them), the size within bounds — answers 400 otherwise, and records
// what it received for the test to assert.
package voicefake

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/audio"
	"github.com/stewardhq/steward/internal/audio/audiotest"
)

// Received is one recording the fake was sent.
type Received struct {
	DeclaredType string // the inline MIME type (Gemini) or the file name's extension (OpenAI)
	SniffedType  string
	Size         int
	Duration     time.Duration
}

// Spoken is one text the fake was asked to speak.
type Spoken struct{ Text, Voice, Format string }

// Server is the fake; serve it with httptest.NewServer. Gemini's paths and the OpenAI-compatible
// ones are on the same server: GEMINI_BASE_URL is its URL, STEWARD_VOICE_OPENAI_BASE_URL its
// URL + "/v1".
type Server struct {
	// Transcript is the text every transcription answers ("" is an empty transcript).
	Transcript string
	// Language is the language it reports ("en" when empty).
	Language string
	// MaxBytes is the largest recording it takes (20 MB when 0).
	MaxBytes int
	// ModelVersion is the model Gemini's answers name (the requested one when empty), as
	// Google names a model's newer version.
	ModelVersion string

	mu       sync.Mutex
	received []Received
	spoken   []Spoken
}

// New returns a fake answering transcript.
func New(transcript string) *Server { return &Server{Transcript: transcript} }

// Received is what the fake was sent to transcribe, in order.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Spoken is what the fake was asked to speak, in order.
func (s *Server) Spoken() []Spoken {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Spoken(nil), s.spoken...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":generateContent"):
		s.gemini(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/audio/transcriptions"):
		s.openAITranscribe(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/audio/speech"):
		s.openAISpeak(w, r)
	default:
		http.Error(w, `{"error":{"message":"not faked","code":404}}`, http.StatusNotFound)
	}
}

// check reads a recording as a provider would: its declared type must be what it is.
func (s *Server) check(data []byte, declared string) (Received, error) {
	max := s.MaxBytes
	if max == 0 {
		max = 20 << 20
	}
	rec := Received{DeclaredType: declared, Size: len(data)}
	if len(data) > max {
		return rec, fmt.Errorf("the audio is %d bytes, over %d", len(data), max)
	}
	info, err := audio.Inspect(data)
	if err != nil {
		return rec, fmt.Errorf("the audio cannot be read: %v", err)
	}
	rec.SniffedType, rec.Duration = info.Type, info.Duration
	if base, _, _ := mime.ParseMediaType(declared); base != info.Type {
		return rec, fmt.Errorf("the audio is declared %q and is %s", declared, info.Type)
	}
	s.mu.Lock()
	s.received = append(s.received, rec)
	s.mu.Unlock()
	return rec, nil
}

func (s *Server) language() string {
	if s.Language == "" {
		return "en"
	}
	return s.Language
}

type geminiRequest struct {
	Contents []struct {
		Parts []struct {
			Text       string `json:"text"`
			InlineData *struct {
				MIMEType string `json:"mimeType"`
				Data     []byte `json:"data"`
			} `json:"inlineData"`
		} `json:"parts"`
	} `json:"contents"`
	GenerationConfig struct {
		ResponseModalities []string `json:"responseModalities"`
		SpeechConfig       *struct {
			VoiceConfig struct {
				PrebuiltVoiceConfig struct {
					VoiceName string `json:"voiceName"`
				} `json:"prebuiltVoiceConfig"`
			} `json:"voiceConfig"`
		} `json:"speechConfig"`
	} `json:"generationConfig"`
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request) {
	var req geminiRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req); err != nil {
		geminiError(w, http.StatusBadRequest, "the request is not JSON: "+err.Error())
		return
	}
	model := cmp.Or(s.ModelVersion, strings.TrimSuffix(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:], ":generateContent"))
	var text string
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			text += p.Text
			if p.InlineData == nil {
				continue
			}
			rec, err := s.check(p.InlineData.Data, p.InlineData.MIMEType)
			if err != nil {
				geminiError(w, http.StatusBadRequest, err.Error())
				return
			}
			audioTokens := int(math.Ceil(rec.Duration.Seconds() * 32))
			answer, _ := json.Marshal(map[string]string{"text": s.Transcript, "language": s.language()})
			writeJSON(w, map[string]any{
				"candidates": []any{map[string]any{"content": map[string]any{"role": "model",
					"parts": []any{map[string]any{"text": string(answer)}}}, "finishReason": "STOP"}},
				"usageMetadata": map[string]any{"promptTokenCount": audioTokens + 40, "candidatesTokenCount": 20,
					"promptTokensDetails": []any{map[string]any{"modality": "AUDIO", "tokenCount": audioTokens},
						map[string]any{"modality": "TEXT", "tokenCount": 40}}},
				"modelVersion": model,
			})
			return
		}
	}
	if len(req.GenerationConfig.ResponseModalities) == 1 && req.GenerationConfig.ResponseModalities[0] == "AUDIO" {
		voice := ""
		if sc := req.GenerationConfig.SpeechConfig; sc != nil {
			voice = sc.VoiceConfig.PrebuiltVoiceConfig.VoiceName
		}
		s.mu.Lock()
		s.spoken = append(s.spoken, Spoken{Text: text, Voice: voice, Format: "pcm"})
		s.mu.Unlock()
		pcm := PCM(text, 24000)
		writeJSON(w, map[string]any{
			"candidates": []any{map[string]any{"content": map[string]any{"role": "model",
				"parts": []any{map[string]any{"inlineData": map[string]any{"mimeType": "audio/L16;codec=pcm;rate=24000",
					"data": base64.StdEncoding.EncodeToString(pcm)}}}}, "finishReason": "STOP"}},
			"usageMetadata": map[string]any{"promptTokenCount": len(text)/4 + 1, "candidatesTokenCount": len(pcm) / 2 / 24000 * 25},
			"modelVersion":  model,
		})
		return
	}
	geminiError(w, http.StatusBadRequest, "voicefake answers audio in or the AUDIO modality only")
}

// PCM is what the fake speaks for text at rate: a quiet 220 Hz tone, 60 ms a character
// (at least half a second), 16-bit mono little-endian.
func PCM(text string, rate int) []byte {
	n := max(len(text)*rate*60/1000, rate/2)
	out := make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(out[2*i:], uint16(int16(3000*math.Sin(2*math.Pi*220*float64(i)/float64(rate)))))
	}
	return out
}

func (s *Server) openAITranscribe(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		openAIError(w, "the request is not multipart: "+err.Error())
		return
	}
	f, h, err := r.FormFile("file")
	if err != nil {
		openAIError(w, "no file")
		return
	}
	defer f.Close()
	data, _ := io.ReadAll(f)
	ext := h.Filename[strings.LastIndex(h.Filename, ".")+1:]
	declared := map[string]string{"wav": audio.WAV, "ogg": audio.Ogg, "webm": audio.WebM, "mp3": audio.MP3, "m4a": audio.M4A}[ext]
	rec, err := s.check(data, declared)
	if err != nil {
		openAIError(w, err.Error())
		return
	}
	if r.FormValue("model") == "" {
		openAIError(w, "no model")
		return
	}
	writeJSON(w, map[string]any{"text": s.Transcript, "language": "english", "duration": rec.Duration.Seconds()})
}

func (s *Server) openAISpeak(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model, Input, Voice string
		Format              string `json:"response_format"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil || req.Input == "" || req.Model == "" {
		openAIError(w, "want {model, input, voice, response_format}")
		return
	}
	s.mu.Lock()
	s.spoken = append(s.spoken, Spoken{Text: req.Input, Voice: req.Voice, Format: req.Format})
	s.mu.Unlock()
	wav := audio.WrapPCM(PCM(req.Input, 24000), audio.PCMFormat{Rate: 24000, Channels: 1, Bits: 16})
	switch req.Format {
	case "wav":
		w.Header().Set("Content-Type", "audio/wav")
		_, _ = w.Write(wav)
	case "opus":
		w.Header().Set("Content-Type", "audio/ogg")
		_, _ = w.Write(audiotest.OggOpus(float64(len(wav)-44) / 48000))
	default:
		openAIError(w, "voicefake makes wav and opus only")
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func geminiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "INVALID_ARGUMENT"}})
}

func openAIError(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
}
