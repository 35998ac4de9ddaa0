package memory

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/llm/retry"
)

// GeminiModel is the Gemini embedding model used when GeminiConfig.Model is empty.
const GeminiModel = "gemini-embedding-001"

// GeminiBatchSize is the most texts one batchEmbedContents request may carry.
const GeminiBatchSize = 100

// GeminiConfig configures a Gemini embedder.
type GeminiConfig struct {
	// APIKey is the Gemini API key (GEMINI_API_KEY). Required.
	APIKey string
	// BaseURL overrides the API endpoint (a gateway, or a fake server in tests).
	BaseURL string
	// Model is the embedding model; GeminiModel when empty.
	Model string
	// HTTPClient sends the requests; a plain http.Client when nil. Its transport is wrapped,
	// not changed.
	HTTPClient *http.Client
	// BatchSize caps the texts per request: GeminiBatchSize when 0 or larger.
	BatchSize int
	// MaxAttempts caps the requests per batch when the API is rate limited or unavailable
	// (429, 500, 502, 503, 504); 5 when 0.
	MaxAttempts int
	// Backoff is the wait before the first retry when the server names none (1 s when 0);
	// it doubles on each retry, with jitter, up to MaxBackoff (30 s when 0). A wait the
	// server names (Retry-After, or RetryInfo in the error) is honoured as is, unless it is
	// longer than MaxBackoff or the context's deadline: then Embed gives up at once and the
	// caller's own retry schedule takes over. The policy is package retry's, shared with the
	// chat model.
	Backoff, MaxBackoff time.Duration
}

// Gemini embeds texts with a Gemini embedding model through google.golang.org/genai
// (batchEmbedContents), at Dimension output dimensions, L2-normalised (Gemini normalises
// only its full-size vectors). It is safe for concurrent use.
type Gemini struct {
	client *genai.Client
	model  string
	batch  int
	retry  retry.Policy
}

var _ Embedder = (*Gemini)(nil)

// NewGemini returns a Gemini embedder for cfg. It makes no request.
func NewGemini(ctx context.Context, cfg GeminiConfig) (*Gemini, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("gemini embedder: API key is required")
	}
	g := &Gemini{model: cfg.Model, batch: cfg.BatchSize,
		retry: retry.Policy{Attempts: cfg.MaxAttempts, Backoff: cfg.Backoff, MaxWait: cfg.MaxBackoff}}
	if g.model == "" {
		g.model = GeminiModel
	}
	if g.batch <= 0 || g.batch > GeminiBatchSize {
		g.batch = GeminiBatchSize
	}
	if g.retry.Attempts <= 0 {
		g.retry.Attempts = 5
	}
	if g.retry.MaxWait <= 0 {
		g.retry.MaxWait = 30 * time.Second
	}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  retry.Client(cfg.HTTPClient),
		HTTPOptions: genai.HTTPOptions{BaseURL: cfg.BaseURL},
	})
	if err != nil {
		return nil, fmt.Errorf("gemini embedder: create client: %w", err)
	}
	g.client = client
	return g, nil
}

// Name returns the embedding model's name.
func (g *Gemini) Name() string { return g.model }

// Dimension returns Dimension.
func (g *Gemini) Dimension() int { return Dimension }

// Embed embeds texts in batches of at most BatchSize, in order.
func (g *Gemini) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("gemini embed text %d: %w", i, ErrEmptyText)
		}
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += g.batch {
		vs, err := g.embedBatch(ctx, texts[start:min(start+g.batch, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// embedBatch sends one batchEmbedContents request, retried when rate limited or unavailable.
func (g *Gemini) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	contents := make([]*genai.Content, len(texts))
	for i, t := range texts {
		contents[i] = genai.NewContentFromText(t, genai.RoleUser)
	}
	dim := int32(Dimension)
	config := &genai.EmbedContentConfig{OutputDimensionality: &dim}
	var resp *genai.EmbedContentResponse
	err := g.retry.Do(ctx, func(ctx context.Context) error {
		var err error
		resp, err = g.client.Models.EmbedContent(ctx, g.model, contents, config)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gemini embed: %w", err)
	}
	return vectorsOf(resp, len(texts))
}

// vectorsOf checks and normalises the response's embeddings.
func vectorsOf(resp *genai.EmbedContentResponse, n int) ([][]float32, error) {
	if resp == nil || len(resp.Embeddings) != n {
		got := 0
		if resp != nil {
			got = len(resp.Embeddings)
		}
		return nil, fmt.Errorf("gemini embed: %d embeddings for %d texts", got, n)
	}
	out := make([][]float32, n)
	for i, e := range resp.Embeddings {
		if e == nil || len(e.Values) != Dimension {
			got := 0
			if e != nil {
				got = len(e.Values)
			}
			return nil, fmt.Errorf("gemini embed: embedding %d has %d dimensions, want %d", i, got, Dimension)
		}
		v, err := normalize(append([]float32(nil), e.Values...))
		if err != nil {
			return nil, fmt.Errorf("gemini embed: embedding %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}
