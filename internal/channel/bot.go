package channel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
)

// botAnswerLimit bounds a Bot API answer read (a getFile or sendMessage result is far
// smaller).
const botAnswerLimit = 1 << 20

// ErrTooLarge is a Bot API file larger than the caller's bound.
var ErrTooLarge = errors.New("the file is larger than allowed")

// BotCall calls a Telegram Bot API method with t's bot token and params as JSON, through the
// sender's egress guard and within its timeout, and decodes the answer's result into out
// (nil: the result is not read). A Bot API refusal ({"ok":false}) is an error with its
// description. The caller holds no transaction open (docs/ARCHITECTURE.md §19).
func (s *Sender) BotCall(ctx context.Context, t Target, method string, params, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return s.bot(ctx, t, method, "application/json", body, out)
}

// BotUpload calls a Bot API method that takes a file (sendVoice, sendDocument) as
// multipart/form-data: the fields, and data as the file field named field.
func (s *Sender) BotUpload(ctx context.Context, t Target, method string, fields map[string]string, field, filename, contentType string, data []byte, out any) error {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			return err
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, field, filename))
	h.Set("Content-Type", contentType)
	part, err := w.CreatePart(h)
	if err != nil {
		return err
	}
	if _, err := part.Write(data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return s.bot(ctx, t, method, w.FormDataContentType(), b.Bytes(), out)
}

// BotFile downloads a file the Bot API's getFile named (its file_path), at most max bytes
// (more is ErrTooLarge), through the guard and within the timeout.
func (s *Sender) BotFile(ctx context.Context, t Target, filePath string, max int64) ([]byte, error) {
	if t.Kind != Telegram {
		return nil, fmt.Errorf("channel %s is not a Telegram channel", t.Name)
	}
	if filePath == "" || strings.Contains(filePath, "..") || strings.ContainsAny(filePath, "?#\\") {
		return nil, fmt.Errorf("the Bot API named no usable file path")
	}
	s.init()
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL+"/file/bot"+t.Secrets.Token+"/"+filePath, nil)
	if err != nil {
		return nil, t.errorf("%v", err)
	}
	req.Header.Set("User-Agent", "Steward-Notify/1")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, t.errorf("%v", redactURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the Bot API answered %d for the file", resp.StatusCode)
	}
	if resp.ContentLength > max {
		return nil, ErrTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, t.errorf("%v", redactURL(err))
	}
	if int64(len(data)) > max {
		return nil, ErrTooLarge
	}
	return data, nil
}

// bot posts one Bot API request and reads its answer.
func (s *Sender) bot(ctx context.Context, t Target, method, contentType string, body []byte, out any) error {
	if t.Kind != Telegram {
		return fmt.Errorf("channel %s is not a Telegram channel", t.Name)
	}
	s.init()
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL+"/bot"+t.Secrets.Token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return t.errorf("%v", err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "Steward-Notify/1")
	resp, err := s.client.Do(req)
	if err != nil {
		return t.errorf("%v", redactURL(err))
	}
	defer resp.Body.Close()
	var answer struct {
		OK          bool            `json:"ok"`
		Result      json.RawMessage `json:"result"`
		Description string          `json:"description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, botAnswerLimit)).Decode(&answer); err != nil || (!answer.OK && resp.StatusCode < 300) {
		return fmt.Errorf("the Bot API answered %d to %s with no usable answer", resp.StatusCode, method)
	}
	if !answer.OK {
		return t.errorf("the Bot API refused %s (%d): %s", method, resp.StatusCode, cut(answer.Description, 200))
	}
	if out != nil {
		if err := json.Unmarshal(answer.Result, out); err != nil {
			return fmt.Errorf("the Bot API's answer to %s: %w", method, err)
		}
	}
	return nil
}

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + ellipsis
	}
	return s
}
