// Package erasure is the owner taking their data out of Steward (docs/DATA.md): a
// conversation renamed, searched or deleted with everything made from it, and memory,
// documents or a whole time range forgotten — each confirmed and counted. Every deletion
// runs in the owner's one transaction under row-level security (store.Erasure); the audit
// log keeps its rows (append-only), which hold ids and outcomes, never a message's text.
package erasure

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Limits of the owner's requests; each names itself in its error.
const (
	MaxTitleRunes    = 200  // a conversation's title
	MaxQueryRunes    = 200  // a search's words
	MaxSearchResults = 100  // conversations a search returns
	MaxForgetIDs     = 1000 // ids of each kind one forget names
	// MaxRangeConversations is the most conversations one time range forgets; a larger range
	// is refused (forget it in parts) rather than cut short.
	MaxRangeConversations = 1000
)

// Canceller cancels a turn (agent.Runner.Cancel): a suspended one at once, its writes
// denied; a running one at its next step boundary.
type Canceller interface {
	Cancel(ctx context.Context, ownerID, turnID uuid.UUID) (steward.View, error)
}

// Documents deletes a document with its memory chunks (document.Service.Delete).
type Documents interface {
	Delete(ctx context.Context, ownerID, id uuid.UUID) error
}

// Service is the owner's erasure. Store and Turns are required; Documents may be nil (a
// forget naming documents is then refused).
type Service struct {
	Store     *store.Store
	Turns     Canceller
	Documents Documents
	// Zone is the owner's time zone, which groups a search's conversations by day; nil
	// means UTC.
	Zone func(ctx context.Context, ownerID uuid.UUID) (*time.Location, error)
	Now  steward.Clock
}

// Facts is the choice the owner makes about the facts extracted from a conversation they
// delete.
type Facts string

const (
	KeepFacts   Facts = "keep"   // the facts stay in memory, no longer linked to the conversation
	ForgetFacts Facts = "forget" // the facts are deleted with it
)

// FactsOf lists the current facts extracted from a conversation: what the owner is shown
// before deleting it. Another owner's or an unknown conversation is not found.
func (s *Service) FactsOf(ctx context.Context, ownerID, conversationID uuid.UUID) ([]steward.MemoryFact, error) {
	var facts []steward.MemoryFact
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if _, err := tx.Conversations.Get(ctx, conversationID); err != nil {
			return err
		}
		var err error
		facts, err = tx.Erasure.FactsOf(ctx, conversationID)
		return err
	})
	if facts == nil {
		facts = []steward.MemoryFact{}
	}
	return facts, conversationNotFound(err)
}

// Deleted is what deleting a conversation removed.
type Deleted = store.DeletedConversation

// DeleteConversation deletes a conversation and what was made from it (store.Erasure's
// DeleteConversation). Its turns that have not ended are cancelled first, each in its own
// transaction (a suspended turn's writes are journaled denied and never run); a running one
// that has not stopped yet makes this a conflict to retry. When the conversation has facts,
// the owner must choose (facts "keep" or "forget"): no choice is refused, listing how many.
// The deletion is recorded in the audit log as its counts, without a word of the
// conversation.
func (s *Service) DeleteConversation(ctx context.Context, ownerID, id uuid.UUID, facts Facts) (Deleted, error) {
	if facts != "" && facts != KeepFacts && facts != ForgetFacts {
		return Deleted{}, steward.Errorf(steward.CodeInvalid, `facts must be "keep" or "forget", not %q`, facts)
	}
	var open []uuid.UUID
	var nFacts int
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if _, err := tx.Conversations.Get(ctx, id); err != nil {
			return err
		}
		turns, err := tx.Turns.InConversation(ctx, id, 1<<20)
		if err != nil {
			return err
		}
		for _, t := range turns {
			if !t.Status.Ended() {
				open = append(open, t.ID)
			}
		}
		f, err := tx.Erasure.FactsOf(ctx, id)
		nFacts = len(f)
		return err
	})
	if err != nil {
		return Deleted{}, conversationNotFound(err)
	}
	if nFacts > 0 && facts == "" {
		return Deleted{}, steward.Errorf(steward.CodeInvalid, `%d facts were extracted from this conversation: say whether to keep or forget them (facts "keep" or "forget")`, nFacts)
	}
	for _, turnID := range open {
		if _, err := s.Turns.Cancel(ctx, ownerID, turnID); err != nil && steward.ErrorCode(err) != steward.CodeConflict && steward.ErrorCode(err) != steward.CodeNotFound {
			return Deleted{}, fmt.Errorf("cancel turn %s before deleting its conversation: %w", turnID, err)
		}
	}
	var out Deleted
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		if out, err = tx.Erasure.DeleteConversation(ctx, id, facts == ForgetFacts); err != nil {
			return err
		}
		return record(ctx, tx, "conversation_deleted", map[string]any{"conversation_id": id, "deleted": out})
	})
	return out, conversationNotFound(err)
}

// Rename sets a conversation's title (trimmed, 1 to MaxTitleRunes characters).
func (s *Service) Rename(ctx context.Context, ownerID, id uuid.UUID, title string) (steward.Conversation, error) {
	title = strings.Join(strings.Fields(title), " ")
	switch n := utf8.RuneCountInString(title); {
	case n == 0:
		return steward.Conversation{}, steward.Errorf(steward.CodeInvalid, "a title cannot be empty")
	case n > MaxTitleRunes:
		return steward.Conversation{}, steward.Errorf(steward.CodeInvalid, "a title is at most %d characters (MaxTitleRunes); this one has %d", MaxTitleRunes, n)
	}
	if err := steward.CheckText("title", title); err != nil {
		return steward.Conversation{}, err
	}
	var c steward.Conversation
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		c, err = tx.Erasure.Rename(ctx, id, title)
		return err
	})
	return c, conversationNotFound(err)
}

// Day is a day's conversations a search found, in the owner's zone, newest day first.
type Day struct {
	Date          string                  `json:"date"` // YYYY-MM-DD in the owner's zone
	Conversations []store.ConversationHit `json:"conversations"`
}

// Search finds the owner's conversations whose title or messages hold q (case-folded),
// most recently active first, grouped by the day of their last activity in the owner's zone.
func (s *Service) Search(ctx context.Context, ownerID uuid.UUID, q string) ([]Day, error) {
	q = strings.TrimSpace(q)
	switch n := utf8.RuneCountInString(q); {
	case n == 0:
		return nil, steward.Errorf(steward.CodeInvalid, "say what to search for (q)")
	case n > MaxQueryRunes:
		return nil, steward.Errorf(steward.CodeInvalid, "a search is at most %d characters (MaxQueryRunes); this one has %d", MaxQueryRunes, n)
	}
	if err := steward.CheckText("q", q); err != nil {
		return nil, err
	}
	var hits []store.ConversationHit
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		hits, err = tx.Erasure.SearchConversations(ctx, q, MaxSearchResults)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ByDay(hits, s.zone(ctx, ownerID)), nil
}

// ByDay groups conversations (most recently active first) by the day of their last
// activity in loc.
func ByDay(hits []store.ConversationHit, loc *time.Location) []Day {
	out := []Day{}
	for _, h := range hits {
		d := h.UpdatedAt.In(loc).Format(time.DateOnly)
		if len(out) == 0 || out[len(out)-1].Date != d {
			out = append(out, Day{Date: d})
		}
		out[len(out)-1].Conversations = append(out[len(out)-1].Conversations, h)
	}
	return out
}

// zone is the owner's time zone, UTC when unknown.
func (s *Service) zone(ctx context.Context, ownerID uuid.UUID) *time.Location {
	if s.Zone == nil {
		return time.UTC
	}
	loc, err := s.Zone(ctx, ownerID)
	if err != nil || loc == nil {
		return time.UTC
	}
	return loc
}

// conversationNotFound words a not_found error as the client sees it.
func conversationNotFound(err error) error {
	if err != nil && (errors.Is(err, store.ErrNotFound) || steward.ErrorCode(err) == steward.CodeNotFound) {
		return steward.Errorf(steward.CodeNotFound, "conversation not found")
	}
	return err
}
