// Package openai is the llm.Model adapter for OpenAI-compatible chat completions
// (POST {base}/chat/completions), built on github.com/sashabaranov/go-openai: a small client for
// that wire format with no dependency outside the standard library (the official SDK,
// github.com/openai/openai-go, added 16 MB to every Lambda bootstrap; docs/DEPENDENCIES.md).
// Any server speaking that API works through BaseURL: OpenAI, OpenRouter, a local Ollama or
// vLLM.
//
// Tool calls map both ways: an assistant message's tool_calls (with their ids) are
// steward.ToolCall parts, and each steward.ToolResult is sent as a role "tool" message with
// its tool_call_id. Provider metadata (steward.Part.ProviderMeta — Gemini's thought
// signatures) and model thoughts are never sent: chat completions has no place for them, and
// only the model that made them may be sent them (docs/ARCHITECTURE.md §2).
//
// The client makes one attempt per call (it has no retries of its own): a call that is rate
// limited or finds the server failing is retried under the bounded policy of package retry,
// which honours Retry-After; once spent, the error is llm.Unavailable so that a chain
// (internal/llm/chain) can move on. The client reads no environment variable: every setting
// is passed explicitly (internal/config is the only reader of the environment).
package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/retry"
)

// DefaultBaseURL is OpenAI's API endpoint, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Config configures a Model.
type Config struct {
	// APIKey is sent as a bearer token (OPENAI_API_KEY). Required for OpenAI itself; a local
	// server (Ollama, vLLM) may take none.
	APIKey string
	// BaseURL is the API endpoint, e.g. https://openrouter.ai/api/v1 or
	// http://localhost:11434/v1 (OPENAI_BASE_URL); DefaultBaseURL when empty.
	BaseURL string
	// Model is the model name the server knows, e.g. "gpt-5-mini". Required.
	Model string
	// HTTPClient sends the requests; a plain http.Client when nil. Its transport is wrapped,
	// not changed.
	HTTPClient *http.Client
	// Retry bounds the retries of a call that is rate limited or finds the server failing;
	// the zero value is retry's defaults. Its Retryable is always this package's.
	Retry retry.Policy
}

// Model is an OpenAI-compatible chat model. It is safe for concurrent use.
type Model struct {
	chat  *openai.Client
	name  string
	retry retry.Policy
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg. It makes no request.
func New(cfg Config) (*Model, error) {
	client, p, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Model{chat: client, name: cfg.Model, retry: p}, nil
}

// newClient is the SDK's client for cfg and the retry policy of its calls: the chat model
// and the audio endpoints (audio.go) each build theirs with it.
func newClient(cfg Config) (*openai.Client, retry.Policy, error) {
	if cfg.Model == "" {
		return nil, retry.Policy{}, errors.New("openai: model is required")
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, retry.Policy{}, fmt.Errorf("openai: base URL %q must start with http:// or https://", base)
	}
	// An empty key sends no Authorization header.
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = base // the client joins it to "/chat/completions" without its trailing slash
	oc.HTTPClient = retry.Client(cfg.HTTPClient)
	p := cfg.Retry
	p.Retryable = Retryable
	return openai.NewClientWithConfig(oc), p, nil
}

// Name returns the configured model name.
func (m *Model) Name() string { return m.name }

// Generate runs one chat completion. When onDelta is non-nil the answer text is handed to it
// once, whole, when the call ends (the call itself is not streamed). An API or transport error
// is returned wrapped; a refusal or a filtered answer is a Response, not an error.
//
// The Response names the configured model, not the dated snapshot the server reports (e.g.
// "gpt-5-mini-2025-08-07"): prices are kept by the configured name.
func (m *Model) Generate(ctx context.Context, req llm.Request, onDelta llm.DeltaFunc) (llm.Response, error) {
	params, err := toParams(req, m.name)
	if err != nil {
		return llm.Response{}, fmt.Errorf("openai: %w", err)
	}
	var out openai.ChatCompletionResponse
	err = m.retry.Do(ctx, func(ctx context.Context) error {
		var err error
		out, err = m.chat.CreateChatCompletion(ctx, params)
		return err
	})
	if err != nil {
		err = fmt.Errorf("openai: chat completion: %w", err)
		if _, ok := Retryable(err); ok {
			err = llm.Unavailable(err)
		}
		return llm.Response{}, err
	}
	resp, err := toResponse(&out, m.name)
	if err != nil {
		return llm.Response{}, fmt.Errorf("openai: %w", err)
	}
	if onDelta != nil {
		if text := resp.Text(); text != "" {
			if err := onDelta(text); err != nil {
				return resp, fmt.Errorf("openai: delta: %w", err)
			}
		}
	}
	return resp, nil
}

// Retryable reports whether err is worth another attempt, with its HTTP status: rate limited
// (429), the server failing or unavailable (500, 502, 503, 504), or the server unreachable (a
// network error, status 0).
func Retryable(err error) (int, bool) {
	// An error answer is an *openai.APIError when its body is OpenAI's {"error": {...}}, and an
	// *openai.RequestError otherwise (say, a proxy's HTML 502 page).
	status := 0
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &reqErr): // first: it may wrap an *APIError that has no status
		status = reqErr.HTTPStatusCode
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
	}
	if status != 0 {
		switch status {
		case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return status, true
		}
		return status, false
	}
	return 0, llm.IsUnreachable(err)
}
