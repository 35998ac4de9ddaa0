package memory

import (
	"context"
	"fmt"

	"github.com/stewardhq/steward/internal/llm"
)

// Embedder turns texts into embeddings: unit vectors (L2 norm 1) of Dimension() float32s,
// one per text, in order. Implementations are safe for concurrent use.
type Embedder interface {
	// Embed embeds texts; an empty text is an error.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Name identifies the embedding model; an offline embedder says so.
	Name() string
	// Dimension is the length of every vector Embed returns.
	Dimension() int
}

// ErrEmptyText is returned (wrapped) when asked to embed an empty text.
var ErrEmptyText = llm.ErrEmptyText

// embedOne embeds a single text.
func embedOne(ctx context.Context, e Embedder, text string) ([]float32, error) {
	vs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embedder %s returned %d vectors for 1 text", e.Name(), len(vs))
	}
	return vs[0], nil
}
