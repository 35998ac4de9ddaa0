package memory

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// backfillFacts is how many not-yet-embedded facts one ingestion embeds on the side (facts
// the remember tool stored during turns, and any whose embedding failed).
const backfillFacts = 20

// pending is a claimed item's exchange as load read it: the chunks memory does not hold yet
// and the facts still without an embedding. nil when there is nothing to do.
type pending struct {
	in       store.Ingest
	ex       exchange
	chunks   []string
	backfill []store.MemoryFact
}

// load reads, in tx, the exchange of claimed item in: the turn's messages less any chunk
// whose exact words are already current in memory, and a few unembedded facts. When that
// leaves nothing to embed, extract or store, it completes the item in tx and returns nil.
func (s *Service) load(ctx context.Context, tx *store.Tx, in store.Ingest) (*pending, error) {
	// The reads that need nothing read before them share a round trip (store.Tx.Together).
	var msgs []steward.StoredMessage
	var turn steward.Turn
	var backfill []store.MemoryFact
	err := tx.Together(ctx, func() (err error) {
		msgs, err = tx.Conversations.Messages(ctx, in.ConversationID)
		return err
	}, func() (err error) {
		turn, err = tx.Turns.Get(ctx, in.TurnID)
		return err
	}, func() (err error) {
		backfill, err = tx.Memory.UnembeddedFacts(ctx, backfillFacts)
		return err
	})
	if err != nil {
		return nil, err
	}
	p := &pending{in: in, ex: exchangeOf(msgs, in.TurnID), backfill: backfill}
	p.ex.from, p.ex.origin = originsOf(turn)
	// Words already in memory (same kind and origin) are not stored again: recall would
	// return them twice, and the copy would cost an embedding and an index insertion.
	all := p.ex.chunks()
	known, err := tx.Memory.KnownChunkTexts(ctx, KindConversation, p.ex.origin, all)
	if err != nil {
		return nil, err
	}
	p.chunks = slices.DeleteFunc(all, func(c string) bool { return known[c] })
	if len(p.chunks) == 0 && len(p.backfill) == 0 {
		return nil, tx.Outbox.CompleteIngest(ctx, in)
	}
	return p, nil
}

// ingest finishes what load left: it asks the model for facts (unless memory held the
// exchange word for word, whose facts were read then), embeds the new chunks, the new facts
// and the unembedded facts in one Embed call, and writes everything in one transaction that
// also completes the item — fenced by the claim, so a worker that lost its lease writes
// nothing. Any error leaves the item for the caller to fail or release.
func (s *Service) ingest(ctx context.Context, ownerID uuid.UUID, p *pending) (ingested, error) {
	in, ex, chunks, backfill := p.in, p.ex, p.chunks, p.backfill
	var err error
	var facts []NewFact
	var sp *spend
	if len(chunks) > 0 { // an exchange memory already holds word for word had its facts read then
		if facts, sp, err = s.extractFacts(ctx, ex); err != nil {
			return ingested{}, err
		}
	}

	texts := append([]string(nil), chunks...)
	for _, f := range facts {
		texts = append(texts, FactText(f.Kind, f.Subject, f.Content))
	}
	for _, f := range backfill {
		texts = append(texts, FactText(f.Kind, f.Subject, f.Content))
	}
	vecs, err := s.embedAll(ctx, in.TurnID, texts)
	if err != nil {
		return ingested{}, err
	}

	var out ingested
	turnID := in.TurnID
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		out = ingested{}
		if err := tx.Outbox.CompleteIngest(ctx, in); err != nil {
			return err
		}
		if err := s.record(ctx, tx, sp); err != nil {
			return err
		}
		for i, c := range chunks {
			added, err := tx.Memory.AddChunkOnce(ctx, KindConversation, turnID.String(), ex.origin, c, vecs[i])
			if err != nil {
				return err
			}
			if added {
				out.chunks++
			}
		}
		for i, nf := range facts {
			f, created, err := tx.Memory.RememberFact(ctx, store.NewMemoryFact{Kind: nf.Kind, Subject: nf.Subject, Content: nf.Content,
				Source: store.FactSourceIngest, TurnID: &turnID})
			if err != nil {
				return err
			}
			if created {
				out.facts++
			}
			if _, err := tx.Memory.AddFactChunk(ctx, f.ID, texts[len(chunks)+i], vecs[len(chunks)+i]); err != nil {
				return err
			}
		}
		for i, f := range backfill {
			j := len(chunks) + len(facts) + i
			added, err := tx.Memory.AddFactChunk(ctx, f.ID, texts[j], vecs[j])
			if err != nil {
				return err
			}
			if added {
				out.embedded++
			}
		}
		return nil
	})
	if err != nil {
		return ingested{}, fmt.Errorf("store memory of turn %s: %w", in.TurnID, err)
	}
	return out, nil
}

// embedAll embeds the texts of a turn's memory, a vector for each.
func (s *Service) embedAll(ctx context.Context, turnID uuid.UUID, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	vecs, err := s.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed turn %s: %w", turnID, err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed turn %s: %d vectors for %d texts", turnID, len(vecs), len(texts))
	}
	return vecs, nil
}

// ingested counts what one ingestion added.
type ingested struct {
	chunks, facts, embedded int
}
