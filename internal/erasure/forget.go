package erasure

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Forget names what the owner wants forgotten: conversations, facts, memory chunks (a
// search's results) and documents by id, and everything of a time range [From, To).
// Without Confirm nothing is deleted: the answer counts what would be.
type Forget struct {
	Conversations []uuid.UUID `json:"conversations,omitempty"`
	Facts         []uuid.UUID `json:"facts,omitempty"`
	Chunks        []uuid.UUID `json:"chunks,omitempty"`
	Documents     []uuid.UUID `json:"documents,omitempty"`
	From          *time.Time  `json:"from,omitempty"`
	To            *time.Time  `json:"to,omitempty"`
	Confirm       bool        `json:"confirm"`
}

// Forgotten counts what a forget deleted (Done) or, unconfirmed, would delete.
type Forgotten struct {
	Done          bool `json:"done"`
	Conversations int  `json:"conversations"`
	MemoryChunks  int  `json:"memory_chunks"`
	Facts         int  `json:"facts"`
	Documents     int  `json:"documents"`
}

// Forget deletes what f names, or counts it when f is not confirmed. A time range takes the
// conversations active in it (with their facts: forgetting a time is forgetting what was
// said then), the facts and chunks created in it and the documents added in it. Ids of
// another owner or unknown ones count nothing. Conversations go one by one through
// DeleteConversation; the rest in one transaction.
func (s *Service) Forget(ctx context.Context, ownerID uuid.UUID, f Forget) (Forgotten, error) {
	if err := f.check(); err != nil {
		return Forgotten{}, err
	}
	if len(f.Documents) > 0 && s.Documents == nil {
		return Forgotten{}, steward.Errorf(steward.CodeNotFound, "documents are not configured on this deployment")
	}
	plan, err := s.plan(ctx, ownerID, f)
	if err != nil || !f.Confirm {
		return plan.count(), err
	}
	out := Forgotten{Done: true}
	for _, id := range plan.conversations {
		d, err := s.DeleteConversation(ctx, ownerID, id, ForgetFacts)
		if steward.ErrorCode(err) == steward.CodeNotFound {
			continue // deleted meanwhile
		}
		if err != nil {
			return out, err
		}
		out.Conversations++
		out.MemoryChunks += d.MemoryChunks
		out.Facts += d.FactsForgot
	}
	for _, id := range plan.documents {
		err := s.Documents.Delete(ctx, ownerID, id)
		if steward.ErrorCode(err) == steward.CodeNotFound {
			continue
		}
		if err != nil {
			return out, err
		}
		out.Documents++
	}
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		chunks, facts, err := tx.Erasure.ForgetChunks(ctx, plan.chunks)
		if err != nil {
			return err
		}
		n, err := tx.Erasure.ForgetFacts(ctx, plan.facts)
		if err != nil {
			return err
		}
		docChunks, err := tx.Erasure.ForgetDocumentChunks(ctx, plan.documents)
		if err != nil {
			return err
		}
		out.MemoryChunks += chunks + docChunks
		out.Facts += facts + n
		return record(ctx, tx, "memory_forgotten", out)
	})
	return out, err
}

// check refuses a forget naming nothing, too much, or a range that is not one.
func (f Forget) check() error {
	switch {
	case (f.From == nil) != (f.To == nil):
		return steward.Errorf(steward.CodeInvalid, "a time range needs both from and to")
	case f.From != nil && !f.From.Before(*f.To):
		return steward.Errorf(steward.CodeInvalid, "a time range's from must be before its to")
	case f.From == nil && len(f.Conversations)+len(f.Facts)+len(f.Chunks)+len(f.Documents) == 0:
		return steward.Errorf(steward.CodeInvalid, "say what to forget: conversations, facts, chunks, documents or a time range (from, to)")
	}
	for what, ids := range map[string][]uuid.UUID{"conversations": f.Conversations, "facts": f.Facts, "chunks": f.Chunks, "documents": f.Documents} {
		if len(ids) > MaxForgetIDs {
			return steward.Errorf(steward.CodeInvalid, "one forget names at most %d %s (MaxForgetIDs); this one names %d", MaxForgetIDs, what, len(ids))
		}
	}
	return nil
}

// forgetPlan is what a forget deletes, by id, each id once.
type forgetPlan struct {
	conversations, facts, chunks, documents []uuid.UUID
	// conversationChunks and conversationFacts are what the conversations (and the
	// documents: their chunks) carry away.
	conversationChunks, conversationFacts int
}

func (p forgetPlan) count() Forgotten {
	return Forgotten{Conversations: len(p.conversations), Documents: len(p.documents),
		MemoryChunks: len(p.chunks) + p.conversationChunks, Facts: len(p.facts) + p.conversationFacts}
}

// plan finds, in one transaction, the owner's ids among those f names and those of its range.
func (s *Service) plan(ctx context.Context, ownerID uuid.UUID, f Forget) (forgetPlan, error) {
	var p forgetPlan
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		p = forgetPlan{}
		convs, facts, chunks, docs := f.Conversations, f.Facts, f.Chunks, f.Documents
		if f.From != nil {
			in, err := tx.Erasure.ConversationsBetween(ctx, *f.From, *f.To)
			if err != nil {
				return err
			}
			if len(in) > MaxRangeConversations {
				return steward.Errorf(steward.CodeInvalid, "this time range holds %d conversations, more than one forget takes (MaxRangeConversations, %d): forget it in parts", len(in), MaxRangeConversations)
			}
			convs = append(convs, in...)
			fs, cs, err := tx.Erasure.MemoryBetween(ctx, *f.From, *f.To)
			if err != nil {
				return err
			}
			facts, chunks = append(facts, fs...), append(chunks, cs...)
			ds, err := tx.Erasure.DocumentsBetween(ctx, *f.From, *f.To)
			if err != nil {
				return err
			}
			docs = append(docs, ds...)
		}
		return p.resolve(ctx, tx, convs, facts, chunks, docs)
	})
	return p, err
}

// resolve keeps the owner's ids, each once, and counts what the conversations carry away.
func (p *forgetPlan) resolve(ctx context.Context, tx *store.Tx, convs, facts, chunks, docs []uuid.UUID) error {
	counts, err := tx.Erasure.Owned(ctx, convs, facts, chunks, docs)
	if err != nil {
		return err
	}
	p.conversations, p.facts, p.chunks, p.documents = counts.Conversations, counts.Facts, counts.Chunks, counts.Documents
	p.conversationChunks, p.conversationFacts = counts.ConversationChunks+counts.DocumentChunks, counts.ConversationFacts
	return nil
}

// record appends an audit event of the owner's (no turn) with data: counts and ids only.
func record(ctx context.Context, tx *store.Tx, kind string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s: %w", kind, err)
	}
	return tx.Journal.AppendEvents(ctx, nil, []steward.NewEvent{{Kind: kind, Data: b}})
}
