-- Memory: recall, the ingestion outbox, consolidation. (memory.sql holds the tools' queries.)

-- name: DueIngests :many
-- Cross-owner (the Door, through memory_outbox's directory policy): outbox items due now
-- and not leased. The worker claims each one inside its owner's transaction.
SELECT id, owner_id FROM memory_outbox
WHERE done_at IS NULL AND failed_at IS NULL AND next_attempt_at <= sqlc.arg(now)
    AND (locked_until IS NULL OR locked_until <= sqlc.arg(now))
ORDER BY next_attempt_at, id
LIMIT sqlc.arg(max_rows);

-- name: IngestBacklog :one
-- Cross-owner (the Door): ingestion backlog for steward doctor.
SELECT count(*) FILTER (WHERE done_at IS NULL AND failed_at IS NULL)::bigint AS pending,
    count(*) FILTER (WHERE failed_at IS NOT NULL)::bigint AS failed,
    coalesce(extract(epoch FROM now() - min(created_at) FILTER (WHERE done_at IS NULL AND failed_at IS NULL)), 0)::float8 AS oldest_pending_seconds,
    coalesce((array_agg(last_error ORDER BY failed_at DESC) FILTER (WHERE failed_at IS NOT NULL))[1], '')::text AS last_error
FROM memory_outbox;

-- name: OwnerIngestBacklog :one
SELECT count(*) FILTER (WHERE done_at IS NULL AND failed_at IS NULL)::bigint AS pending,
    count(*) FILTER (WHERE failed_at IS NOT NULL)::bigint AS failed,
    coalesce(extract(epoch FROM now() - min(created_at) FILTER (WHERE done_at IS NULL AND failed_at IS NULL)), 0)::float8 AS oldest_pending_seconds,
    coalesce((array_agg(last_error ORDER BY failed_at DESC) FILTER (WHERE failed_at IS NOT NULL))[1], '')::text AS last_error
FROM memory_outbox WHERE owner_id = sqlc.arg(owner_id);

-- name: FailedIngests :many
SELECT id, turn_id, conversation_id, attempts, last_error, failed_at, created_at FROM memory_outbox
WHERE owner_id = sqlc.arg(owner_id) AND failed_at IS NOT NULL
ORDER BY failed_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: ClaimIngest :one
-- Leases a due item and counts the attempt; attempts is the lease's fencing token.
UPDATE memory_outbox
SET attempts = attempts + 1, locked_until = sqlc.arg(locked_until)::timestamptz
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id)
    AND done_at IS NULL AND failed_at IS NULL AND next_attempt_at <= sqlc.arg(now)
    AND (locked_until IS NULL OR locked_until <= sqlc.arg(now))
RETURNING id, turn_id, conversation_id, attempts;

-- name: CompleteIngest :execrows
UPDATE memory_outbox SET done_at = now(), locked_until = NULL, last_error = ''
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND attempts = sqlc.arg(attempts)
    AND done_at IS NULL AND failed_at IS NULL;

-- name: FailIngest :execrows
UPDATE memory_outbox
SET last_error = sqlc.arg(last_error), locked_until = NULL,
    next_attempt_at = sqlc.arg(retry_at),
    failed_at = CASE WHEN sqlc.arg(give_up)::bool THEN now() END
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND attempts = sqlc.arg(attempts)
    AND done_at IS NULL AND failed_at IS NULL;

-- name: ReleaseIngest :execrows
-- Gives an interrupted attempt back: the lease ends now and the attempt does not count.
UPDATE memory_outbox SET locked_until = NULL, attempts = attempts - 1
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND attempts = sqlc.arg(attempts)
    AND done_at IS NULL AND failed_at IS NULL;

-- name: NearestChunks :many
-- The k current chunks nearest to the query (cosine), optionally of some kinds only, found by
-- nearest_chunks (migrations/00040_retention.sql), which plans the search at each call with
-- the owner known. Under hnsw.iterative_scan the index keeps scanning until k rows pass the
-- filters; with relaxed_order the caller re-sorts by distance.
SELECT c.id, c.source_kind, c.source_id, c.text, c.created_at, c.origin,
    (c.embedding <=> sqlc.arg(query)::vector)::float8 AS distance
FROM nearest_chunks(sqlc.arg(query)::vector, sqlc.arg(owner_id)::uuid, sqlc.arg(kinds)::text[], sqlc.arg(max_rows)::int) c;

-- name: AddFactChunk :execrows
-- A fact's embedding; a no-op when the fact already has a current one, or is no longer
-- current itself. The fact row is locked (FOR SHARE) so a concurrent forget either waits for
-- this insert, and its trigger supersedes the new chunk, or wins and nothing is inserted.
INSERT INTO memory_chunks (owner_id, source_kind, source_id, text, embedding, origin)
SELECT f.owner_id, 'fact', f.id::text, sqlc.arg(text), sqlc.arg(embedding), f.origin
FROM memory_facts f
WHERE f.owner_id = sqlc.arg(owner_id) AND f.id = sqlc.arg(fact_id) AND f.superseded_at IS NULL
FOR SHARE OF f
ON CONFLICT (owner_id, source_id) WHERE source_kind = 'fact' AND superseded_at IS NULL DO NOTHING;

-- name: UnembeddedFacts :many
SELECT f.* FROM memory_facts f
WHERE f.owner_id = sqlc.arg(owner_id) AND f.superseded_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM memory_chunks c
        WHERE c.owner_id = f.owner_id AND c.source_kind = 'fact' AND c.source_id = f.id::text
            AND c.superseded_at IS NULL)
ORDER BY f.created_at, f.id LIMIT sqlc.arg(max_rows);

-- name: MatchFacts :many
-- Current facts sharing whole words with the query, most shared words first.
SELECT f.*, m.hits::bigint AS hits FROM memory_facts f
CROSS JOIN LATERAL (
    SELECT count(*) AS hits FROM unnest(sqlc.arg(words)::text[]) AS w
    WHERE lower(f.subject || ' ' || f.content) ~ ('\m' || w || '\M')) m
WHERE f.owner_id = sqlc.arg(owner_id) AND f.superseded_at IS NULL AND m.hits > 0
ORDER BY m.hits DESC, f.updated_at DESC, f.id LIMIT sqlc.arg(max_rows);

-- name: SupersedeNearDuplicates :many
-- Supersedes every current chunk (facts aside: they follow their fact) that has a newer
-- current chunk closer than max_distance, so the newest of a group of near-duplicates stays.
UPDATE memory_chunks AS d SET superseded_at = now()
WHERE d.owner_id = sqlc.arg(owner_id) AND d.id IN (
    SELECT c.id FROM memory_chunks c
    CROSS JOIN LATERAL (
        SELECT (n.embedding <=> c.embedding) AS distance FROM memory_chunks n
        WHERE n.owner_id = c.owner_id AND n.superseded_at IS NULL AND n.source_kind <> 'fact'
            AND (n.created_at, n.id) > (c.created_at, c.id)
        ORDER BY n.embedding::halfvec(768) <=> c.embedding::halfvec(768) LIMIT 1) nearest
    WHERE c.owner_id = sqlc.arg(owner_id) AND c.superseded_at IS NULL AND c.source_kind <> 'fact'
        AND nearest.distance < sqlc.arg(max_distance)::float8
    LIMIT sqlc.arg(max_rows))
RETURNING d.id;

-- name: StaleConversations :many
-- Conversations whose current conversation chunks are all older than the cutoff and at
-- least min_chunks in number: candidates for a summary.
SELECT t.conversation_id, count(*)::bigint AS chunks
FROM memory_chunks c JOIN turns t ON t.owner_id = c.owner_id AND t.id::text = c.source_id
WHERE c.owner_id = sqlc.arg(owner_id) AND c.source_kind = 'conversation' AND c.superseded_at IS NULL
GROUP BY t.conversation_id
HAVING max(c.created_at) < sqlc.arg(cutoff)::timestamptz AND count(*) >= sqlc.arg(min_chunks)::bigint
ORDER BY max(c.created_at), t.conversation_id
LIMIT sqlc.arg(max_rows);

-- name: ConversationChunks :many
SELECT c.id, c.text, c.created_at, c.origin
FROM memory_chunks c JOIN turns t ON t.owner_id = c.owner_id AND t.id::text = c.source_id
WHERE c.owner_id = sqlc.arg(owner_id) AND c.source_kind = 'conversation' AND c.superseded_at IS NULL
    AND t.conversation_id = sqlc.arg(conversation_id)
ORDER BY c.created_at, c.id
LIMIT sqlc.arg(max_rows);

-- name: SupersedeChunks :execrows
UPDATE memory_chunks SET superseded_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND id = ANY (sqlc.arg(ids)::uuid[]) AND superseded_at IS NULL;

-- name: CurrentChunkTexts :many
-- Which of the given texts the owner already has as a current chunk of this kind and origin
-- (their md5 finds them through memory_chunks_text; the text itself is compared too).
SELECT DISTINCT text FROM memory_chunks
WHERE owner_id = sqlc.arg(owner_id) AND superseded_at IS NULL
    AND source_kind = sqlc.arg(source_kind) AND origin = sqlc.arg(origin)
    AND md5(text) = ANY (ARRAY(SELECT md5(t) FROM unnest(sqlc.arg(texts)::text[]) AS t))
    AND text = ANY (sqlc.arg(texts)::text[]);

-- name: LockMemoryText :exec
-- Serialises one owner's conversation-chunk writes for the rest of the transaction, so two
-- concurrent ingestions of the same words store them once (InsertChunkOnce).
SELECT pg_advisory_xact_lock(hashtextextended(sqlc.arg(owner_id)::text, 11));

-- name: InsertChunkOnce :execrows
-- InsertChunk unless the owner already has a current chunk of this kind and origin with the
-- same text. Run after LockMemoryText, in a later statement, so the check sees what a
-- concurrent ingestion committed while this one waited.
INSERT INTO memory_chunks (owner_id, source_kind, source_id, text, embedding, origin)
SELECT sqlc.arg(owner_id), sqlc.arg(source_kind), sqlc.arg(source_id), sqlc.arg(text), sqlc.arg(embedding), sqlc.arg(origin)
WHERE NOT EXISTS (SELECT 1 FROM memory_chunks c
    WHERE c.owner_id = sqlc.arg(owner_id) AND c.superseded_at IS NULL
        AND c.source_kind = sqlc.arg(source_kind) AND c.origin = sqlc.arg(origin)
        AND md5(c.text) = md5(sqlc.arg(text)) AND c.text = sqlc.arg(text));
