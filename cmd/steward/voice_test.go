package main

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/audio/audiotest"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/voice/voicefake"
)

// voiceServer is production's graph with voice through the fake OpenAI-compatible server.
func voiceServer(t *testing.T, transcript string, steps ...scripted.Step) (config.Config, *voicefake.Server) {
	t.Helper()
	fake := voicefake.New(transcript)
	fs := httptest.NewServer(fake)
	t.Cleanup(fs.Close)
	app := apptest.New(t, apptest.Options{Model: scripted.New(steps...), MaxConns: 5, Env: map[string]string{
		"STEWARD_VOICE_OPENAI_BASE_URL": fs.URL + "/v1", "STEWARD_VOICE_SPEECH_MODEL": "tts-test",
		"STEWARD_MODEL_PRICES": "tts-test=1:12"}})
	_, key := app.DB.Owner(t, "alice")
	return config.Config{ServerURL: app.Server.URL, APIKey: key}, fake
}

// TestChatVoice: steward chat --voice FILE sends espeak-ng speech; the transcript is printed
// as heard and is the message, and the write it leads to is approved inline like a typed
// one's. A file that is not a recording is refused in words.
func TestChatVoice(t *testing.T) {
	t.Parallel()
	cfg, fake := voiceServer(t, "Remind me to buy milk.",
		scripted.Reply(scripted.Calls(scripted.Call("w1", "create_task", `{"title":"buy milk"}`))),
		scripted.Reply(scripted.Text("Added it to your list.")))
	wav := audiotest.Speech(t, "Remind me to buy milk.")
	out, prompts, code := chat(t, cfg, "y\n", "--voice", wav)
	if code != 0 || !strings.Contains(prompts, "heard: Remind me to buy milk.") || !strings.Contains(prompts, `create_task {"title":"buy milk"}`) ||
		!strings.Contains(out, "Added it to your list.") {
		t.Fatalf("exit %d\nout: %s\nprompts: %s", code, out, prompts)
	}
	if rec := fake.Received(); len(rec) != 1 || rec[0].SniffedType != "audio/wav" {
		t.Errorf("received %+v", rec)
	}
	notAudio := filepath.Join(t.TempDir(), "note.wav")
	if err := os.WriteFile(notAudio, []byte("just text, named .wav"), 0o600); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	code = exitCode(runChat(context.Background(), env{stdout: io.Discard, stderr: io.Discard, stdin: strings.NewReader("")}, cfg, []string{"--voice", notAudio}), &b)
	if code != 1 || !strings.Contains(b.String(), "not a recording Steward reads") {
		t.Errorf("a text file: exit %d, %q", code, b.String())
	}
}

// TestSpeak: steward speak TEXT writes WAV to stdout that soxi reads (24 kHz mono).
func TestSpeak(t *testing.T) {
	t.Parallel()
	cfg, fake := voiceServer(t, "")
	var out, errOut bytes.Buffer
	if err := runSpeak(context.Background(), env{stdout: &out, stderr: &errOut}, cfg, []string{"Good morning."}); err != nil {
		t.Fatalf("speak: %v (%s)", err, errOut.String())
	}
	if rate, channels, secs := audiotest.Soxi(t, out.Bytes(), "wav"); rate != 24000 || channels != 1 || secs <= 0 {
		t.Errorf("soxi: %d Hz, %d channels, %.2fs", rate, channels, secs)
	}
	if s := fake.Spoken(); len(s) != 1 || s[0].Text != "Good morning." {
		t.Errorf("spoken %+v", s)
	}
	var b bytes.Buffer
	code := exitCode(runSpeak(context.Background(), env{stdout: io.Discard, stderr: io.Discard}, cfg, []string{"--format", "flac", "hi"}), &b)
	if code == 0 || !strings.Contains(b.String(), "format must be") {
		t.Errorf("flac: exit %d, %q", code, b.String())
	}
}
