package voice_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/audio"
	"github.com/stewardhq/steward/internal/audio/audiotest"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/gemini"
	"github.com/stewardhq/steward/internal/llm/openai"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/trace"
	"github.com/stewardhq/steward/internal/voice"
	"github.com/stewardhq/steward/internal/voice/voicefake"
)

const said = "Remind me to water the plants tomorrow at nine."

// env is a voice service over a real database and the fake speech APIs behind the real SDKs.
type env struct {
	db    testdb.Opened
	fake  *voicefake.Server
	owner store.Owner
}

func newEnv(t *testing.T) (env, string) {
	t.Helper()
	e := env{db: testdb.Open(t, 4), fake: voicefake.New(said)}
	e.owner, _ = e.db.Owner(t, "alice")
	srv := httptest.NewServer(e.fake)
	t.Cleanup(srv.Close)
	return e, srv.URL
}

func (e env) service(tr llm.Transcriber, sp llm.Speaker, limits voice.Limits) *voice.Service {
	return &voice.Service{Store: e.db.Store, Control: &safety.Control{GlobalCost: e.db.Door.GlobalCostToday},
		Prices:      trace.NewPrices(map[string]trace.Price{"gemini-tts-test": {Input: 0.5, Output: 10}, "tts-test": {Input: 1, Output: 12}}, nil),
		Transcriber: tr, Speaker: sp, Limits: limits}
}

func geminiBackends(t *testing.T, url string) (*gemini.Transcriber, *gemini.Speaker) {
	t.Helper()
	ctx := context.Background()
	tr, err := gemini.NewTranscriber(ctx, gemini.VoiceConfig{APIKey: "k", BaseURL: url, Model: config.DefaultFastModel})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := gemini.NewSpeaker(ctx, gemini.VoiceConfig{APIKey: "k", BaseURL: url, Model: "gemini-tts-test"})
	if err != nil {
		t.Fatal(err)
	}
	return tr, sp
}

// spent is the owner's voice calls today and the day's cost as the budget sees it.
func (e env) spent(t *testing.T) (calls, micros int64, budgetUSD float64) {
	t.Helper()
	ctx := context.Background()
	if err := e.db.Store.WithOwner(ctx, e.owner.ID, func(tx *store.Tx) error {
		var err error
		calls, micros, err = tx.Voice.Today(ctx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	v, err := (&control.Service{Store: e.db.Store}).View(ctx, e.owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	return calls, micros, v.Budget.CostUSDToday
}

// TestTranscribeGemini sends real speech (espeak-ng; sox's Ogg Vorbis and MP3 of it) through
// the genai SDK to a fake Gemini that checks what it gets: the sniffed type declared, the
// bytes whole. The transcript, its language and the recording's length come back, and each
// call's cost (its audio tokens priced) is on the owner's day.
func TestTranscribeGemini(t *testing.T) {
	t.Parallel()
	e, url := newEnv(t)
	tr, _ := geminiBackends(t, url)
	svc := e.service(tr, nil, voice.Limits{})
	wav := audiotest.Speech(t, said)
	for i, c := range []struct{ ext, mime string }{{"wav", audio.WAV}, {"ogg", audio.Ogg}, {"mp3", audio.MP3}} {
		path := wav
		if c.ext != "wav" {
			path = audiotest.Convert(t, wav, c.ext)
		}
		data := audiotest.Read(t, path)
		got, err := svc.Transcribe(context.Background(), e.owner.ID, data, "application/octet-stream")
		if err != nil {
			t.Fatalf("%s: %v", c.ext, err)
		}
		_, _, secs := audiotest.Soxi(t, data, c.ext)
		if got.Text != said || got.Language != "en" || math.Abs(float64(got.DurationMS)/1000-secs) > 0.06 {
			t.Errorf("%s: %+v, want %q in en, %.2fs", c.ext, got, said, secs)
		}
		rec := e.fake.Received()
		if len(rec) != i+1 || rec[i].DeclaredType != c.mime || rec[i].Size != len(data) {
			t.Errorf("%s: Gemini received %+v, want %s of %d bytes", c.ext, rec, c.mime, len(data))
		}
	}
	calls, micros, usd := e.spent(t)
	if calls != 3 || micros <= 0 || usd != float64(micros)/1e6 {
		t.Errorf("spent: %d calls, %d µ$, budget says $%v", calls, micros, usd)
	}
}

// TestTranscribeOpenAICompatible sends the recording through go-openai's multipart upload to
// a fake /audio/transcriptions (as whisper.cpp's server speaks it): named by its sniffed
// type, its language name turned into a code; the call estimated and priced (whisper-1's
// list price), never free.
func TestTranscribeOpenAICompatible(t *testing.T) {
	t.Parallel()
	e, url := newEnv(t)
	tr, err := openai.NewTranscriber(openai.Config{BaseURL: url + "/v1", Model: "whisper-1"})
	if err != nil {
		t.Fatal(err)
	}
	svc := e.service(tr, nil, voice.Limits{})
	data := audiotest.Read(t, audiotest.Convert(t, audiotest.Speech(t, said), "mp3"))
	got, err := svc.Transcribe(context.Background(), e.owner.ID, data, "audio/mpeg")
	if err != nil || got.Text != said || got.Language != "en" {
		t.Fatalf("transcribe: %+v, %v", got, err)
	}
	if rec := e.fake.Received(); len(rec) != 1 || rec[0].DeclaredType != audio.MP3 || rec[0].Size != len(data) {
		t.Errorf("received %+v", rec)
	}
	if calls, micros, _ := e.spent(t); calls != 1 || micros <= 0 {
		t.Errorf("spent: %d calls, %d µ$: an estimated call must be priced", calls, micros)
	}
}

// wavClaiming is a WAV header of 16 kHz mono PCM claiming dataBytes, with 1 KB of sound.
func wavClaiming(dataBytes uint32) []byte {
	h := audio.WrapPCM(make([]byte, 1024), audio.PCMFormat{Rate: 16000, Channels: 1, Bits: 16})
	binary.LittleEndian.PutUint32(h[40:], dataBytes)
	return h
}

// TestTranscribeHostile refuses, in words and before any backend hears it: a 10-hour header
// claim in a 1 KB file, a recording over the size or length limit, one cut short, a picture
// declared as audio; nothing is sent or charged.
func TestTranscribeHostile(t *testing.T) {
	t.Parallel()
	e, url := newEnv(t)
	tr, _ := geminiBackends(t, url)
	svc := e.service(tr, nil, voice.Limits{MaxBytes: 200 << 10})
	speech := audiotest.Read(t, audiotest.Speech(t, said))
	long := audiotest.Read(t, audiotest.Speech(t, strings.Repeat(said+" ", 12)))
	for name, c := range map[string]struct {
		data     []byte
		declared string
		code     steward.Code
		say      string
	}{
		"ten-hour claim": {wavClaiming(10 * 3600 * 32000), "audio/wav", steward.CodeTooLarge, "claims to be 10h0m0s long; the longest Steward takes is 10m0s"},
		"over the size":  {long, "audio/wav", steward.CodeTooLarge, "the largest Steward takes is 200 KB"},
		"cut short":      {speech[:len(speech)/3], "audio/wav", steward.CodeInvalid, "cut short"},
		"a picture":      {[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00"), "audio/wav", steward.CodeInvalid, `not a recording Steward reads: send WAV, Ogg (Opus or Vorbis), WebM (Opus), MP3 or M4A (it was sent as "audio/wav")`},
		"empty":          {nil, "", steward.CodeInvalid, "empty"},
	} {
		_, err := svc.Transcribe(context.Background(), e.owner.ID, c.data, c.declared)
		var se *steward.Error
		if !errors.As(err, &se) || se.Code != c.code || !strings.Contains(se.Message, c.say) {
			t.Errorf("%s: %v, want %s saying %q", name, err, c.code, c.say)
		}
	}
	over := voice.Limits{MaxDuration: voice.DefaultMaxDuration / 200} // 3 s
	if _, err := e.service(tr, nil, over).Transcribe(context.Background(), e.owner.ID, speech, ""); steward.ErrorCode(err) != steward.CodeTooLarge ||
		!strings.Contains(err.Error(), "the longest Steward takes is 3s") {
		t.Errorf("over the length: %v", err)
	}
	if rec := e.fake.Received(); len(rec) != 0 {
		t.Errorf("the backend heard %d refused recordings", len(rec))
	}
	if calls, _, _ := e.spent(t); calls != 0 {
		t.Errorf("%d refused calls charged", calls)
	}
}

// TestSpeakGemini: the fake Gemini answers 24 kHz PCM; Steward returns it as WAV that soxi
// reads as 24,000 Hz mono of the PCM's length; the default voice is asked for; Ogg is refused
// in words (Gemini makes none).
func TestSpeakGemini(t *testing.T) {
	t.Parallel()
	e, url := newEnv(t)
	_, sp := geminiBackends(t, url)
	svc := e.service(nil, sp, voice.Limits{})
	text := "Your plants are watered."
	got, err := svc.Speak(context.Background(), e.owner.ID, text, "", voice.FormatWAV)
	if err != nil {
		t.Fatal(err)
	}
	rate, channels, secs := audiotest.Soxi(t, got.Data, "wav")
	want := float64(len(voicefake.PCM(text, 24000))) / 2 / 24000
	if got.ContentType != audio.WAV || rate != 24000 || channels != 1 || math.Abs(secs-want) > 0.001 || got.DurationMS != int64(want*1000) {
		t.Errorf("speech: %s, %d Hz, %d channels, %.3fs (%d ms); want audio/wav, 24000 Hz mono, %.3fs", got.ContentType, rate, channels, secs, got.DurationMS, want)
	}
	if s := e.fake.Spoken(); len(s) != 1 || s[0].Text != text || s[0].Voice != gemini.DefaultVoice {
		t.Errorf("spoken %+v", s)
	}
	if _, err := svc.Speak(context.Background(), e.owner.ID, text, "", voice.FormatOgg); steward.ErrorCode(err) != steward.CodeInvalid ||
		!strings.Contains(err.Error(), "Ogg/Opus needs the OpenAI-compatible speech backend") {
		t.Errorf("ogg from Gemini: %v", err)
	}
	for name, c := range map[string]struct{ text, voice, format string }{
		"no text":      {"  ", "", ""},
		"bad voice":    {text, "../etc", ""},
		"bad format":   {text, "", "flac"},
		"invalid utf8": {"\xff\xfe", "", ""},
	} {
		if _, err := svc.Speak(context.Background(), e.owner.ID, c.text, c.voice, c.format); steward.ErrorCode(err) != steward.CodeInvalid {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	if _, err := svc.Speak(context.Background(), e.owner.ID, strings.Repeat("a", voice.DefaultMaxText+1), "", ""); steward.ErrorCode(err) != steward.CodeTooLarge {
		t.Errorf("long text: %v", err)
	}
	if calls, micros, _ := e.spent(t); calls != 1 || micros <= 0 {
		t.Errorf("spent: %d calls, %d µ$", calls, micros)
	}
}

// TestSpeakOpenAICompatible asks /audio/speech for WAV and for Ogg/Opus and gets each, read
// back as what it is.
func TestSpeakOpenAICompatible(t *testing.T) {
	t.Parallel()
	e, url := newEnv(t)
	sp, err := openai.NewSpeaker(openai.Config{BaseURL: url + "/v1", Model: "tts-test"})
	if err != nil {
		t.Fatal(err)
	}
	svc := e.service(nil, sp, voice.Limits{})
	wav, err := svc.Speak(context.Background(), e.owner.ID, "Done.", "nova", voice.FormatWAV)
	if err != nil || wav.ContentType != audio.WAV {
		t.Fatalf("wav: %s, %v", wav.ContentType, err)
	}
	if rate, _, _ := audiotest.Soxi(t, wav.Data, "wav"); rate != 24000 {
		t.Errorf("wav at %d Hz", rate)
	}
	ogg, err := svc.Speak(context.Background(), e.owner.ID, "Done.", "", voice.FormatOgg)
	if err != nil || ogg.ContentType != audio.Ogg || ogg.DurationMS != wav.DurationMS {
		t.Fatalf("ogg: %s %d ms (wav %d ms), %v", ogg.ContentType, ogg.DurationMS, wav.DurationMS, err)
	}
	if s := e.fake.Spoken(); len(s) != 2 || s[0].Voice != "nova" || s[0].Format != "wav" || s[1].Voice != openai.DefaultVoice || s[1].Format != "opus" {
		t.Errorf("spoken %+v", s)
	}
}

// TestVoiceBudget: voice calls count against the owner's daily cost like turns: once the day's
// budget is spent the next call is refused before the backend hears it; a kill switch refuses
// too; a backend not configured is "not configured".
func TestVoiceBudget(t *testing.T) {
	t.Parallel()
	e, url := newEnv(t)
	tr, sp := geminiBackends(t, url)
	svc := e.service(tr, sp, voice.Limits{})
	ctx := context.Background()
	if err := e.db.Door.SetDailyLimits(ctx, e.owner.ID, 500, 1); err != nil { // one millionth of a dollar
		t.Fatal(err)
	}
	speech := audiotest.Read(t, audiotest.Speech(t, said))
	if _, err := svc.Transcribe(ctx, e.owner.ID, speech, "audio/wav"); err != nil {
		t.Fatalf("first call: %v", err)
	}
	if _, err := svc.Transcribe(ctx, e.owner.ID, speech, "audio/wav"); steward.ErrorCode(err) != steward.CodeOverBudget {
		t.Errorf("over budget: %v", err)
	}
	if _, err := svc.Speak(ctx, e.owner.ID, "hi", "", ""); steward.ErrorCode(err) != steward.CodeOverBudget {
		t.Errorf("speak over budget: %v", err)
	}
	if n := len(e.fake.Received()); n != 1 {
		t.Errorf("the backend heard %d recordings, want 1", n)
	}
	if err := e.db.Door.SetDailyLimits(ctx, e.owner.ID, 500, 5_000_000); err != nil {
		t.Fatal(err)
	}
	if _, err := (&control.Service{Store: e.db.Store}).Stop(ctx, e.owner.ID, "lost my phone"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Transcribe(ctx, e.owner.ID, speech, "audio/wav"); steward.ErrorCode(err) != steward.CodeKilled {
		t.Errorf("stopped: %v", err)
	}
	off := e.service(nil, nil, voice.Limits{})
	if _, err := off.Transcribe(ctx, e.owner.ID, speech, ""); !errors.Is(err, voice.ErrNoTranscriber) || steward.ErrorCode(err) != steward.CodeNotFound {
		t.Errorf("no transcriber: %v", err)
	}
	if _, err := off.Speak(ctx, e.owner.ID, "hi", "", ""); !errors.Is(err, voice.ErrNoSpeaker) {
		t.Errorf("no speaker: %v", err)
	}
}

// TestUnpricedVoiceModelRefusesToStart: a speech or transcription model without a price stops
// the start, naming its variable, like any other model.
func TestUnpricedVoiceModelRefusesToStart(t *testing.T) {
	cfg := config.Config{GeminiAPIKey: "k", Model: config.DefaultModel, FastModel: config.DefaultFastModel, VoiceSpeechModel: "gemini-9-tts"}
	err := app.CheckPrices(cfg)
	if !errors.Is(err, app.ErrUnpriced) || !strings.Contains(err.Error(), "STEWARD_VOICE_SPEECH_MODEL=gemini-9-tts has no price") {
		t.Errorf("unpriced speech model: %v", err)
	}
	cfg.ModelPrices = map[string]config.ModelPrice{"gemini-9-tts": {Input: 0.5, Output: 10}}
	if err := app.CheckPrices(cfg); err != nil {
		t.Errorf("priced: %v", err)
	}
	cfg = config.Config{VoiceOpenAIBaseURL: "http://whisper.local/v1", VoiceTranscribeModel: "ggml-base.en"}
	if err := app.CheckPrices(cfg); !errors.Is(err, app.ErrUnpriced) || !strings.Contains(err.Error(), "STEWARD_VOICE_TRANSCRIBE_MODEL=ggml-base.en") {
		t.Errorf("unpriced whisper.cpp model: %v", err)
	}
}

// TestUnpricedAnswerModelIsChargedAtTheConfiguredPrice: Gemini answers naming a newer version
// of the configured model, which has no price of its own. The call is served and charged at
// the configured model's price (docs/CONFIGURATION.md), as chat does: neither free nor refused.
func TestUnpricedAnswerModelIsChargedAtTheConfiguredPrice(t *testing.T) {
	t.Parallel()
	e, url := newEnv(t)
	e.fake.ModelVersion = "gemini-tts-test-preview-0610"
	_, sp := geminiBackends(t, url)
	svc := e.service(nil, sp, voice.Limits{})
	if _, err := svc.Speak(context.Background(), e.owner.ID, "Your first meeting is at nine.", "", ""); err != nil {
		t.Fatalf("speak: %v", err)
	}
	if calls, micros, _ := e.spent(t); calls != 1 || micros <= 0 {
		t.Errorf("spent: %d calls, %d µ$: want the call charged at gemini-tts-test's price", calls, micros)
	}
}
