package gemini

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/retry"
)

// EmbeddingModel is the Gemini embedding model used when EmbedderConfig.Model is empty.
const EmbeddingModel = "gemini-embedding-001"

// EmbedBatchSize is the most texts one batchEmbedContents request may carry.
const EmbedBatchSize = 100

// Embedder's retry defaults: embedding runs off the hot path (the memory worker), so it
// waits longer than a chat call before the caller's own retry schedule takes over.
const (
	embedAttempts = 5
	embedMaxWait  = 30 * time.Second
)

// EmbedderConfig configures an Embedder.
type EmbedderConfig struct {
	// APIKey is the Gemini API key (GEMINI_API_KEY). Required.
	APIKey string
	// BaseURL overrides the API endpoint (a gateway, or a fake server in tests).
	BaseURL string
	// Model is the embedding model; EmbeddingModel when empty.
	Model string
	// Dimension is the length of the vectors asked for (outputDimensionality). Required:
	// memory.Dimension for Steward's memory.
	Dimension int
	// HTTPClient sends the requests; a plain http.Client when nil. Its transport is wrapped,
	// not changed.
	HTTPClient *http.Client
	// BatchSize caps the texts per request: EmbedBatchSize when 0 or larger.
	BatchSize int
	// Retry bounds the retries of a batch that is rate limited or finds the API unavailable
	// (429, 500, 502, 503, 504): the chat model's policy, with 5 attempts (when Attempts is 0)
	// and waits up to 30 s (when MaxWait is 0). A wait the server names (Retry-After, or
	// RetryInfo in the error) is honoured as is, unless it is longer than MaxWait or the
	// context's deadline: then Embed gives up at once and the caller's own retry schedule
	// takes over.
	Retry retry.Policy
}

// Embedder embeds texts with a Gemini embedding model (batchEmbedContents), at the
// configured output dimensions, L2-normalised (Gemini normalises only its full-size vectors).
// It implements memory.Embedder. It is safe for concurrent use.
type Embedder struct {
	client *genai.Client
	model  string
	dim    int
	batch  int
	retry  retry.Policy
}

// NewEmbedder returns an Embedder for cfg. It makes no request.
func NewEmbedder(ctx context.Context, cfg EmbedderConfig) (*Embedder, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("gemini embedder: API key is required")
	}
	if cfg.Dimension <= 0 {
		return nil, errors.New("gemini embedder: the dimension is required")
	}
	g := &Embedder{model: cfg.Model, dim: cfg.Dimension, batch: cfg.BatchSize, retry: policy(cfg.Retry)}
	if g.model == "" {
		g.model = EmbeddingModel
	}
	if g.batch <= 0 || g.batch > EmbedBatchSize {
		g.batch = EmbedBatchSize
	}
	if g.retry.Attempts <= 0 {
		g.retry.Attempts = embedAttempts
	}
	if g.retry.MaxWait <= 0 {
		g.retry.MaxWait = embedMaxWait
	}
	client, err := newClient(ctx, cfg.APIKey, cfg.BaseURL, retry.Client(cfg.HTTPClient))
	if err != nil {
		return nil, fmt.Errorf("gemini embedder: create client: %w", err)
	}
	g.client = client
	return g, nil
}

// Name returns the embedding model's name.
func (g *Embedder) Name() string { return g.model }

// Dimension returns the configured dimension.
func (g *Embedder) Dimension() int { return g.dim }

// Embed embeds texts in batches of at most BatchSize, in order.
func (g *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("gemini embed text %d: %w", i, llm.ErrEmptyText)
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
func (g *Embedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	contents := make([]*genai.Content, len(texts))
	for i, t := range texts {
		contents[i] = genai.NewContentFromText(t, genai.RoleUser)
	}
	dim := int32(g.dim)
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
	return vectorsOf(resp, len(texts), g.dim)
}

// vectorsOf checks and normalises the response's embeddings.
func vectorsOf(resp *genai.EmbedContentResponse, n, dim int) ([][]float32, error) {
	if resp == nil || len(resp.Embeddings) != n {
		got := 0
		if resp != nil {
			got = len(resp.Embeddings)
		}
		return nil, fmt.Errorf("gemini embed: %d embeddings for %d texts", got, n)
	}
	out := make([][]float32, n)
	for i, e := range resp.Embeddings {
		if e == nil || len(e.Values) != dim {
			got := 0
			if e != nil {
				got = len(e.Values)
			}
			return nil, fmt.Errorf("gemini embed: embedding %d has %d dimensions, want %d", i, got, dim)
		}
		v, err := llm.Normalize(append([]float32(nil), e.Values...))
		if err != nil {
			return nil, fmt.Errorf("gemini embed: embedding %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}
