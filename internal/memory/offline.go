package memory

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/stewardhq/steward/internal/llm"
)

// OfflineName is the name the offline embedder reports, so that no one mistakes it for a
// semantic model.
const OfflineName = "offline-ngram-768 (offline, hashed character n-grams, not a semantic model)"

// Offline is a deterministic, network-free embedder: each text is lower-cased and
// NFKC-normalised, split into words, and the words and their character 3- and 4-grams are
// hashed into Dimension signed buckets (the hashing trick), weighted by log-scaled counts,
// then L2-normalised. Texts sharing words and word pieces are close; meaning is not
// understood. It is used by the demo model and by tests. The zero value is ready to use.
type Offline struct{}

var _ Embedder = Offline{}

// Name returns OfflineName.
func (Offline) Name() string { return OfflineName }

// Dimension returns Dimension.
func (Offline) Dimension() int { return Dimension }

// Embed embeds each text; it never fails except on an empty text or a cancelled context.
func (o Offline) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v, err := offlineVector(t)
		if err != nil {
			return nil, fmt.Errorf("offline embed text %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

// Feature weights: whole words count more than their pieces.
const (
	wordWeight  = 1.0
	gram3Weight = 0.5
	gram4Weight = 0.5
)

func offlineVector(text string) ([]float32, error) {
	words := strings.FieldsFunc(strings.ToLower(norm.NFKC.String(text)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	if len(words) == 0 {
		if strings.TrimSpace(text) == "" {
			return nil, ErrEmptyText
		}
		words = []string{strings.TrimSpace(text)} // punctuation only: embed it as one word
	}
	counts := map[string]float64{}
	for _, w := range words {
		counts["w:"+w] += wordWeight
		padded := []rune("<" + w + ">")
		for _, n := range []int{3, 4} {
			weight := gram3Weight
			if n == 4 {
				weight = gram4Weight
			}
			for i := 0; i+n <= len(padded); i++ {
				counts["g:"+string(padded[i:i+n])] += weight
			}
		}
	}
	// Sorted, so that sums are added in one order and the vector is bit-for-bit stable.
	features := slices.Sorted(maps.Keys(counts))
	acc := make([]float64, Dimension)
	for _, feature := range features {
		c := counts[feature]
		h := fnv.New64a()
		h.Write([]byte(feature))
		sum := h.Sum64()
		bucket := int(sum % Dimension)
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		acc[bucket] += sign * (1 + math.Log(c))
	}
	v := make([]float32, Dimension)
	for i, x := range acc {
		v[i] = float32(x)
	}
	return llm.Normalize(v)
}
