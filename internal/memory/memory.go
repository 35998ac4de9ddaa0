// Package memory is what Steward remembers for each owner, in Postgres under row-level
// security: structured facts (memory_facts) and semantic chunks with embeddings
// (memory_chunks, pgvector HNSW, cosine).
//
// It closes the loop at both ends of a turn. Before the model reasons, Service.Recall
// embeds the incoming message and returns one delimited memory block (the nearest chunks and
// the most relevant facts, within a token budget) that the loop puts on the turn's user
// message, after the byte-stable prompt prefix. After the turn, the Worker drains the
// ingestion outbox the loop wrote in the turn's own transaction: it embeds the exchange into
// chunks and asks a fast model, through a forced tool call, for durable facts, off the hot
// path, with leases, retries and backoff. Consolidate supersedes near-duplicate chunks and
// summarises old conversations; superseded rows leave recall and stay for the audit trail.
//
// Embedders (the Embedder port) turn text into Dimension-dimensional unit vectors: Gemini
// (gemini-embedding-001, internal/llm/gemini's Embedder, wired by internal/app) for real
// use, and an offline hashed n-gram embedder for the demo model and tests.
package memory

import (
	"context"
	"fmt"

	"github.com/stewardhq/steward/internal/store"
)

// Dimension is the dimension of every embedding: memory_chunks.embedding is vector(768),
// and embedders are asked for (or produce) exactly this many dimensions.
const Dimension = 768

// Source kinds of chunks.
const (
	// KindConversation is an exchange of a finished turn; its source id is the turn's id.
	KindConversation = "conversation"
	// KindFact is a fact's embedding; its source id is the fact's id. It leaves recall with
	// the fact (a trigger supersedes it when the fact is forgotten).
	KindFact = "fact"
	// KindSummary summarises an old conversation; its source id is the conversation's id.
	KindSummary = "summary"
	// KindDocument is a piece of a stored document (internal/document); its text starts with
	// the document's name.
	KindDocument = "document"
)

// CheckDimension checks, at start, that the embedding column, Dimension and the embedder
// agree. A mismatch means stored vectors and new ones cannot be compared.
func CheckDimension(ctx context.Context, st *store.Store, e Embedder) error {
	if e.Dimension() != Dimension {
		return fmt.Errorf("embedder %s produces %d dimensions, memory stores %d", e.Name(), e.Dimension(), Dimension)
	}
	got, err := st.EmbeddingDimension(ctx)
	if err != nil {
		return err
	}
	if got != Dimension {
		return fmt.Errorf("memory_chunks.embedding is vector(%d) but this binary embeds %d dimensions", got, Dimension)
	}
	return nil
}
