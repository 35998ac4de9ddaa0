package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/db"
)

// CreateConversation starts a conversation.
func (t Conversations) Create(ctx context.Context, title string) (steward.Conversation, error) {
	r, err := t.q.CreateConversation(ctx, db.CreateConversationParams{OwnerID: t.ownerID, Title: title})
	if err != nil {
		return steward.Conversation{}, notFound("create conversation", err)
	}
	return toConversation(r), nil
}

// GetConversation reads one conversation.
func (t Conversations) Get(ctx context.Context, id uuid.UUID) (steward.Conversation, error) {
	r, err := t.q.GetConversation(ctx, db.GetConversationParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return steward.Conversation{}, notFound("conversation "+id.String(), err)
	}
	return toConversation(r), nil
}

// ListConversations lists conversations, most recently active first.
func (t Conversations) List(ctx context.Context, limit int) ([]steward.Conversation, error) {
	rows, err := t.q.ListConversations(ctx, db.ListConversationsParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	out := make([]steward.Conversation, len(rows))
	for i, r := range rows {
		out[i] = toConversation(r)
	}
	return out, nil
}

// TouchConversation marks a conversation active, giving it a title if it has none.
func (t Conversations) Touch(ctx context.Context, id uuid.UUID, title string) error {
	n, err := t.q.TouchConversation(ctx, db.TouchConversationParams{OwnerID: t.ownerID, ID: id, Title: title})
	return rowsOrNotFound("touch conversation", n, err)
}

// DeleteConversation deletes a conversation with its turns and messages.
func (t Conversations) Delete(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.DeleteConversation(ctx, db.DeleteConversationParams{OwnerID: t.ownerID, ID: id})
	return rowsOrNotFound("delete conversation", n, err)
}

// AppendMessages appends messages of a turn to its conversation, in order, in one
// statement. Call TouchConversation first in the same transaction: it locks the conversation
// so concurrent turns cannot take the same seq.
func (t Conversations) AppendMessages(ctx context.Context, conversationID, turnID uuid.UUID, msgs ...steward.Message) error {
	p := db.InsertMessagesParams{OwnerID: t.ownerID, ConversationID: conversationID, TurnID: turnID,
		Roles: make([]string, len(msgs)), Contents: make([][]byte, len(msgs))}
	for i, m := range msgs {
		content, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("encode message: %w", err)
		}
		p.Roles[i], p.Contents[i] = string(m.Role), content
	}
	_, err := t.q.InsertMessages(ctx, p)
	return notFoundOrNil("append messages", err)
}

// Messages returns a conversation's messages in order.
func (t Conversations) Messages(ctx context.Context, conversationID uuid.UUID) ([]steward.StoredMessage, error) {
	rows, err := t.q.ListMessages(ctx, db.ListMessagesParams{OwnerID: t.ownerID, ConversationID: conversationID})
	if err != nil {
		return nil, fmt.Errorf("list messages: %w", err)
	}
	out := make([]steward.StoredMessage, len(rows))
	for i, r := range rows {
		out[i] = steward.StoredMessage{Seq: int(r.Seq), TurnID: r.TurnID, CreatedAt: r.CreatedAt}
		if err := json.Unmarshal(r.Content, &out[i].Message); err != nil {
			return nil, fmt.Errorf("decode message %d: %w", r.Seq, err)
		}
	}
	return out, nil
}

func toConversation(r db.Conversation) steward.Conversation {
	c := steward.Conversation{ID: r.ID, Title: r.Title, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if len(r.Summary) > 0 {
		var s steward.Summary
		if json.Unmarshal(r.Summary, &s) == nil {
			c.Summary = &s // an unreadable summary is none: the next turn summarises again
		}
	}
	return c
}

// PinSummary pins a conversation's summary, unless one covering more of it is pinned already.
func (t Conversations) PinSummary(ctx context.Context, id uuid.UUID, s steward.Summary) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	n, err := t.q.PinConversationSummary(ctx, db.PinConversationSummaryParams{OwnerID: t.ownerID, ID: id, ThroughSeq: int32(s.ThroughSeq), Summary: b})
	return rowsOrNotFound("pin conversation summary", n, err)
}

// EnqueueIngest queues a finished turn for memory ingestion, in the turn's transaction.
func (t Conversations) EnqueueIngest(ctx context.Context, turnID, conversationID uuid.UUID) error {
	return notFoundOrNil("enqueue ingest", t.q.EnqueueIngest(ctx, db.EnqueueIngestParams{OwnerID: t.ownerID, TurnID: turnID, ConversationID: conversationID}))
}
