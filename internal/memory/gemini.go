package memory

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"
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
	// caller's own retry schedule takes over.
	Backoff, MaxBackoff time.Duration
}

// Gemini embeds texts with a Gemini embedding model through google.golang.org/genai
// (batchEmbedContents), at Dimension output dimensions, L2-normalised (Gemini normalises
// only its full-size vectors). It is safe for concurrent use.
type Gemini struct {
	client              *genai.Client
	model               string
	batch, attempts     int
	backoff, maxBackoff time.Duration
}

var _ Embedder = (*Gemini)(nil)

// NewGemini returns a Gemini embedder for cfg. It makes no request.
func NewGemini(ctx context.Context, cfg GeminiConfig) (*Gemini, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("gemini embedder: API key is required")
	}
	g := &Gemini{model: cfg.Model, batch: cfg.BatchSize, attempts: cfg.MaxAttempts, backoff: cfg.Backoff, maxBackoff: cfg.MaxBackoff}
	if g.model == "" {
		g.model = GeminiModel
	}
	if g.batch <= 0 || g.batch > GeminiBatchSize {
		g.batch = GeminiBatchSize
	}
	if g.attempts <= 0 {
		g.attempts = 5
	}
	if g.backoff <= 0 {
		g.backoff = time.Second
	}
	if g.maxBackoff <= 0 {
		g.maxBackoff = 30 * time.Second
	}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		hc = &c
	}
	hc.Transport = retryAfterTransport{base: hc.Transport}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  hc,
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

// embedBatch sends one batchEmbedContents request, retrying when rate limited.
func (g *Gemini) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	contents := make([]*genai.Content, len(texts))
	for i, t := range texts {
		contents[i] = genai.NewContentFromText(t, genai.RoleUser)
	}
	dim := int32(Dimension)
	config := &genai.EmbedContentConfig{OutputDimensionality: &dim}
	for attempt := 1; ; attempt++ {
		hint := new(retryHint)
		resp, err := g.client.Models.EmbedContent(context.WithValue(ctx, retryHintKey{}, hint), g.model, contents, config)
		if err == nil {
			return vectorsOf(resp, len(texts))
		}
		wait, retry := g.retryWait(err, hint.get(), attempt)
		if !retry || attempt >= g.attempts {
			return nil, fmt.Errorf("gemini embed (attempt %d): %w", attempt, err)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return nil, fmt.Errorf("gemini embed: retry in %s would pass the deadline: %w", wait, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// retryWait says whether err is worth another attempt and how long to wait first: what the
// server asked for (hint, from Retry-After, or the error's RetryInfo), else exponential
// backoff with jitter.
func (g *Gemini) retryWait(err error, hint time.Duration, attempt int) (time.Duration, bool) {
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		return 0, false
	}
	switch apiErr.Code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
	default:
		return 0, false
	}
	if hint <= 0 {
		hint = retryInfoDelay(apiErr)
	}
	if hint > 0 {
		return hint, hint <= g.maxBackoff
	}
	d := min(g.backoff<<(attempt-1), g.maxBackoff)
	return d/2 + rand.N(d/2+1), true
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

// retryInfoDelay reads google.rpc.RetryInfo's retryDelay ("37s", "0.5s") from an API error.
func retryInfoDelay(e genai.APIError) time.Duration {
	for _, d := range e.Details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if delay, err := time.ParseDuration(s); err == nil && delay > 0 {
				return delay
			}
		}
	}
	return 0
}
