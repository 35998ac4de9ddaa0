package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/steward"
)

// Erasure is the owner's own data taken out of Steward (docs/DATA.md): a conversation
// deleted with everything made from it, memory forgotten by id or by time, conversations
// renamed and searched. Every statement names the transaction's owner as well as running
// under row-level security.
type Erasure struct{ *conn }

// FactsOf lists the current facts extracted from (or remembered in) the turns of a
// conversation, newest first: what the owner chooses to keep or forget when deleting it.
func (t Erasure) FactsOf(ctx context.Context, conversationID uuid.UUID) ([]MemoryFact, error) {
	rows, err := t.tx.Query(ctx, `SELECT f.id, f.kind, f.subject, f.content, f.source, f.origin, f.turn_id, f.created_at, f.updated_at, f.superseded_at
		FROM memory_facts f JOIN turns t ON t.owner_id = f.owner_id AND t.id = f.turn_id
		WHERE f.owner_id = $1 AND t.conversation_id = $2 AND f.superseded_at IS NULL
		ORDER BY f.created_at DESC, f.id`, t.ownerID, conversationID)
	if err != nil {
		return nil, fmt.Errorf("facts of conversation: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (MemoryFact, error) {
		var f MemoryFact
		err := r.Scan(&f.ID, &f.Kind, &f.Subject, &f.Content, &f.Source, &f.Origin, &f.TurnID, &f.CreatedAt, &f.UpdatedAt, &f.SupersededAt)
		return f, err
	})
}

// DeletedConversation counts what deleting one conversation removed.
type DeletedConversation struct {
	Turns         int `json:"turns"`
	Messages      int `json:"messages"`
	ToolCalls     int `json:"tool_calls"`
	MemoryChunks  int `json:"memory_chunks"`
	FactsForgot   int `json:"facts_forgotten"`
	FactsKept     int `json:"facts_kept"`
	Notifications int `json:"notifications"`
}

// deleteConversationSQL removes, in one statement, what was made from a conversation and
// then the conversation (its turns, messages, tool calls, approval links and household
// votes go by their foreign keys). $1 owner, $2 conversation, $3 forget its facts.
//
// The pending ingestion goes first (outbox): an ingestion in flight holds that row from its
// completion to its commit, so the delete waits for it, and the chunks read after see what
// it stored. Data-modifying CTEs all see the statement's snapshot, so the chunk delete is a
// statement of its own after this one (deleteChunksSQL).
const deleteConversationSQL = `
WITH turn_ids AS (
    SELECT id FROM turns WHERE owner_id = $1 AND conversation_id = $2
), facts AS (
    DELETE FROM memory_facts f USING turn_ids t
    WHERE $3::bool AND f.owner_id = $1 AND f.turn_id = t.id RETURNING f.id, f.superseded_at
), fact_chunks AS (
    DELETE FROM memory_chunks c USING facts f
    WHERE c.owner_id = $1 AND c.source_kind = 'fact' AND c.source_id = f.id::text RETURNING 1
), kept AS (
    UPDATE memory_facts f SET turn_id = NULL FROM turn_ids t
    WHERE NOT $3::bool AND f.owner_id = $1 AND f.turn_id = t.id RETURNING f.superseded_at
), notes AS (
    DELETE FROM notifications n USING turn_ids t WHERE n.owner_id = $1 AND n.turn_id = t.id RETURNING 1
), updates AS (
    DELETE FROM telegram_updates u USING turn_ids t WHERE u.owner_id = $1 AND u.turn_id = t.id RETURNING 1
), chats AS (
    UPDATE telegram_chats SET conversation_id = NULL WHERE owner_id = $1 AND conversation_id = $2 RETURNING 1
), msgs AS (
    SELECT count(*) AS n FROM messages WHERE owner_id = $1 AND conversation_id = $2
), calls AS (
    SELECT count(*) AS n FROM tool_calls c JOIN turn_ids t ON c.turn_id = t.id WHERE c.owner_id = $1
), conv AS (
    DELETE FROM conversations WHERE owner_id = $1 AND id = $2 RETURNING 1
)
SELECT (SELECT count(*) FROM conv)::int, (SELECT count(*) FROM turn_ids)::int, (SELECT n FROM msgs)::int,
    (SELECT n FROM calls)::int, (SELECT count(*) FROM fact_chunks)::int, (SELECT count(*) FROM facts WHERE superseded_at IS NULL)::int,
    (SELECT count(*) FROM kept WHERE superseded_at IS NULL)::int, (SELECT count(*) FROM notes)::int,
    (SELECT count(*) FROM updates)::int + (SELECT count(*) FROM chats)::int`

// deleteChunksSQL removes the memory chunks made from a conversation's turns and its
// summaries; $3 are the turn ids as text.
const deleteChunksSQL = `
WITH gone AS (
    DELETE FROM memory_chunks WHERE owner_id = $1 AND (
        (source_kind = 'conversation' AND source_id = ANY ($3::text[]))
        OR (source_kind = 'summary' AND source_id = $2::text))
    RETURNING 1)
SELECT count(*)::int FROM gone`

// DeleteConversation deletes a conversation with its turns, messages, tool calls, approval
// links, the memory chunks made from it, its pending memory ingestion, its notifications and
// Telegram updates; its facts are deleted too when forget, else kept (unlinked from its
// turns). A turn of it still running, resuming or continuing is a conflict: the caller
// cancels them first. Another owner's or an unknown conversation is ErrNotFound. The audit
// log is left as it is (append-only).
func (t Erasure) DeleteConversation(ctx context.Context, id uuid.UUID, forget bool) (DeletedConversation, error) {
	var out DeletedConversation
	// The conversation's row first: a turn starting in it (TouchConversation) waits, and so
	// does this for one in progress.
	var turnIDs []string
	rows, err := t.tx.Query(ctx, `SELECT t.id::text, t.status FROM conversations c
		LEFT JOIN turns t ON t.owner_id = c.owner_id AND t.conversation_id = c.id
		WHERE c.owner_id = $1 AND c.id = $2 FOR UPDATE OF c`, t.ownerID, id)
	if err != nil {
		return out, fmt.Errorf("lock conversation: %w", err)
	}
	found := false
	var busy []string
	for rows.Next() {
		var tid, status *string
		if err := rows.Scan(&tid, &status); err != nil {
			rows.Close()
			return out, fmt.Errorf("lock conversation: %w", err)
		}
		found = true
		if tid == nil {
			continue
		}
		turnIDs = append(turnIDs, *tid)
		if s := steward.Status(*status); !s.Ended() && s != steward.StatusSuspended {
			busy = append(busy, *tid)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("lock conversation: %w", err)
	}
	if !found {
		return out, fmt.Errorf("delete conversation: %w", ErrNotFound)
	}
	if len(busy) > 0 {
		return out, steward.Errorf(steward.CodeConflict, "a turn of this conversation is still running (%s): it was asked to stop; delete the conversation again once it has", strings.Join(busy, ", "))
	}
	// Lock its turns too: a confirm's claim of a suspended turn waits, then finds it gone.
	if _, err := t.tx.Exec(ctx, `SELECT 1 FROM turns WHERE owner_id = $1 AND conversation_id = $2 FOR UPDATE`, t.ownerID, id); err != nil {
		return out, fmt.Errorf("lock turns: %w", err)
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM memory_outbox WHERE owner_id = $1 AND conversation_id = $2`, t.ownerID, id); err != nil {
		return out, fmt.Errorf("delete pending ingestion: %w", err)
	}
	var chunks int
	if err := t.tx.QueryRow(ctx, deleteChunksSQL, t.ownerID, id, turnIDs).Scan(&chunks); err != nil {
		return out, fmt.Errorf("delete memory chunks: %w", err)
	}
	var convs, telegram int
	err = t.tx.QueryRow(ctx, deleteConversationSQL, t.ownerID, id, forget).Scan(&convs, &out.Turns, &out.Messages,
		&out.ToolCalls, &out.MemoryChunks, &out.FactsForgot, &out.FactsKept, &out.Notifications, &telegram)
	if err != nil {
		return out, notFound("delete conversation", err)
	}
	if convs == 0 {
		return out, fmt.Errorf("delete conversation: %w", ErrNotFound)
	}
	out.MemoryChunks += chunks
	return out, nil
}

// Rename sets a conversation's title.
func (t Erasure) Rename(ctx context.Context, id uuid.UUID, title string) (steward.Conversation, error) {
	var c steward.Conversation
	err := t.tx.QueryRow(ctx, `UPDATE conversations SET title = $3 WHERE owner_id = $1 AND id = $2
		RETURNING id, title, created_at, updated_at`, t.ownerID, id, title).Scan(&c.ID, &c.Title, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		return c, notFound("rename conversation "+id.String(), err)
	}
	return c, nil
}

// ConversationHit is a conversation a search found: where the words were found (the title,
// or a message's text around them).
type ConversationHit struct {
	steward.Conversation
	// Snippet is the message text the words were found in (empty for a title match).
	Snippet string `json:"snippet,omitempty"`
}

// SearchConversations finds the owner's conversations whose title or a message's text (the
// owner's and Steward's words, not thoughts or recalled context) contains q, case-folded;
// most recently active first, at most limit.
func (t Erasure) SearchConversations(ctx context.Context, q string, limit int) ([]ConversationHit, error) {
	pattern := "%" + likeEscaper.Replace(q) + "%"
	rows, err := t.tx.Query(ctx, `SELECT c.id, c.title, c.created_at, c.updated_at, coalesce(m.text, '')
		FROM conversations c
		LEFT JOIN LATERAL (SELECT message_text(content) AS text FROM messages
			WHERE owner_id = c.owner_id AND conversation_id = c.id AND message_text(content) ILIKE $2
			ORDER BY seq LIMIT 1) m ON true
		WHERE c.owner_id = $1 AND (c.title ILIKE $2 OR m.text IS NOT NULL)
		ORDER BY c.updated_at DESC, c.id LIMIT $3`, t.ownerID, pattern, limit)
	if err != nil {
		return nil, fmt.Errorf("search conversations: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ConversationHit, error) {
		var h ConversationHit
		err := r.Scan(&h.ID, &h.Title, &h.CreatedAt, &h.UpdatedAt, &h.Snippet)
		return h, err
	})
}

// likeEscaper escapes LIKE's wildcards (and its escape character) in a search's words.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// ConversationsBetween lists the ids of the owner's conversations active in [from, to): one
// with a message or a turn in it, or created in it.
func (t Erasure) ConversationsBetween(ctx context.Context, from, to time.Time) ([]uuid.UUID, error) {
	rows, err := t.tx.Query(ctx, `SELECT c.id FROM conversations c WHERE c.owner_id = $1 AND (
			(c.created_at >= $2 AND c.created_at < $3)
			OR EXISTS (SELECT 1 FROM turns t WHERE t.owner_id = $1 AND t.conversation_id = c.id AND t.created_at >= $2 AND t.created_at < $3))
		ORDER BY c.created_at, c.id`, t.ownerID, from, to)
	if err != nil {
		return nil, fmt.Errorf("conversations between: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// ForgetChunks deletes memory chunks by id; it returns how many it deleted. A fact's chunk
// takes its fact with it (the chunk is how the fact is found).
func (t Erasure) ForgetChunks(ctx context.Context, ids []uuid.UUID) (chunks, facts int, err error) {
	err = t.tx.QueryRow(ctx, `WITH gone AS (
			DELETE FROM memory_chunks WHERE owner_id = $1 AND id = ANY ($2::uuid[]) RETURNING source_kind, source_id),
		facts AS (
			DELETE FROM memory_facts f USING gone g
			WHERE f.owner_id = $1 AND g.source_kind = 'fact' AND f.id::text = g.source_id RETURNING 1)
		SELECT (SELECT count(*) FROM gone)::int, (SELECT count(*) FROM facts)::int`, t.ownerID, ids).Scan(&chunks, &facts)
	if err != nil {
		return 0, 0, fmt.Errorf("forget chunks: %w", err)
	}
	return chunks, facts, nil
}

// ForgetFacts deletes facts by id (current or superseded) with their chunks; it returns how
// many facts it deleted.
func (t Erasure) ForgetFacts(ctx context.Context, ids []uuid.UUID) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `WITH gone AS (
			DELETE FROM memory_facts WHERE owner_id = $1 AND id = ANY ($2::uuid[]) RETURNING id),
		chunks AS (
			DELETE FROM memory_chunks c USING gone g
			WHERE c.owner_id = $1 AND c.source_kind = 'fact' AND c.source_id = g.id::text RETURNING 1)
		SELECT (SELECT count(*) FROM gone)::int + 0 * (SELECT count(*) FROM chunks)::int`, t.ownerID, ids).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("forget facts: %w", err)
	}
	return n, nil
}

// MemoryBetween lists the ids of the owner's memory created in [from, to) that no
// conversation carries away: facts, and chunks other than a conversation's, a summary's or a
// document's (those go with their conversation or document).
func (t Erasure) MemoryBetween(ctx context.Context, from, to time.Time) (facts, chunks []uuid.UUID, err error) {
	rows, err := t.tx.Query(ctx, `SELECT id FROM memory_facts WHERE owner_id = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at, id`,
		t.ownerID, from, to)
	if err != nil {
		return nil, nil, fmt.Errorf("facts between: %w", err)
	}
	if facts, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID]); err != nil {
		return nil, nil, fmt.Errorf("facts between: %w", err)
	}
	rows, err = t.tx.Query(ctx, `SELECT id FROM memory_chunks WHERE owner_id = $1 AND created_at >= $2 AND created_at < $3
		AND source_kind NOT IN ('conversation', 'summary', 'document', 'fact') ORDER BY created_at, id`, t.ownerID, from, to)
	if err != nil {
		return nil, nil, fmt.Errorf("chunks between: %w", err)
	}
	chunks, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, nil, fmt.Errorf("chunks between: %w", err)
	}
	return facts, chunks, nil
}

// DocumentsBetween lists the ids of the owner's documents created in [from, to).
func (t Erasure) DocumentsBetween(ctx context.Context, from, to time.Time) ([]uuid.UUID, error) {
	rows, err := t.tx.Query(ctx, `SELECT id FROM documents WHERE owner_id = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at, id`,
		t.ownerID, from, to)
	if err != nil {
		return nil, fmt.Errorf("documents between: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// OwnedIDs are the ids a forget deletes: each the owner's, each once, facts and chunks
// apart from those the conversations carry away (counted in ConversationFacts and
// ConversationChunks).
type OwnedIDs struct {
	Conversations, Facts, Chunks, Documents []uuid.UUID
	ConversationFacts, ConversationChunks   int
	// DocumentChunks are the chunks of the documents.
	DocumentChunks int
}

// ownedSQL: $1 owner, $2 conversations, $3 facts, $4 chunks, $5 documents.
const ownedSQL = `
WITH convs AS (
    SELECT id FROM conversations WHERE owner_id = $1 AND id = ANY ($2::uuid[])
), turn_ids AS (
    SELECT t.id FROM turns t JOIN convs c ON t.conversation_id = c.id WHERE t.owner_id = $1
), conv_facts AS (
    SELECT f.id FROM memory_facts f JOIN turn_ids t ON f.turn_id = t.id WHERE f.owner_id = $1
), conv_chunks AS (
    SELECT c.id FROM memory_chunks c WHERE c.owner_id = $1 AND (
        (c.source_kind = 'conversation' AND c.source_id IN (SELECT id::text FROM turn_ids))
        OR (c.source_kind = 'summary' AND c.source_id IN (SELECT id::text FROM convs))
        OR (c.source_kind = 'fact' AND c.source_id IN (SELECT id::text FROM conv_facts)))
)
SELECT
    ARRAY(SELECT id FROM convs ORDER BY id),
    ARRAY(SELECT id FROM memory_facts WHERE owner_id = $1 AND id = ANY ($3::uuid[]) AND id NOT IN (SELECT id FROM conv_facts) ORDER BY id),
    ARRAY(SELECT id FROM memory_chunks WHERE owner_id = $1 AND id = ANY ($4::uuid[]) AND id NOT IN (SELECT id FROM conv_chunks) ORDER BY id),
    ARRAY(SELECT id FROM documents WHERE owner_id = $1 AND id = ANY ($5::uuid[]) ORDER BY id),
    (SELECT count(*) FROM conv_facts WHERE id IN (SELECT id FROM memory_facts WHERE owner_id = $1 AND superseded_at IS NULL))::int,
    (SELECT count(*) FROM conv_chunks)::int,
    (SELECT count(*) FROM memory_chunks WHERE owner_id = $1 AND source_kind = 'document'
        AND source_id IN (SELECT id::text FROM documents WHERE owner_id = $1 AND id = ANY ($5::uuid[])))::int`

// Owned resolves a forget's ids to the owner's own (OwnedIDs).
func (t Erasure) Owned(ctx context.Context, convs, facts, chunks, docs []uuid.UUID) (OwnedIDs, error) {
	var o OwnedIDs
	err := t.tx.QueryRow(ctx, ownedSQL, t.ownerID, orNone(convs), orNone(facts), orNone(chunks), orNone(docs)).Scan(
		&o.Conversations, &o.Facts, &o.Chunks, &o.Documents, &o.ConversationFacts, &o.ConversationChunks, &o.DocumentChunks)
	if err != nil {
		return OwnedIDs{}, fmt.Errorf("resolve ids to forget: %w", err)
	}
	return o, nil
}

// orNone is ids, or an empty array rather than NULL.
func orNone(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}

// ForgetDocumentChunks deletes the memory chunks of documents (deleting a document only
// supersedes them); it returns how many it deleted.
func (t Erasure) ForgetDocumentChunks(ctx context.Context, documentIDs []uuid.UUID) (int, error) {
	ids := make([]string, len(documentIDs))
	for i, id := range documentIDs {
		ids[i] = id.String()
	}
	var n int
	err := t.tx.QueryRow(ctx, `WITH gone AS (DELETE FROM memory_chunks WHERE owner_id = $1 AND source_kind = 'document'
		AND source_id = ANY ($2::text[]) RETURNING 1) SELECT count(*)::int FROM gone`, t.ownerID, ids).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("forget document chunks: %w", err)
	}
	return n, nil
}
