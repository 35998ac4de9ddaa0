package httpapi_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/audio"
	"github.com/stewardhq/steward/internal/audio/audiotest"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/voice/voicefake"
)

const heardText = "What is on my list for today?"

// voiceEnv is production's graph with voice through an OpenAI-compatible server (the fake,
// behind go-openai): whisper-1 transcribes (its list price), tts-test speaks (priced here).
func voiceEnv(t *testing.T, vars map[string]string, steps ...scripted.Step) (*env, *voicefake.Server) {
	t.Helper()
	fake := voicefake.New(heardText)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	config := map[string]string{"STEWARD_VOICE_OPENAI_BASE_URL": srv.URL + "/v1", "STEWARD_VOICE_SPEECH_MODEL": "tts-test",
		"STEWARD_MODEL_PRICES": "tts-test=1:12", "STEWARD_EGRESS_ALLOW": strings.TrimPrefix(srv.URL, "http://")}
	for k, v := range vars {
		config[k] = v
	}
	return newEnvConfigured(t, nil, config, steps...), fake
}

// form is a multipart body: the recording as the field "audio" (declared as declared) and
// the other fields.
func form(t *testing.T, recording []byte, declared string, fields map[string]string) (string, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if recording != nil {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="audio"; filename="note"`)
		h.Set("Content-Type", declared)
		p, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = p.Write(recording)
	}
	_ = w.Close()
	return b.String(), w.FormDataContentType()
}

// TestVoiceTranscribeRoute: a recording as the raw body or a multipart field comes back as
// its transcript; what is not a whole recording, or too long, or too large, is a 4xx in words
// and reaches no backend.
func TestVoiceTranscribeRoute(t *testing.T) {
	t.Parallel()
	e, fake := voiceEnv(t, map[string]string{"STEWARD_VOICE_MAX_BYTES": "300000"})
	speech := audiotest.Speech(t, heardText)
	wav := audiotest.Read(t, speech)
	resp := e.do(request{method: "POST", path: "/v1/voice/transcribe", key: e.key, body: string(wav), header: map[string]string{"Content-Type": "audio/wav"}})
	var got struct {
		Text, Language string
		DurationMS     int64 `json:"duration_ms"`
	}
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &got) != nil || got.Text != heardText || got.Language != "en" {
		t.Fatalf("raw WAV: %d %s", resp.status, resp.body)
	}
	if _, _, secs := audiotest.Soxi(t, wav, "wav"); math.Abs(float64(got.DurationMS)/1000-secs) > 0.06 {
		t.Errorf("duration_ms %d, soxi says %.3fs", got.DurationMS, secs)
	}
	ogg := audiotest.Read(t, audiotest.Convert(t, speech, "ogg"))
	body, ct := form(t, ogg, "audio/wav", nil) // declared wrongly: the bytes decide
	resp = e.do(request{method: "POST", path: "/v1/voice/transcribe", key: e.key, body: body, header: map[string]string{"Content-Type": ct}})
	if resp.status != http.StatusOK || !strings.Contains(string(resp.body), heardText) {
		t.Fatalf("multipart Ogg: %d %s", resp.status, resp.body)
	}
	if rec := fake.Received(); len(rec) != 2 || rec[1].DeclaredType != audio.Ogg || rec[1].Size != len(ogg) {
		t.Errorf("the server received %+v", rec)
	}

	tenHours := audio.WrapPCM(make([]byte, 1024), audio.PCMFormat{Rate: 16000, Channels: 1, Bits: 16})
	binary.LittleEndian.PutUint32(tenHours[40:], 10*3600*32000)
	long := audiotest.Read(t, audiotest.Speech(t, strings.Repeat(heardText+" ", 10)))
	for name, c := range map[string]struct {
		body, ct string
		status   int
		code     steward.Code
		say      string
	}{
		"ten-hour claim": {string(tenHours), "audio/wav", 413, steward.CodeTooLarge, "claims to be 10h0m0s long"},
		"cut short":      {string(wav[:len(wav)/2]), "audio/wav", 422, steward.CodeInvalid, "cut short"},
		"a picture":      {"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "audio/wav", 422, steward.CodeInvalid, `not a recording Steward reads`},
		"over the size":  {string(long), "audio/wav", 413, steward.CodeTooLarge, "the largest Steward takes is 293 KB"},
		"empty":          {"", "audio/wav", 422, steward.CodeInvalid, "empty"},
	} {
		resp := e.do(request{method: "POST", path: "/v1/voice/transcribe", key: e.key, body: c.body, header: map[string]string{"Content-Type": c.ct}})
		if er := errorOf(t, resp, c.status, string(c.code)); !strings.Contains(er.Error.Message, c.say) {
			t.Errorf("%s: %q, want it to say %q", name, er.Error.Message, c.say)
		}
	}
	if n := len(fake.Received()); n != 2 {
		t.Errorf("the backend heard %d recordings, want 2", n)
	}
	errorOf(t, e.do(request{method: "POST", path: "/v1/voice/transcribe", body: string(wav)}), 401, "unauthorized")
}

// TestVoiceSpeakRoute: text comes back as WAV (read by soxi) or, asked for, Ogg/Opus; bad
// requests are 400 in words.
func TestVoiceSpeakRoute(t *testing.T) {
	t.Parallel()
	e, fake := voiceEnv(t, nil)
	resp := e.do(request{method: "POST", path: "/v1/voice/speak", key: e.key, body: `{"text":"Your list has two things.","voice":"nova"}`})
	if resp.status != http.StatusOK || resp.header.Get("Content-Type") != audio.WAV || resp.header.Get("X-Steward-Duration-Ms") == "" {
		t.Fatalf("speak: %d %v %.200s", resp.status, resp.header, resp.body)
	}
	if rate, channels, secs := audiotest.Soxi(t, resp.body, "wav"); rate != 24000 || channels != 1 || secs < 1 {
		t.Errorf("soxi: %d Hz, %d channels, %.2fs", rate, channels, secs)
	}
	resp = e.do(request{method: "POST", path: "/v1/voice/speak", key: e.key, body: `{"text":"Done."}`, header: map[string]string{"Accept": "audio/ogg"}})
	if resp.status != http.StatusOK || resp.header.Get("Content-Type") != audio.Ogg || !bytes.HasPrefix(resp.body, []byte("OggS")) {
		t.Fatalf("ogg: %d %v", resp.status, resp.header)
	}
	if s := fake.Spoken(); len(s) != 2 || s[0].Voice != "nova" || s[1].Format != "opus" {
		t.Errorf("spoken %+v", s)
	}
	for _, body := range []string{`{"text":"  "}`, `{"text":"hi","format":"flac"}`, `{"text":"hi","voice":"a b"}`} {
		errorOf(t, e.do(request{method: "POST", path: "/v1/voice/speak", key: e.key, body: body}), 422, "invalid")
	}
	errorOf(t, e.do(request{method: "POST", path: "/v1/voice/speak", key: e.key, body: `{"text":"hi"}`, header: map[string]string{"Content-Type": "text/plain"}}), 415, "invalid")
}

// chatAnswer is POST /v1/chat's answer to a voice message.
type chatAnswer struct {
	steward.View
	Transcript *struct {
		Text       string `json:"text"`
		DurationMS int64  `json:"duration_ms"`
	} `json:"transcript"`
	Speech *struct {
		ContentType string `json:"content_type"`
		DurationMS  int64  `json:"duration_ms"`
		Data        []byte `json:"data"`
	} `json:"speech"`
	SpeechError string `json:"speech_error"`
}

// TestVoiceChat: a recording posted to /v1/chat is transcribed and its transcript is the
// owner's message — the model is sent it, the conversation shows it — and speak: true brings
// the answer back as audio too.
func TestVoiceChat(t *testing.T) {
	t.Parallel()
	const answer = "Two things: water the plants and call Sam."
	e, fake := voiceEnv(t, nil, scripted.Reply(scripted.Text(answer)), scripted.Reply(scripted.Text(answer)), scripted.Reply(scripted.Text(answer)))
	wav := audiotest.Read(t, audiotest.Speech(t, heardText))
	body, ct := form(t, wav, "audio/wav", map[string]string{"speak": "true"})
	resp := e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: body, header: map[string]string{"Content-Type": ct}})
	var got chatAnswer
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &got) != nil {
		t.Fatalf("voice chat: %d %.300s", resp.status, resp.body)
	}
	if got.Status != steward.StatusCompleted || got.Answer != answer || got.Transcript == nil || got.Transcript.Text != heardText {
		t.Fatalf("voice chat: %+v", got)
	}
	if got.Speech == nil || got.Speech.ContentType != audio.WAV || got.SpeechError != "" {
		t.Fatalf("speech: %+v %q", got.Speech, got.SpeechError)
	}
	if rate, _, secs := audiotest.Soxi(t, got.Speech.Data, "wav"); rate != 24000 || math.Abs(secs*1000-float64(got.Speech.DurationMS)) > 1 {
		t.Errorf("the spoken answer: %d Hz, %.3fs (%d ms said)", rate, secs, got.Speech.DurationMS)
	}
	if s := fake.Spoken(); len(s) != 1 || s[0].Text != answer {
		t.Errorf("spoken %+v", s)
	}
	reqs := e.model.Requests()
	if len(reqs) == 0 || !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Parts[0].Text, heardText) {
		t.Errorf("the model was not sent the transcript: %+v", reqs)
	}
	conv := e.do(request{method: "GET", path: "/v1/conversations/" + got.ConversationID.String(), key: e.key})
	if conv.status != http.StatusOK || !strings.Contains(string(conv.body), `"`+heardText+`"`) {
		t.Errorf("the conversation does not show the transcript as the owner's message: %s", conv.body)
	}

	// A text message with speak, JSON: no transcript, the answer spoken.
	resp = e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"again?","speak":true,"format":"ogg"}`})
	got = chatAnswer{}
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &got) != nil || got.Transcript != nil || got.Speech == nil || got.Speech.ContentType != audio.Ogg {
		t.Fatalf("text with speak: %d %.300s", resp.status, resp.body)
	}

	// A recording uploaded as a document is a document of its transcript; its id is a voice
	// message. A document that is not a recording is refused in words.
	up := e.do(request{method: "POST", path: "/v1/documents?name=note.wav", key: e.key, body: string(wav), header: map[string]string{"Content-Type": "audio/wav"}})
	var doc struct {
		Document struct {
			ID          string `json:"id"`
			ContentType string `json:"content_type"`
			TextChars   int    `json:"text_chars"`
		} `json:"document"`
	}
	if up.status != http.StatusCreated || json.Unmarshal(up.body, &doc) != nil || doc.Document.ContentType != audio.WAV || doc.Document.TextChars != len(heardText) {
		t.Fatalf("upload a recording: %d %s", up.status, up.body)
	}
	resp = e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"audio_document_id":"` + doc.Document.ID + `"}`})
	got = chatAnswer{}
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &got) != nil || got.Transcript == nil || got.Transcript.Text != heardText || got.Speech != nil {
		t.Fatalf("audio_document_id: %d %.300s", resp.status, resp.body)
	}
	up = e.do(request{method: "POST", path: "/v1/documents?name=list.txt", key: e.key, body: "milk, eggs", header: map[string]string{"Content-Type": "text/plain"}})
	if up.status != http.StatusCreated || json.Unmarshal(up.body, &doc) != nil {
		t.Fatalf("upload text: %d %s", up.status, up.body)
	}
	errorOf(t, e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"audio_document_id":"` + doc.Document.ID + `"}`}), 422, "invalid")

	// Refused before any turn: a message and a recording, speak with a stream, a recording
	// that is not one, an unknown audio document.
	before := len(e.model.Requests())
	body, ct = form(t, wav, "audio/wav", map[string]string{"message": "and this"})
	errorOf(t, e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: body, header: map[string]string{"Content-Type": ct}}), 400, "invalid")
	errorOf(t, e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"message":"hi","speak":true}`, header: map[string]string{"Accept": "text/event-stream"}}), 400, "invalid")
	body, ct = form(t, []byte("not audio at all"), "audio/webm", nil)
	errorOf(t, e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: body, header: map[string]string{"Content-Type": ct}}), 422, "invalid")
	errorOf(t, e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: `{"audio_document_id":"` + got.TurnID.String() + `"}`}), 404, "not_found")
	errorOf(t, e.do(request{method: "POST", path: "/v1/chat", key: e.key, body: "hi", header: map[string]string{"Content-Type": "text/plain"}}), 415, "invalid")
	if n := len(e.model.Requests()); n != before {
		t.Errorf("refused voice chats reached the model (%d calls)", n-before)
	}
}
