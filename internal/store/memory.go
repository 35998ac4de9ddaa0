package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/stewardhq/steward/db"
)

// Memory: recall queries, facts with their provenance, the ingestion outbox and
// consolidation, for internal/memory. (The tools' memory methods are in tasks.go.)

// Fact sources: where a fact came from.
const (
	FactSourceTurn          = "turn"          // the remember tool, approved in a turn
	FactSourceAPI           = "api"           // the owner, through the API
	FactSourceIngest        = "ingest"        // extracted from a finished exchange
	FactSourceConsolidation = "consolidation" // written by consolidation
)

// MemoryFact is a structured fact with its provenance.
type MemoryFact = steward.MemoryFact

// NewMemoryFact is a fact to store; it is deduplicated on steward.FactKey.
type NewMemoryFact struct {
	Kind, Subject, Content string
	Source                 string // a FactSource* constant
	TurnID                 *uuid.UUID
}

// Chunk origins: who wrote a chunk's text (memory_chunks.origin). A chunk mixing texts takes
// the least trusted one's origin.
const (
	OriginOwner    = "owner"    // the owner's own words (chat, CLI), and facts
	OriginSchedule = "schedule" // a scheduled job's instruction, and Steward's answer to it
	OriginModel    = "model"    // Steward's own words (summaries of owner conversations)
	OriginTool     = "tool"     // a tool's output
	OriginWebhook  = "webhook"  // a webhook delivery's payload, from outside
	OriginDocument = "document" // an uploaded document
	OriginWeb      = "web"      // a fetched web page
)

// Trusted reports whether text of origin o speaks for the owner or Steward; any other text
// is untrusted data, and a turn that recalls it is gated like a webhook turn.
func Trusted(o string) bool {
	return o == OriginOwner || o == OriginSchedule || o == OriginModel
}

// MemoryChunk is a remembered text found by meaning.
type MemoryChunk = steward.MemoryChunk

// RememberFact stores a fact with its source, or finds the current fact with the same key;
// created says which.
func (t Memory) RememberFact(ctx context.Context, f NewMemoryFact) (MemoryFact, bool, error) {
	if f.Kind == "" {
		f.Kind = steward.FactKindFact
	}
	row, err := t.q.UpsertFact(ctx, db.UpsertFactParams{
		OwnerID: t.ownerID, Kind: f.Kind, Subject: f.Subject, Content: f.Content,
		Key: steward.FactKey(f.Kind, f.Subject, f.Content), Source: f.Source, TurnID: nullUUID(f.TurnID),
		Origin: OriginOwner,
	})
	if err != nil {
		return MemoryFact{}, false, notFound("remember fact", err)
	}
	return MemoryFact{ID: row.ID, Kind: row.Kind, Subject: row.Subject, Content: row.Content, Source: row.Source,
		Origin: row.Origin, TurnID: ptrUUID(row.TurnID), CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt, SupersededAt: row.SupersededAt}, row.Created, nil
}

// MemoryFacts lists current facts with their provenance, most recently confirmed first.
func (t Memory) MemoryFacts(ctx context.Context, limit int) ([]MemoryFact, error) {
	rows, err := t.q.ListFacts(ctx, db.ListFactsParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list facts: %w", err)
	}
	return toMemoryFacts(rows), nil
}

// MatchFacts lists current facts sharing whole words (lower case, no regular-expression
// characters) with words, the most shared first.
func (t Memory) MatchFacts(ctx context.Context, words []string, limit int) ([]MemoryFact, error) {
	if len(words) == 0 {
		return nil, nil
	}
	rows, err := t.q.MatchFacts(ctx, db.MatchFactsParams{OwnerID: t.ownerID, Words: words, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("match facts: %w", err)
	}
	out := make([]MemoryFact, len(rows))
	for i, r := range rows {
		out[i] = toMemoryFact(db.MemoryFact{ID: r.ID, Kind: r.Kind, Subject: r.Subject, Content: r.Content, Source: r.Source,
			Origin: r.Origin, TurnID: r.TurnID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, SupersededAt: r.SupersededAt})
	}
	return out, nil
}

// UnembeddedFacts lists current facts that have no current embedding, oldest first.
func (t Memory) UnembeddedFacts(ctx context.Context, limit int) ([]MemoryFact, error) {
	rows, err := t.q.UnembeddedFacts(ctx, db.UnembeddedFactsParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("unembedded facts: %w", err)
	}
	return toMemoryFacts(rows), nil
}

// AddFactChunk stores a fact's embedding, unless the fact already has a current one; added
// says which.
func (t Memory) AddFactChunk(ctx context.Context, factID uuid.UUID, text string, embedding []float32) (added bool, err error) {
	n, err := t.q.AddFactChunk(ctx, db.AddFactChunkParams{OwnerID: t.ownerID, FactID: factID, Text: text, Embedding: pgvector.NewVector(embedding)})
	if err != nil {
		return false, notFound("add fact chunk", err)
	}
	return n == 1, nil
}

// KnownChunkTexts says which of texts the owner already has as a current chunk of this
// source kind and origin: ingestion stores an exchange's words once.
func (t Memory) KnownChunkTexts(ctx context.Context, sourceKind, origin string, texts []string) (map[string]bool, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	rows, err := t.q.CurrentChunkTexts(ctx, db.CurrentChunkTextsParams{OwnerID: t.ownerID, SourceKind: sourceKind,
		Origin: origin, Texts: texts})
	if err != nil {
		return nil, fmt.Errorf("known chunk texts: %w", err)
	}
	known := make(map[string]bool, len(rows))
	for _, r := range rows {
		known[r] = true
	}
	return known, nil
}

// AddChunkOnce stores a chunk unless the owner already has a current one of the same kind,
// origin and text; added says which. Concurrent calls for the same owner are serialised
// until the transaction ends, so the same words are stored once.
func (t Memory) AddChunkOnce(ctx context.Context, sourceKind, sourceID, origin, text string, embedding []float32) (added bool, err error) {
	if err := t.q.LockMemoryText(ctx, t.ownerID.String()); err != nil {
		return false, fmt.Errorf("add chunk once: %w", err)
	}
	n, err := t.q.InsertChunkOnce(ctx, db.InsertChunkOnceParams{OwnerID: t.ownerID, SourceKind: sourceKind,
		SourceID: sourceID, Origin: origin, Text: text, Embedding: pgvector.NewVector(embedding)})
	if err != nil {
		return false, notFound("add chunk once", err)
	}
	return n == 1, nil
}

// NearestChunks returns the k current chunks nearest to query by cosine distance, nearest
// first, of the given source kinds (none = all). WithOwner's iterative index scan keeps
// looking until k of this owner's rows are found.
func (t Memory) NearestChunks(ctx context.Context, query []float32, k int, kinds ...string) ([]MemoryChunk, error) {
	rows, err := t.q.NearestChunks(ctx, db.NearestChunksParams{OwnerID: t.ownerID, Query: pgvector.NewVector(query),
		Kinds: append([]string{}, kinds...), MaxRows: int32(k)})
	if err != nil {
		return nil, fmt.Errorf("nearest chunks: %w", err)
	}
	out := make([]MemoryChunk, len(rows))
	for i, r := range rows {
		out[i] = MemoryChunk(r)
	}
	// relaxed_order: an iterative scan may return rows slightly out of order.
	slices.SortStableFunc(out, func(a, b MemoryChunk) int { return cmp.Compare(a.Distance, b.Distance) })
	return out, nil
}

// SupersedeNearDuplicates supersedes, at most limit at a time, every current chunk (fact
// chunks aside) that has a newer current chunk closer than maxDistance, and returns their ids.
func (t Memory) SupersedeNearDuplicates(ctx context.Context, maxDistance float64, limit int) ([]uuid.UUID, error) {
	ids, err := t.q.SupersedeNearDuplicates(ctx, db.SupersedeNearDuplicatesParams{OwnerID: t.ownerID, MaxDistance: maxDistance, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("supersede near duplicates: %w", err)
	}
	return ids, nil
}

// StaleConversation is a conversation whose memory is old enough to summarise.
type StaleConversation struct {
	ConversationID uuid.UUID
	Chunks         int
}

// StaleConversations lists conversations whose current conversation chunks number at least
// minChunks and are all older than before.
func (t Memory) StaleConversations(ctx context.Context, before time.Time, minChunks, limit int) ([]StaleConversation, error) {
	rows, err := t.q.StaleConversations(ctx, db.StaleConversationsParams{OwnerID: t.ownerID, Cutoff: before,
		MinChunks: int64(minChunks), MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("stale conversations: %w", err)
	}
	out := make([]StaleConversation, len(rows))
	for i, r := range rows {
		out[i] = StaleConversation{ConversationID: r.ConversationID, Chunks: int(r.Chunks)}
	}
	return out, nil
}

// ConversationChunks lists a conversation's current conversation chunks, oldest first.
func (t Memory) ConversationChunks(ctx context.Context, conversationID uuid.UUID, limit int) ([]MemoryChunk, error) {
	rows, err := t.q.ConversationChunks(ctx, db.ConversationChunksParams{OwnerID: t.ownerID, ConversationID: conversationID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("conversation chunks: %w", err)
	}
	out := make([]MemoryChunk, len(rows))
	for i, r := range rows {
		out[i] = MemoryChunk{ID: r.ID, SourceKind: "conversation", SourceID: conversationID.String(), Text: r.Text,
			CreatedAt: r.CreatedAt, Origin: r.Origin}
	}
	return out, nil
}

// SupersedeChunks takes every chunk of ids out of recall. It is ErrConflict, and nothing
// changes once the caller rolls back, unless every one of them was current.
func (t Memory) SupersedeChunks(ctx context.Context, ids []uuid.UUID) error {
	n, err := t.q.SupersedeChunks(ctx, db.SupersedeChunksParams{OwnerID: t.ownerID, Ids: ids})
	if err != nil {
		return fmt.Errorf("supersede chunks: %w", err)
	}
	if int(n) != len(ids) {
		return fmt.Errorf("supersede chunks: %d of %d were current: %w", n, len(ids), ErrConflict)
	}
	return nil
}

func toMemoryFact(r db.MemoryFact) MemoryFact {
	return MemoryFact{ID: r.ID, Kind: r.Kind, Subject: r.Subject, Content: r.Content, Source: r.Source,
		Origin: r.Origin, TurnID: ptrUUID(r.TurnID), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, SupersededAt: r.SupersededAt}
}

func toMemoryFacts(rows []db.MemoryFact) []MemoryFact {
	out := make([]MemoryFact, len(rows))
	for i, r := range rows {
		out[i] = toMemoryFact(r)
	}
	return out
}

// EmbeddingDimension is the dimension of memory_chunks.embedding, read from the catalog
// (0 when the column has none). memory.CheckDimension compares it with the embedder's.
func (s *Store) EmbeddingDimension(ctx context.Context) (int, error) {
	return embeddingDimension(ctx, s.pool)
}

// EmbeddingDimensionOf is EmbeddingDimension through one connection (for steward doctor).
func EmbeddingDimensionOf(ctx context.Context, conn *pgx.Conn) (int, error) {
	return embeddingDimension(ctx, conn)
}

func embeddingDimension(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var typmod int
	err := q.QueryRow(ctx, `SELECT a.atttypmod FROM pg_attribute a
		WHERE a.attrelid = to_regclass('memory_chunks') AND a.attname = 'embedding' AND NOT a.attisdropped`).Scan(&typmod)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, errors.New("memory_chunks.embedding does not exist (run: steward migrate up)")
	}
	if err != nil {
		return 0, fmt.Errorf("read embedding dimension: %w", err)
	}
	return max(typmod, 0), nil // pgvector keeps the dimension as the type modifier; -1 = none
}
