package llm

import (
	"errors"
	"fmt"
	"math"
)

// ErrEmptyText is returned (wrapped) by an embedder asked to embed an empty text.
var ErrEmptyText = errors.New("empty text")

// Normalize scales the embedding v to unit length (L2 norm 1) in place and returns it; a zero
// or non-finite vector is an error (cosine distance is undefined for it).
func Normalize(v []float32) ([]float32, error) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	norm := math.Sqrt(sum)
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return nil, fmt.Errorf("embedding has norm %v", norm)
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v, nil
}
