-- name: UpsertFact :one
INSERT INTO memory_facts (owner_id, kind, subject, content, key, source, turn_id, origin)
VALUES (sqlc.arg(owner_id), sqlc.arg(kind), sqlc.arg(subject), sqlc.arg(content), sqlc.arg(key),
    sqlc.arg(source), sqlc.narg(turn_id), sqlc.arg(origin))
ON CONFLICT (owner_id, key) WHERE superseded_at IS NULL
DO UPDATE SET updated_at = now()
RETURNING *, (xmax = 0)::bool AS created;

-- name: GetFact :one
SELECT * FROM memory_facts WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: ListFacts :many
SELECT * FROM memory_facts WHERE owner_id = sqlc.arg(owner_id) AND superseded_at IS NULL
ORDER BY updated_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: SearchFacts :many
-- Keyword search: every word of the query must appear in the subject or content.
SELECT * FROM memory_facts
WHERE owner_id = sqlc.arg(owner_id) AND superseded_at IS NULL
    AND NOT EXISTS (
        SELECT 1 FROM unnest(sqlc.arg(words)::text[]) AS w
        WHERE strpos(lower(subject || ' ' || content), lower(w)) = 0)
ORDER BY updated_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: ForgetFact :one
UPDATE memory_facts SET superseded_at = now(), updated_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND superseded_at IS NULL
RETURNING *;

-- name: RestoreFact :execrows
-- Undoes forget: the fact is current again (a unique violation when the same fact was
-- remembered since).
UPDATE memory_facts SET superseded_at = NULL, updated_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND superseded_at IS NOT NULL;

-- name: InsertChunk :one
INSERT INTO memory_chunks (owner_id, source_kind, source_id, text, embedding, origin)
VALUES (sqlc.arg(owner_id), sqlc.arg(source_kind), sqlc.arg(source_id), sqlc.arg(text), sqlc.arg(embedding), sqlc.arg(origin))
RETURNING id, owner_id, source_kind, source_id, text, created_at, superseded_at;

-- name: RecordModelCall :exec
-- A model call made for the owner outside a turn (memory's extraction and consolidation).
INSERT INTO model_calls (owner_id, kind, model, input_tokens, output_tokens, cost_micros)
VALUES (sqlc.arg(owner_id), sqlc.arg(kind), sqlc.arg(model), sqlc.arg(input_tokens), sqlc.arg(output_tokens), sqlc.arg(cost_micros));
