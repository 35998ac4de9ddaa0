package memory

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/store"
)

// The owner's memory API, for internal/httpapi: GET/POST /v1/memory/facts,
// DELETE /v1/memory/facts/{id}, GET /v1/memory/search?q=&k=. Invalid input is a
// *steward.Error with CodeInvalid; another owner's fact is not found (steward.ErrorCode gives
// CodeNotFound).

// Fact is a remembered fact as the owner sees it, with where it came from.
type Fact struct {
	ID      uuid.UUID `json:"id"`
	Kind    string    `json:"kind"`
	Subject string    `json:"subject,omitempty"`
	Content string    `json:"content"`
	// Source is turn (the remember tool, approved), api (the owner), ingest (extracted from
	// a finished exchange) or consolidation.
	Source string `json:"source"`
	// Provenance says the same in words, e.g. "owner via API".
	Provenance string `json:"provenance"`
	// Untrusted says a turn that had read outside content stored it (docs/ARCHITECTURE.md §3).
	Untrusted bool       `json:"untrusted,omitempty"`
	TurnID    *uuid.UUID `json:"turn_id,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// NewFact is the body of POST /v1/memory/facts.
type NewFact struct {
	// Kind is fact, person, project, preference or decision; fact when empty.
	Kind    string `json:"kind,omitempty"`
	Subject string `json:"subject,omitempty"`
	Content string `json:"content"`
}

// Hit is one result of a memory search.
type Hit struct {
	ID        uuid.UUID `json:"id"`
	Kind      string    `json:"kind"` // conversation | fact | summary
	SourceID  string    `json:"source_id"`
	Text      string    `json:"text"`
	Distance  float64   `json:"distance"` // cosine distance to the query: 0 is identical
	CreatedAt time.Time `json:"created_at"`
}

// Limits of the API.
const (
	MaxFactContent = 2000 // characters, as the remember tool
	MaxFactSubject = 200
	MaxQuery       = 500
	DefaultK       = 10
	MaxK           = 50
	DefaultFacts   = 100
	MaxFacts       = 500
)

// FactKinds are the kinds a fact may have.
var FactKinds = []string{steward.FactKindFact, steward.FactKindPerson, steward.FactKindProject, steward.FactKindPreference, steward.FactKindDecision}

// Facts lists the owner's current facts, most recently confirmed first; limit 0 means
// DefaultFacts.
func (s *Service) Facts(ctx context.Context, ownerID uuid.UUID, limit int) ([]Fact, error) {
	if limit < 0 || limit > MaxFacts {
		return nil, steward.Errorf(steward.CodeInvalid, "limit must be between 1 and %d", MaxFacts)
	}
	var rows []store.MemoryFact
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		rows, err = tx.Memory.MemoryFacts(ctx, orDefault(limit, DefaultFacts))
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Fact, len(rows))
	for i, r := range rows {
		out[i] = toFact(r)
	}
	return out, nil
}

// AddFact stores a fact the owner wrote directly: not gated (the owner is the one who would
// approve it), provenance "owner via API". A fact with the same normalised kind, subject and
// content is not stored twice; created says whether this one is new. The fact is embedded
// for recall when the embedder answers; otherwise later, by the worker or Consolidate.
func (s *Service) AddFact(ctx context.Context, ownerID uuid.UUID, nf NewFact) (Fact, bool, error) {
	nf, err := nf.check()
	if err != nil {
		return Fact{}, false, err
	}
	text := FactText(nf.Kind, nf.Subject, nf.Content)
	vec, embedErr := embedOne(ctx, s.Embedder, text)
	if embedErr != nil {
		zerolog.Ctx(ctx).Warn().Err(embedErr).Msg("memory: embedding a new fact failed; it is embedded later")
	}
	var f store.MemoryFact
	var created bool
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		f, created, err = tx.Memory.RememberFact(ctx, store.NewMemoryFact{Kind: nf.Kind, Subject: nf.Subject, Content: nf.Content, Source: store.FactSourceAPI})
		if err != nil || vec == nil {
			return err
		}
		_, err = tx.Memory.AddFactChunk(ctx, f.ID, text, vec)
		return err
	})
	if err != nil {
		return Fact{}, false, err
	}
	return toFact(f), created, nil
}

// check trims and validates a new fact, filling in the default kind.
func (nf NewFact) check() (NewFact, error) {
	nf.Kind = strings.ToLower(strings.TrimSpace(nf.Kind))
	nf.Subject = strings.TrimSpace(nf.Subject)
	nf.Content = strings.TrimSpace(nf.Content)
	if nf.Kind == "" {
		nf.Kind = steward.FactKindFact
	}
	switch {
	case !slices.Contains(FactKinds, nf.Kind):
		return nf, steward.Errorf(steward.CodeInvalid, "kind must be one of %s", strings.Join(FactKinds, ", "))
	case nf.Content == "":
		return nf, steward.Errorf(steward.CodeInvalid, "content is empty")
	case steward.CheckText("content", nf.Content) != nil:
		return nf, steward.CheckText("content", nf.Content)
	case steward.CheckText("subject", nf.Subject) != nil:
		return nf, steward.CheckText("subject", nf.Subject)
	case utf8.RuneCountInString(nf.Content) > MaxFactContent:
		return nf, steward.Errorf(steward.CodeInvalid, "content is %d characters long; the limit is %d", utf8.RuneCountInString(nf.Content), MaxFactContent)
	case utf8.RuneCountInString(nf.Subject) > MaxFactSubject:
		return nf, steward.Errorf(steward.CodeInvalid, "subject is %d characters long; the limit is %d", utf8.RuneCountInString(nf.Subject), MaxFactSubject)
	}
	return nf, nil
}

// ForgetFact supersedes one of the owner's facts (and, by trigger, its embedding): it
// leaves recall and stays for the audit trail. An unknown id, or another owner's, is not
// found.
func (s *Service) ForgetFact(ctx context.Context, ownerID, factID uuid.UUID) error {
	return s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		_, err := tx.Tasks.ForgetFact(ctx, factID)
		return err
	})
}

// Search returns the k current chunks (facts, conversations, summaries) nearest in meaning
// to q; k 0 means DefaultK.
func (s *Service) Search(ctx context.Context, ownerID uuid.UUID, q string, k int) ([]Hit, error) {
	q = strings.TrimSpace(q)
	switch n := utf8.RuneCountInString(q); {
	case n == 0:
		return nil, steward.Errorf(steward.CodeInvalid, "q is empty")
	case n > MaxQuery:
		return nil, steward.Errorf(steward.CodeInvalid, "q is %d characters long; the limit is %d", n, MaxQuery)
	case !utf8.ValidString(q):
		return nil, steward.Errorf(steward.CodeInvalid, "q is not valid UTF-8")
	case k < 0 || k > MaxK:
		return nil, steward.Errorf(steward.CodeInvalid, "k must be between 1 and %d", MaxK)
	}
	vec, err := embedOne(ctx, s.Embedder, q)
	if err != nil {
		return nil, fmt.Errorf("search memory: %w", err)
	}
	var chunks []store.MemoryChunk
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		chunks, err = tx.Memory.NearestChunks(ctx, vec, orDefault(k, DefaultK))
		return err
	})
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, len(chunks))
	for i, c := range chunks {
		hits[i] = Hit{ID: c.ID, Kind: c.SourceKind, SourceID: c.SourceID, Text: c.Text, Distance: c.Distance, CreatedAt: c.CreatedAt}
	}
	return hits, nil
}

// ParseK parses the k query parameter of a search: "" is 0 (the default).
func ParseK(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	k, err := strconv.Atoi(s)
	if err != nil || k < 1 || k > MaxK {
		return 0, steward.Errorf(steward.CodeInvalid, "k must be a number between 1 and %d", MaxK)
	}
	return k, nil
}

func toFact(r store.MemoryFact) Fact {
	return Fact{ID: r.ID, Kind: r.Kind, Subject: r.Subject, Content: r.Content, Source: r.Source,
		Provenance: provenance(r), Untrusted: !store.Trusted(r.Origin), TurnID: r.TurnID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// provenance says in words where a fact came from.
func provenance(r store.MemoryFact) string {
	if !store.Trusted(r.Origin) {
		return "remembered in a turn that read outside content (untrusted: the words may not be the owner's)"
	}
	switch r.Source {
	case store.FactSourceAPI:
		return "owner via API"
	case store.FactSourceTurn:
		return "remembered in a turn (the remember tool, through the write gate)"
	case store.FactSourceIngest:
		return "learned from a conversation"
	case store.FactSourceConsolidation:
		return "memory consolidation"
	}
	return r.Source
}
