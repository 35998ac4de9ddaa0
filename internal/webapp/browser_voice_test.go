package webapp_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/audio"
	"github.com/stewardhq/steward/internal/audio/audiotest"
	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/voice/voicefake"
)

const spoken = "Add milk to my shopping list"

// voiceServer is production's graph with voice through the fake OpenAI-compatible server.
func voiceServer(t *testing.T) (*httptest.Server, string, *voicefake.Server) {
	t.Helper()
	fake := voicefake.New(spoken)
	fs := httptest.NewServer(fake)
	t.Cleanup(fs.Close)
	e := apptest.New(t, apptest.Options{Model: demo.New(), Env: map[string]string{
		"STEWARD_VOICE_OPENAI_BASE_URL": fs.URL + "/v1", "STEWARD_VOICE_SPEECH_MODEL": "tts-test",
		"STEWARD_MODEL_PRICES": "tts-test=1:12"}})
	_, key := e.DB.Owner(t, "alice")
	return e.Server, key, fake
}

// TestBrowserVoice records with Chromium's fake microphone playing espeak-ng speech, at phone
// width: Record, Stop recording, and the transcript of what MediaRecorder made (WebM, sniffed
// and measured by Steward before the fake server checks it again) appears in the composer to
// edit and send; the answer gets a Play button that reads it aloud.
func TestBrowserVoice(t *testing.T) {
	t.Parallel()
	srv, key, fake := voiceServer(t)
	wav := audiotest.Speech(t, spoken+". And eggs, please.")
	ctx := browsertest.StartWith(t, 390, 844, 120*time.Second,
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-audio-capture", wav),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"))
	var box, note, micLabel string
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), signIn(srv.URL, key),
		chromedp.WaitVisible(chromedp.CSS(`#mic`)),
		chromedp.Click(chromedp.CSS(`#mic`)),
		chromedp.WaitVisible(chromedp.CSS(`#mic.recording`)),
		browsertest.Into(&micLabel, chromedp.Text(chromedp.CSS(`#mic`))),
		chromedp.Sleep(2500*time.Millisecond),
		chromedp.Click(chromedp.CSS(`#mic`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("textarea[name=message]").value !== ""`, chromedp.WithPollingTimeout(20*time.Second)),
		browsertest.Into(&box, chromedp.Value(chromedp.CSS(`textarea[name=message]`))),
		browsertest.Into(&note, chromedp.Text(chromedp.CSS(`#voice-note`))),
	); err != nil {
		t.Fatal(err)
	}
	if micLabel != "Stop recording" || box != spoken || !strings.Contains(note, "check the text, then send it") {
		t.Fatalf("while recording the button said %q; then the box holds %q, the note says %q", micLabel, box, note)
	}
	rec := fake.Received()
	if len(rec) != 1 || rec[0].SniffedType != audio.WebM || rec[0].Size < 1000 || rec[0].Duration < 2*time.Second || rec[0].Duration > 4*time.Second {
		t.Fatalf("the transcription server received %+v, want about 2.5 s of WebM", rec)
	}
	browsertest.Shot(t, ctx, "voice-phone.png")

	// The owner edits the transcript and sends it; the answer can be read aloud.
	var sent, playLabel string
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`textarea[name=message]`), " and eggs"),
		chromedp.Click(chromedp.Search(`//button[text()="Send"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#log .msg.assistant + button[data-play]`)),
		browsertest.Into(&sent, chromedp.Text(chromedp.CSS(`#log .msg.user`))),
		chromedp.Click(chromedp.CSS(`#log button[data-play]`)),
		chromedp.Poll[chromedp.Void](`(document.querySelector("#log button[data-play]").textContent === "Stop reading") || !document.getElementById("voice-note").hidden && document.getElementById("voice-note").textContent.indexOf("aloud") >= 0`, chromedp.WithPollingTimeout(20*time.Second)),
		browsertest.Into(&playLabel, chromedp.Text(chromedp.CSS(`#log button[data-play]`))),
		browsertest.Into(&note, chromedp.Text(chromedp.CSS(`#voice-note`))),
	); err != nil {
		t.Fatal(err)
	}
	if sent != spoken+" and eggs" {
		t.Errorf("the owner's message reads %q", sent)
	}
	if s := fake.Spoken(); len(s) != 1 || s[0].Text == "" || playLabel != "Stop reading" {
		t.Errorf("Play: spoken %+v, the button says %q, the note %q", s, playLabel, note)
	}
}

// TestBrowserVoiceRefused: without the microphone's permission, Record says in words what to
// do, and nothing is sent.
func TestBrowserVoiceRefused(t *testing.T) {
	t.Parallel()
	srv, key, fake := voiceServer(t)
	ctx := browsertest.StartWith(t, 390, 844, 60*time.Second,
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("deny-permission-prompts", true))
	var note string
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), signIn(srv.URL, key),
		chromedp.WaitVisible(chromedp.CSS(`#mic`)),
		chromedp.Click(chromedp.CSS(`#mic`)),
		chromedp.WaitVisible(chromedp.CSS(`#voice-note`)),
		browsertest.Into(&note, chromedp.Text(chromedp.CSS(`#voice-note`))),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "may not use the microphone") {
		t.Errorf("the note says %q", note)
	}
	if n := len(fake.Received()); n != 0 {
		t.Errorf("%d recordings sent", n)
	}
}
