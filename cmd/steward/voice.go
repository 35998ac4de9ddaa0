package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/steward"
)

const speakUsage = `Usage:
  steward speak [--url URL] [--key KEY] [--voice NAME] [--format wav|ogg] TEXT > out.wav

Read TEXT aloud with the server's speech model (POST /v1/voice/speak) and write the audio to
standard output: WAV (16-bit PCM) by default, or Ogg/Opus with --format ogg where the server's
speech backend makes it (docs/VOICE.md). It refuses to write audio to a terminal.
`

// runSpeak is steward speak.
func runSpeak(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("speak", flag.ContinueOnError)
	url := fs.String("url", cfg.ServerURL, "server URL")
	key := fs.String("key", cfg.APIKey, "API key")
	voice := fs.String("voice", "", "the backend's voice name")
	format := fs.String("format", "wav", "wav or ogg")
	pos, err := parseFlags(fs, args, speakUsage, 1, 1)
	if err != nil {
		return err
	}
	if *key == "" {
		return errors.New("speak: no API key: set STEWARD_API_KEY or pass --key (steward owners add prints one)")
	}
	if f, ok := e.stdout.(*os.File); ok && isTerminal(f) {
		return usageError{msg: "speak writes audio: redirect it to a file (steward speak TEXT > out.wav)", usage: speakUsage}
	}
	body, _ := json.Marshal(map[string]string{"text": pos[0], "voice": *voice, "format": *format})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(*url, "/")+"/v1/voice/speak", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+*key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 3 * time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", *url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return apiFailure(resp)
	}
	n, err := io.Copy(e.stdout, resp.Body)
	if err != nil {
		return fmt.Errorf("writing the audio: %w", err)
	}
	fmt.Fprintf(e.stderr, "%s, %d bytes, %s ms\n", resp.Header.Get("Content-Type"), n, resp.Header.Get("X-Steward-Duration-Ms"))
	return nil
}

// isTerminal reports whether f is a character device (a terminal), not a file or a pipe.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// voiceTurn sends the recording at path as the first message (POST /v1/chat, multipart): the
// server transcribes it and the transcript is the owner's message, printed as "heard: …";
// the turn then goes on as a typed one does, approvals and all.
func (c *chatClient) voiceTurn(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("chat --voice: %w", err)
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if c.conversation != nil {
		_ = w.WriteField("conversation_id", c.conversation.String())
	}
	part, err := w.CreateFormFile("audio", filepath.Base(path))
	if err != nil {
		return err
	}
	_, _ = part.Write(data)
	_ = w.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/chat", &b)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return apiFailure(resp)
	}
	var v struct {
		steward.View
		Transcript *struct{ Text string } `json:"transcript"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if v.Transcript != nil {
		fmt.Fprintf(c.prompt, "heard: %s\n", v.Transcript.Text)
	}
	if !c.json && v.Status == steward.StatusCompleted {
		fmt.Fprint(c.out, v.Answer)
	}
	return c.follow(ctx, v.View, nil)
}
