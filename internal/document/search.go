package document

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// A document's text is chunked into memory chunks of source kind "document" (its id the
// source id) and origin store.OriginDocument — untrusted: recall puts them in a data block
// of their own and a turn that recalls one is untrusted (docs/ARCHITECTURE.md §3).
const (
	// SourceKind is the memory_chunks.source_kind of a document's chunks.
	SourceKind = "document"
	// ChunkRunes bounds the text of one chunk (its header aside).
	ChunkRunes = 1000
	// MaxChunks bounds the chunks of one document: text past them is stored and readable
	// but not searched or recalled.
	MaxChunks = 2000
	// Bounds of Search.
	DefaultResults = 5
	MaxResults     = 20
	maxQueryRunes  = 500
)

// Embedder turns texts into embeddings, one unit vector per text in order (the memory
// service's embedder, memory.Embedder).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// chunk is a piece of a document's text, embedded.
type chunk struct {
	text   string
	vector []float32
}

// header introduces a chunk's text: the document's name and, for a document of several
// sections, the section (`report.pdf (page 3):`), so a recalled chunk says where it is from.
func header(name, section string) string {
	if section == "" {
		return name + ":\n"
	}
	return name + " (" + section + "):\n"
}

// embedChunks cuts the sections of a document named name into chunks of at most ChunkRunes
// (at most MaxChunks) and embeds them. It is called before the transaction that stores
// them: no client I/O inside a transaction (docs/ARCHITECTURE.md §2). Without an embedder
// there is nothing to chunk.
func (s *Service) embedChunks(ctx context.Context, name string, sections []doctext.Section) ([]chunk, error) {
	if s.Embedder == nil {
		return nil, nil
	}
	var texts []string
	for _, sec := range sections {
		label := sec.Label
		if len(sections) == 1 {
			label = ""
		}
		for _, piece := range split(sec.Text, ChunkRunes) {
			if len(texts) == MaxChunks {
				break
			}
			texts = append(texts, header(name, label)+piece)
		}
	}
	if len(texts) == 0 {
		return nil, nil
	}
	vecs, err := s.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed document %q: %w", name, err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed document %q: %d vectors for %d texts", name, len(vecs), len(texts))
	}
	out := make([]chunk, len(texts))
	for i := range texts {
		out[i] = chunk{text: texts[i], vector: vecs[i]}
	}
	return out, nil
}

// split cuts s into pieces of at most n runes, at the last paragraph break, else line
// break, else sentence end, else space in the second half of each piece; a piece with none
// is cut hard.
func split(s string, n int) []string {
	var out []string
	for {
		s = strings.TrimSpace(s)
		if s == "" {
			return out
		}
		if utf8.RuneCountInString(s) <= n {
			return append(out, s)
		}
		head, count := s, 0
		for i := range s {
			if count == n {
				head = s[:i]
				break
			}
			count++
		}
		cut := len(head)
		for _, sep := range []string{"\n\n", "\n", ". ", "? ", "! ", " "} {
			if i := strings.LastIndex(head, sep); i >= len(head)/2 {
				cut = i + len(sep)
				break
			}
		}
		out = append(out, strings.TrimSpace(s[:cut]))
		s = s[cut:]
	}
}

// Search returns up to max (0: DefaultResults) pieces of the owner's documents nearest in
// meaning to query, nearest first, with their document's name and section. The query is
// embedded before the owner transaction opens.
func (s *Service) Search(ctx context.Context, ownerID uuid.UUID, query string, max int) ([]steward.DocumentHit, error) {
	query = strings.TrimSpace(query)
	if max == 0 {
		max = DefaultResults
	}
	switch n := utf8.RuneCountInString(query); {
	case !utf8.ValidString(query):
		return nil, steward.Errorf(steward.CodeInvalid, "the query is not valid UTF-8")
	case n == 0:
		return nil, steward.Errorf(steward.CodeInvalid, "the query is empty")
	case n > maxQueryRunes:
		return nil, steward.Errorf(steward.CodeInvalid, "the query is %d characters long; the limit is %d", n, maxQueryRunes)
	case max < 1 || max > MaxResults:
		return nil, steward.Errorf(steward.CodeInvalid, "max_results must be from 1 to %d", MaxResults)
	case s.Embedder == nil:
		return nil, fmt.Errorf("search documents: no embedder")
	}
	vecs, err := s.Embedder.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("search documents: %w", err)
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("search documents: %d vectors for 1 query", len(vecs))
	}
	var out []steward.DocumentHit
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		out = nil
		chunks, err := tx.Memory.NearestChunks(ctx, vecs[0], max, SourceKind)
		if err != nil {
			return err
		}
		names := map[uuid.UUID]string{}
		for _, c := range chunks {
			id, err := uuid.Parse(c.SourceID)
			if err != nil {
				continue
			}
			name, ok := names[id]
			if !ok {
				doc, _, err := tx.Documents.Get(ctx, id, 0, 1)
				if err != nil {
					continue // deleted: its chunks leave with it
				}
				name, names[id] = doc.Name, doc.Name
			}
			hit := steward.DocumentHit{DocumentID: id, Name: name, Text: c.Text}
			if rest, ok := strings.CutPrefix(c.Text, name+" ("); ok {
				if section, text, ok := strings.Cut(rest, "):\n"); ok {
					hit.Section, hit.Text = section, text
				}
			} else if text, ok := strings.CutPrefix(c.Text, name+":\n"); ok {
				hit.Text = text
			}
			out = append(out, hit)
		}
		return nil
	})
	return out, err
}
