// Package gemini is the llm.Model adapter for Google Gemini, built on the
// google.golang.org/genai SDK with the Gemini API backend.
//
// Function calling is manual: tools are declared to the model and its calls come back to the
// caller, which runs them and sends the results in a later request. The adapter keeps what
// Gemini needs to continue a conversation across requests, and across a turn suspended to
// Postgres: a part's thought signature travels in steward.Part.ProviderMeta and is sent back
// byte-for-byte on the same part; a function call Gemini returned without an id gets a minted
// id (steward.ToolCall.MintedID) that is never sent back to Gemini.
//
// A call that is rate limited or finds the API unavailable is retried under package retry's
// bounded policy (internal/llm/retry), with this package's Retryable; a stream is retried only
// until its first chunk.
//
// The package is the one adapter of the Gemini SDK (docs/ARCHITECTURE.md §11): besides the
// chat model, it holds the embedder memory uses (Embedder) and web_search's grounded search
// (Searcher). No other package imports google.golang.org/genai.
package gemini

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/retry"
)

// DefaultModel is the Gemini model used when Config.Model is empty; Steward always sets it
// (config.DefaultModel, which has a price).
const DefaultModel = "gemini-3.8-flash"

// Config configures a Model.
type Config struct {
	// APIKey is the Gemini API key (GEMINI_API_KEY). Required.
	APIKey string
	// BaseURL overrides the API endpoint (a gateway, or a fake server in tests). Optional.
	BaseURL string
	// Model is the Gemini model name; DefaultModel when empty.
	Model string
	// HTTPClient sends the SDK's requests; a plain http.Client when nil. Its transport is
	// wrapped, not changed.
	HTTPClient *http.Client
	// Retry bounds the retries of a call that is rate limited or finds the API unavailable;
	// the zero value is retry's defaults. Its Retryable and Delay are always this package's.
	Retry retry.Policy
}

// Model is a Gemini chat model. It is safe for concurrent use.
type Model struct {
	client *genai.Client
	name   string
	retry  retry.Policy
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg. It makes no request.
func New(ctx context.Context, cfg Config) (*Model, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("gemini: API key is required")
	}
	name := cfg.Model
	if name == "" {
		name = DefaultModel
	}
	client, err := newClient(ctx, cfg.APIKey, cfg.BaseURL, retry.Client(cfg.HTTPClient))
	if err != nil {
		return nil, fmt.Errorf("gemini: create client: %w", err)
	}
	return &Model{client: client, name: name, retry: policy(cfg.Retry)}, nil
}

// newClient is the SDK's client of the Gemini API (never Vertex AI) with apiKey, over
// httpClient (nil: the SDK's default), at baseURL when set (tests, gateways). The chat model,
// the embedder and grounded search each build theirs with it.
func newClient(ctx context.Context, apiKey, baseURL string, httpClient *http.Client) (*genai.Client, error) {
	return genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      apiKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  httpClient,
		HTTPOptions: genai.HTTPOptions{BaseURL: baseURL},
	})
}

// Name returns the configured Gemini model name.
func (m *Model) Name() string { return m.name }

// Generate runs one generateContent call, or streamGenerateContent when onDelta is non-nil.
// An API or transport error is returned wrapped; a blocked prompt or answer is not an error but
// a Response with Finish llm.FinishBlocked.
func (m *Model) Generate(ctx context.Context, req llm.Request, onDelta llm.DeltaFunc) (llm.Response, error) {
	contents, err := m.contents(req.Messages)
	if err != nil {
		return llm.Response{}, err
	}
	config, err := toConfig(req, m.name)
	if err != nil {
		return llm.Response{}, fmt.Errorf("gemini: %w", err)
	}
	if onDelta != nil {
		return m.stream(ctx, contents, config, onDelta)
	}
	var resp *genai.GenerateContentResponse
	if err := m.retry.Do(ctx, func(ctx context.Context) error {
		var err error
		resp, err = m.client.Models.GenerateContent(ctx, m.name, contents, config)
		return err
	}); err != nil {
		return llm.Response{}, m.unavailable(fmt.Errorf("gemini: generate content: %w", err))
	}
	return m.toResponse(resultOf(resp))
}

// unavailable marks an error that retry would have retried (rate limited, 5xx) as
// llm.Unavailable once the retries are spent, so that a fallback chain may move on.
func (m *Model) unavailable(err error) error {
	if m.retry.Retries(err) {
		return llm.Unavailable(err)
	}
	return err
}
